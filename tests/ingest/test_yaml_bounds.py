"""Front matter YAML is parsed with bounds: an alias bomb or deep nesting is one bad file, not the whole run."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from ragline.errors import MetadataError
from ragline.ingest import load_folder


def alias_bomb(levels: int, width: int = 9) -> str:
    """The billion-laughs shape: each anchor a list of ``width`` aliases of the one before."""
    lines = ['a0: &a0 ["lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    return "---\n" + "\n".join(lines) + f"\nacl: *a{levels}\n---\nbody\n"


def test_an_alias_bomb_is_reported_by_name_and_the_rest_of_the_folder_loads(tmp_path: Path) -> None:
    """Planted fault: plain ``yaml.safe_load`` plus the copy into plain values expands 9^6 (531,441)
    references (the code before: memory grows with the expansion, and a 10-level bomb never finishes)."""
    (tmp_path / "bomb.md").write_text(alias_bomb(6))
    (tmp_path / "good.md").write_text("---\nacl: [all]\n---\nThe office closes early.")
    tracemalloc.start()
    try:
        report = load_folder(tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [d.id for d in report.documents] == ["good"]
    (error,) = report.errors
    assert isinstance(error, MetadataError) and error.source.endswith("bomb.md") and "alias" in error.reason
    assert peak < 20 * 1024 * 1024


def test_the_full_bomb_and_a_self_reference_are_refused(tmp_path: Path) -> None:
    (tmp_path / "bomb.md").write_text(alias_bomb(10))
    (tmp_path / "loop.md").write_text("---\nacl: &x [*x]\n---\nbody\n")
    report = load_folder(tmp_path)
    assert report.documents == [] and sorted(Path(e.source).name for e in report.errors) == ["bomb.md", "loop.md"]


@pytest.mark.parametrize("depth", [1500, 100_000])
def test_deep_nesting_is_a_metadata_error(tmp_path: Path, depth: int) -> None:
    """Planted fault: plain PyYAML (the code before): its scanner takes time quadratic in the depth of
    ``[`` (3 s for 1,500, where its recursive composer then raises a RecursionError that no loader
    caught; hours for 100,000). Block nesting is bounded by the recursion limit: a ``MetadataError`` too."""
    (tmp_path / "deep.md").write_text("---\nacl: " + "[" * depth + "]" * depth + "\n---\nbody\n")
    (tmp_path / "good.md").write_text("fine")
    (tmp_path / "block.md").write_text("---\n" + "".join(" " * i + "k:\n" for i in range(1200)) + "---\nbody\n")
    report = load_folder(tmp_path)
    assert [d.id for d in report.documents] == ["good"]
    assert [type(e) for e in report.errors] == [MetadataError] * 2
    assert all("nest" in e.reason for e in report.errors)


def test_ordinary_aliases_still_work(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\ngroups: &g [hr, all]\nacl: *g\n---\nbody\n")
    report = load_folder(tmp_path)
    assert report.errors == [] and report.documents[0].metadata["acl"] == ["hr", "all"]
