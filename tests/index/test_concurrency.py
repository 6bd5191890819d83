"""Readers and a writer at once: a reader sees one complete commit and never calls a race corruption."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragline.errors import CorruptIndexError, IndexDirectoryError
from ragline.index import Index, IndexSettings
from ragline.index.postings import FieldPostings
from ragline.index.segment import Segment
from ragline.types import Document

REPO = Path(__file__).resolve().parents[2]
QUERIES = ["apple", "banana cherry", "fig", "durian apple"]


def _writer(path: Path, max_segments: int) -> Index:
    """An index with two segments and a delete set, left open (holding the writer lock)."""
    writer = Index.create(path, IndexSettings(max_segments=max_segments))
    writer.add([Document("a", "apple banana"), Document("b", "banana cherry cherry"), Document("c", "fig apple")])
    writer.commit()
    writer.add([Document("d", "durian apple"), Document("e", "fig fig")])
    writer.delete(["b"])
    writer.commit()
    return writer


def _answers(index: Index) -> dict[str, list[tuple[str, float]]]:
    return {q: index.search_ids(q, k=10) for q in QUERIES}


def _commit_during_segment_loads(monkeypatch: pytest.MonkeyPatch, writer: Index, times: int) -> list[dict]:
    """Make the writer commit just before each of the next ``times`` segment loads (as a race would).

    Returns the manifests that were current when each of those loads began.
    """
    load, superseded = Segment.load, []

    def load_after_a_commit(cls: type[Segment], folder: Path, *args: object, **kwargs: object) -> Segment:
        if len(superseded) < times:
            superseded.append(json.loads((writer.path / "manifest.json").read_text()))
            writer.add([Document(f"new{len(superseded)}", f"apple fig {len(superseded)}")])
            writer.commit()
        return load(folder, *args, **kwargs)

    monkeypatch.setattr(Segment, "load", classmethod(load_after_a_commit))
    return superseded


def test_open_follows_a_commit_that_removed_the_files_it_was_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _writer(tmp_path / "ix", max_segments=2)
    superseded = _commit_during_segment_loads(monkeypatch, writer, times=1)

    reader = Index.open(tmp_path / "ix")

    (manifest,) = superseded
    assert manifest["generation"] < writer.generation
    names = [e["name"] for e in manifest["segments"]]
    assert not all((tmp_path / "ix" / "segments" / name).is_dir() for name in names)  # the merge collected some
    assert reader.generation == writer.generation
    assert len(reader) == len(writer) == 5
    assert _answers(reader) == _answers(writer)
    writer.close()


def test_a_writer_that_always_wins_the_race_is_not_reported_as_corruption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _writer(tmp_path / "ix", max_segments=1)  # every commit merges: no segment survives it
    _commit_during_segment_loads(monkeypatch, writer, times=1000)

    with pytest.raises(IndexDirectoryError, match="new commits while one was being loaded") as raised:
        Index.open(tmp_path / "ix")
    assert not isinstance(raised.value, CorruptIndexError)
    writer.close()


def test_a_file_removed_during_loading_without_a_new_commit_is_corruption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _writer(tmp_path / "ix", max_segments=10)
    writer.close()
    load = FieldPostings.load

    def load_and_lose_offsets(cls: type[FieldPostings], folder: Path, name: str) -> FieldPostings:
        (folder / "docs.offsets.npy").unlink(missing_ok=True)  # after Segment.load checked the sizes
        return load(folder, name)

    monkeypatch.setattr(FieldPostings, "load", classmethod(load_and_lose_offsets))
    with pytest.raises(CorruptIndexError, match="docs.offsets.npy"):
        Index.open(tmp_path / "ix")


def test_a_failed_refresh_keeps_serving_the_commit_it_had(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    writer = _writer(path, max_segments=10)
    reader = Index.open(path)
    generation, answers = reader.generation, _answers(reader)
    writer.add([Document("f", "apple apple apple")])
    writer.commit()
    writer.close()
    newest = json.loads((path / "manifest.json").read_text())["segments"][-1]["name"]
    docs = path / "segments" / newest / "docs.jsonl"
    docs.write_bytes(docs.read_bytes()[:-1])  # damaged, and no newer commit will come

    with pytest.raises(CorruptIndexError, match="docs.jsonl"):
        reader.refresh()
    assert reader.generation == generation
    assert len(reader) == 4
    assert _answers(reader) == answers


@pytest.mark.slow
def test_no_search_fails_while_the_cli_resyncs(tmp_path: Path) -> None:
    """The real CLI re-syncs (commits with deletes, each followed by a merge) while CLI and API readers search."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(REPO / "src"), os.environ.get("PYTHONPATH")))))
    command = [sys.executable, str(REPO / "benchmarks" / "concurrent_readers.py"), "--resyncs", "5"]
    command += ["--cli-searches", "20", "--api-searches", "2000", "--time-cap", "240"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["failed"] == 0 and result["writer_failed"] == 0, result["errors"]
    # The readers really ran against a changing index: several commits seen, merges made.
    assert result["cli_searches"] > 0 and result["api_searches"] > 0, result
    assert result["generations"] >= 3 and result["merges"] >= 1, result
