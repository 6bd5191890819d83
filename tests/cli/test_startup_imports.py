"""A sub-command imports only what it runs on: no scipy, numba or torch for a BM25 search."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ragline.cli import build_parser, command_module

SRC = Path(__file__).resolve().parents[2] / "src"


def test_command_module_maps_the_typed_name() -> None:
    assert command_module(["search", "q"]) == "search"
    assert command_module(["eval", "data"]) == "evaluate"
    assert command_module(["--version"]) is None
    assert command_module(["nonsense"]) is None


def test_a_named_command_parses_as_with_every_command_registered() -> None:
    argv = ["eval", "data", "--retriever", "bm25"]
    assert vars(build_parser(argv).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_bm25_search_loads_no_heavy_library(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Receipts\n\nKeep every receipt above the threshold.\n")
    env = {**os.environ, "PYTHONPATH": str(SRC), "RAGLINE_CACHE": str(tmp_path / "cache")}
    index = str(tmp_path / "idx")
    run = [sys.executable, "-m", "ragline"]
    subprocess.run([*run, "index", str(tmp_path / "docs"), "--index", index, "--embedder", "none"], env=env, check=True)
    probe = (
        "import sys, json; from ragline.cli import main; "
        f"code = main(['search', 'receipt threshold', '--index', {index!r}, '--output', 'json']); "
        "print(json.dumps(sorted(m for m in ('scipy', 'numba', 'torch', 'sentence_transformers', 'transformers') "
        "if m in sys.modules)), file=sys.stderr); sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["hits"], done.stdout
    loaded = json.loads(done.stderr.strip().splitlines()[-1])
    assert loaded == [], loaded
