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


@pytest.fixture(autouse=True)
def _keep_blas_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ragline search`` run in-process sets OPENBLAS_NUM_THREADS (for the numpy it would load next); monkeypatch
    records the variable as it is now and puts it back after each test, so no later child process inherits it."""
    if "OPENBLAS_NUM_THREADS" in os.environ:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", os.environ["OPENBLAS_NUM_THREADS"])
    else:
        monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
