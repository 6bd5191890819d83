"""The answer benchmarks import: every name they take from ragline exists (a rename breaks them here, not in a run)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.parametrize("script", ["qa_support", "common"])
def test_benchmark_script_imports(script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    module = importlib.import_module(script)
    assert module.__file__ == str(BENCHMARKS / f"{script}.py")
    sys.modules.pop(script, None)
