"""Shared fixtures: where the real benchmark data lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def bench_root() -> Path:
    """``$RAGLINE_BENCH``, else the ``shared/bench`` folder beside the repository."""
    return Path(os.environ.get("RAGLINE_BENCH") or REPO.parent / "shared" / "bench")


@pytest.fixture(scope="session")
def bench() -> Path:
    root = bench_root()
    if not (root / "scifact").is_dir():
        pytest.skip(f"benchmark data not found at {root} (set RAGLINE_BENCH)")
    return root
