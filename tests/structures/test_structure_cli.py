"""``ragline index --structure raptor`` stores the tree beside the index; ``ragline status`` says when it is stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bag_embedder import BagEmbedder

from ragline.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main([*argv, "--output", "json"])
    return code, json.loads(capsys.readouterr().out.strip())


def test_index_builds_the_structure_and_status_reports_it_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted fault checked: a status that ignores structures (no `structures` key) fails the first assertion."""
    monkeypatch.setattr("ragline.index.store.load_index_embedder", lambda *args: BagEmbedder())
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, topic in enumerate(("lunch dinner allowance", "airline ticket luggage", "disk database reboot") * 4):
        (docs / f"d{i}.md").write_text(f"# Note {i}\n\nThe {topic} rule {i}. Another {topic} sentence.\n")
    index = str(tmp_path / "idx")
    code, done = _run(capsys, "index", str(docs), "--index", index, "--embedder", "none", "--structure", "raptor")
    assert code == 0 and done["structures"][0]["structure"] == "raptor" and done["structures"][0]["nodes"] > 12
    assert (tmp_path / "idx" / "structures" / "raptor" / "manifest.json").is_file()
    code, status = _run(capsys, "status", "--index", index)
    assert [(s["structure"], s["stale"]) for s in status["structures"]] == [("raptor", False)]
    (docs / "d0.md").write_text("# Note 0\n\nA changed lunch rule.\n")
    _run(capsys, "index", str(docs), "--index", index, "--embedder", "none")
    code, status = _run(capsys, "status", "--index", index)
    assert status["structures"][0]["stale"] and status["structures"][0]["changed"] == 1
    assert main(["status", "--index", index, "--exit-code"]) == 1
    code, done = _run(capsys, "index", str(docs), "--index", index, "--embedder", "none", "--structure", "raptor")
    assert done["structures"][0]["updated"]["partitions_updated"] == 1
    code, status = _run(capsys, "status", "--index", index)
    assert not status["structures"][0]["stale"]


def test_index_reports_the_graphs_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The entity graph's manifest says how many entities (nodes), relations and communities it holds, so
    ``ragline index --structure graph`` reports a count (it once printed "None nodes")."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, (a, b) in enumerate(
        (("Ada Brook", "Harbor Works"), ("Ada Brook", "Cliff Labs"), ("Tom Reyes", "Cliff Labs"))
    ):
        (docs / f"d{i}.md").write_text(f"# Note {i}\n\n{a} works at {b}. {b} hired {a} in 2020.\n")
    index = str(tmp_path / "idx")
    code, done = _run(capsys, "index", str(docs), "--index", index, "--embedder", "none", "--structure", "graph")
    graph = done["structures"][0]
    assert code == 0 and graph["structure"] == "graph" and graph["nodes"] >= 4
    manifest = json.loads((tmp_path / "idx" / "structures" / "graph" / "manifest.json").read_text())
    assert manifest["nodes"] == graph["nodes"] and manifest["relations"] >= 3 and manifest["communities"]
