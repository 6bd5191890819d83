"""Freshness: ragline status, index --dry-run, pipeline drift, and the stale-source warning of ask/search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main
from ragline.config import load_config
from ragline.freshness import folder_status, is_stale, pipeline_drift, stale_sources
from ragline.index import Index


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main([*argv, "--output", "json"])
    return code, json.loads(capsys.readouterr().out.strip())


@pytest.fixture
def indexed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    docs = tmp_path / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "leave.md").write_text("# Leave\n\nEmployees get 25 days of annual leave.\n")
    (docs / "travel.md").write_text("# Travel\n\nThe per diem is 40 dollars a day.\n")
    (docs / "hr" / "pay.md").write_text("---\nacl: [hr]\n---\n# Pay\n\nSalaries are paid on the 25th.\n")
    index = str(tmp_path / "idx")
    code, _ = _run(capsys, "index", str(docs), "--index", index, "--embedder", "none")
    assert code == 0
    return docs, index


def test_status_after_edits_lists_each_change_and_dry_run_writes_nothing(
    indexed: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    docs, index = indexed
    code, fresh = _run(capsys, "status", "--index", index)
    assert code == 0 and not fresh["stale"] and fresh["chunks"]["unchanged"] == 3
    (docs / "leave.md").write_text("# Leave\n\nEmployees get 30 days of annual leave.\n")
    (docs / "travel.md").unlink()
    (docs / "hr" / "bonus.md").write_text("---\nacl: [hr]\n---\n# Bonus\n\nBonuses are paid in March.\n")
    code, status = _run(capsys, "status", str(docs), "--index", index)
    assert status["stale"]
    assert {(c["doc_id"], c["status"]) for c in status["changes"]} == {
        ("leave", "changed"),
        ("travel", "removed"),
        ("hr/bonus", "added"),
    }
    generation = Index.open(index).generation
    code, plan = _run(capsys, "index", str(docs), "--index", index, "--dry-run")
    assert (plan["added"], plan["updated"], plan["deleted"]) == (1, 1, 1)
    assert Index.open(index).generation == generation and len(Index.open(index)) == 3  # nothing written
    code, done = _run(capsys, "index", str(docs), "--index", index)
    assert (done["added"], done["updated"], done["deleted"]) == (plan["added"], plan["updated"], plan["deleted"])
    assert not is_stale(Index.open(index), docs)
    assert main(["status", "--index", index, "--exit-code"]) == 0


def test_ask_warns_when_a_cited_file_changed_since_indexing(
    indexed: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    docs, index = indexed
    code, fresh = _run(capsys, "ask", "How many days of annual leave?", "--index", index, "--reader", "extractive")
    assert fresh["stale_sources"] == [] and fresh["citations"]
    (docs / "leave.md").write_text("# Leave\n\nEmployees get 30 days of annual leave.\n")
    code, stale = _run(capsys, "ask", "How many days of annual leave?", "--index", index, "--reader", "extractive")
    assert [(s["doc_id"], s["status"]) for s in stale["stale_sources"]] == [("leave", "changed")]
    code, hits = _run(capsys, "search", "annual leave", "--index", index)
    assert [s["doc_id"] for s in hits["stale_sources"]] == ["leave"]
    (docs / "leave.md").unlink()
    opened = Index.open(index)
    assert [s.status for s in stale_sources(opened, opened.search("annual leave", 1))] == ["removed"]


def test_pipeline_drift_names_what_must_be_redone(indexed: tuple[Path, str]) -> None:
    docs, index = indexed
    opened = Index.open(index)
    same = load_config("default").with_overrides(index={"embedder": "none"})
    assert pipeline_drift(opened, same) == []
    other = same.with_overrides(ingest={"chunker": "sentences:window=3"}, index={"analyzer": "simple"})
    drift = {d.setting: d.redo for d in pipeline_drift(opened, other)}
    assert drift == {"chunker": "re-index and re-embed", "analyzer": "re-index"}
    assert folder_status(opened, docs, other).stale  # drift alone makes the index stale for that config


def test_a_file_found_fresh_is_not_reread_until_it_changes(
    indexed: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stale-source check remembers files it found fresh by stat signature, and an edit is still seen."""
    from ragline import freshness
    from ragline.ingest import loaders

    docs, index = indexed
    monkeypatch.setattr(freshness.VerifiedFiles, "RACY_SECONDS", 0.0)  # the files were written just now
    opened = Index.open(index)
    hits = opened.search("annual leave", 1)
    reads: list[Path] = []
    real = loaders.load_file
    monkeypatch.setattr(loaders, "load_file", lambda path, *a, **k: reads.append(path) or real(path, *a, **k))
    assert stale_sources(opened, hits) == [] and len(reads) == 1
    assert stale_sources(opened, hits) == [] and len(reads) == 1  # remembered: not read again
    (docs / "leave.md").write_text("# Leave\n\nEmployees get 30 days of annual leave.\n")
    assert [s.status for s in stale_sources(opened, hits)] == ["changed"] and len(reads) == 2


def test_ragline_index_records_the_files_it_loaded_as_fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A search right after `ragline index` trusts the signatures taken at load; an edit is still seen."""
    from ragline import freshness
    from ragline.ingest import loaders

    monkeypatch.setattr(freshness.VerifiedFiles, "RACY_SECONDS", 0.0)  # the files were written just now
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "leave.md").write_text("# Leave\n\nEmployees get 25 days of annual leave.\n")
    index = str(tmp_path / "idx")
    assert _run(capsys, "index", str(docs), "--index", index, "--embedder", "none")[0] == 0
    reads: list[Path] = []
    real = loaders.load_file
    monkeypatch.setattr(loaders, "load_file", lambda path, *a, **k: reads.append(path) or real(path, *a, **k))
    opened = Index.open(index)
    hits = opened.search("annual leave", 1)
    assert stale_sources(opened, hits) == [] and reads == []
    (docs / "leave.md").write_text("# Leave\n\nEmployees get 30 days of annual leave.\n")
    assert [s.status for s in stale_sources(opened, hits)] == ["changed"] and len(reads) == 1


def test_search_after_a_folder_became_unreadable_warns_and_answers(
    indexed: tuple[Path, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted fault: the stale-source check letting PermissionError out (the code before: a traceback from
    ``freshness.stale_sources``, exit 1). Tests run as root, where ``chmod 000`` blocks nothing, so the
    unreadable folder is simulated: ``os.stat`` under it raises PermissionError."""
    import os

    docs, index = indexed
    real_stat = os.stat
    blocked = str(docs / "hr") + os.sep

    def stat(path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003 (os.stat's own signature)
        if os.fsdecode(path).startswith(blocked):
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    capsys.readouterr()
    assert main(["search", "salaries paid", "--index", index]) == 0
    captured = capsys.readouterr()
    assert "hr/pay" in captured.out and "Traceback" not in captured.err
    assert "unreadable" in captured.err  # a warning, naming the document
    code, found = _run(capsys, "search", "salaries paid", "--index", index)
    assert code == 0 and found["stale_sources"] == [
        {"doc_id": "hr/pay", "source": str(docs / "hr" / "pay.md"), "status": "unreadable"}
    ]
