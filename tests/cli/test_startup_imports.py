"""A sub-command imports only what it runs on: no scipy, numba or torch for a BM25 search."""

from __future__ import annotations

import functools
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


# Loaded by no BM25 search: the heavy libraries of other commands and retrievers.
# The Office and PDF-layout loaders' libraries too: they are imported when such a file is read, never to search.
HEAVY = ("scipy", "numba", "torch", "sentence_transformers", "transformers", "onnxruntime",
         "docx", "pptx", "openpyxl", "extract_msg", "pdfplumber")  # fmt: skip
# Loaded by no BM25 search that prints a table, since the start-up work made them lazy: provenance's git call
# (JSON output only), the package-resource reader, the vector index's logging and temporary files, and the
# answering side of version handling (change questions, conflicts, the context).
LAZY = ("subprocess", "importlib.resources", "logging", "tempfile", "ragline.answer.versions", "ragline.answer.context")


def _search_loads(tmp_path: Path, *flags: str) -> tuple[str, list[str], bool]:
    """A BM25 search's stdout in a fresh process, the modules of HEAVY + LAZY it loaded, and whether it
    compiled the CJK character classes (an English query on English text must not)."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Receipts\n\nKeep every receipt above the threshold.\n")
    env = {**os.environ, "PYTHONPATH": str(SRC), "RAGLINE_CACHE": str(tmp_path / "cache")}
    index = str(tmp_path / "idx")
    # The index records the file's signature though it was written just now (as it does for a file older than
    # two seconds), so the stale-source check trusts it instead of reading it again with every loader.
    build = (
        "import sys; from ragline.cli import main; from ragline.freshness import VerifiedFiles; "
        f"VerifiedFiles.RACY_SECONDS = 0; sys.exit(main(['index', {str(tmp_path / 'docs')!r}, '--index', {index!r}, "
        "'--embedder', 'none']))"
    )
    subprocess.run([sys.executable, "-c", build], env=env, check=True, capture_output=True)
    probe = (
        "import sys, json; from ragline.cli import main; from ragline.text.scripts import cjk_run; "
        f"code = main(['search', 'receipt threshold', '--index', {index!r}, *{list(flags)!r}]); "
        f"print(json.dumps([sorted(m for m in {HEAVY + LAZY!r} if m in sys.modules), "
        "cjk_run.cache_info().currsize > 0]), file=sys.stderr); sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    loaded, compiled = json.loads(done.stderr.strip().splitlines()[-1])
    return done.stdout, loaded, compiled


@functools.cache  # one probe process for both tests
def _loaded_by_rich() -> frozenset[str]:
    """The modules of HEAVY + LAZY that importing rich's console loads by itself (rich 14 imports logging; 15 does
    not): ragline cannot make those lazy, so the tests below do not count them against it."""
    probe = f"import sys, json, rich.console; print(json.dumps([m for m in {HEAVY + LAZY!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return frozenset(json.loads(done.stdout))


def test_bm25_search_loads_no_heavy_library(tmp_path: Path) -> None:
    out, loaded, compiled = _search_loads(tmp_path, "--output", "json")
    assert json.loads(out)["hits"], out
    # from a checkout, the JSON's provenance asks git for the commit
    assert set(loaded) - _loaded_by_rich() <= {"subprocess"}, loaded
    assert not compiled


def test_a_bm25_search_printing_a_table_loads_nothing_made_lazy(tmp_path: Path) -> None:
    out, loaded, compiled = _search_loads(tmp_path)
    assert "1 results for 'receipt threshold'" in out and "a#0" in out, out
    assert set(loaded) - _loaded_by_rich() == set(), loaded
    assert not compiled
