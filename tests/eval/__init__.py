"""Tests of ragline.eval."""
