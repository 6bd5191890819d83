"""Tests of the built package: the wheel, its installs, the quickstart."""
