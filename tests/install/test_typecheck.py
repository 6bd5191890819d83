"""The type-check baseline: it may only shrink, and the public API has no entry in it."""

from __future__ import annotations

import json
import sys
import tomllib
from collections import Counter

from .wheel import REPO

sys.path.insert(0, str(REPO / "tools"))
import mypy_baseline  # noqa: E402


def test_a_module_with_more_errors_than_its_baseline_fails_and_fewer_passes() -> None:
    """Planted fault: compare() reading `>=` for `>` failed the unchanged counts here."""
    baseline = {"src/a.py": 2, "src/b.py": 1}
    assert mypy_baseline.compare(Counter({"src/a.py": 2, "src/b.py": 1}), baseline) == ([], [])
    assert mypy_baseline.compare(Counter({"src/a.py": 3}), baseline) == (["src/a.py"], ["src/b.py"])
    assert mypy_baseline.compare(Counter({"src/c.py": 1}), baseline)[0] == ["src/c.py"]


def test_the_strictly_typed_public_api_has_no_baseline_errors() -> None:
    """The modules pyproject.toml checks strictly (the index, the pipeline, readers, retrievers, the config)
    carry no allowance: any error there fails `make typecheck`."""
    overrides = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]["overrides"]
    strict = next(o["module"] for o in overrides if o.get("disallow_untyped_defs"))
    assert {"ragline.index.store", "ragline.answer.pipeline", "ragline.config", "ragline.retrieve.base"} <= set(strict)
    baseline = json.loads((REPO / "tools/mypy_baseline.json").read_text())
    paths = {"src/" + m.replace(".", "/") + ".py" for m in strict} | {
        "src/" + m.replace(".", "/") + "/__init__.py" for m in strict
    }
    assert not paths & baseline.keys()
    assert (REPO / "src/ragline/py.typed").is_file()
