"""Tests of ragline doctor."""
