"""An index written in another format is refused with what to do, never misread or crashed on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.errors import CorruptIndexError, IndexMismatchError
from ragline.index import Index
from ragline.index.store import FORMAT, MANIFEST
from ragline.types import Document


def _index_with_format(tmp_path: Path, value: object) -> Path:
    path = tmp_path / "ix"
    with Index.create(path) as index:
        index.add([Document("a", "apple 数据")])
        index.commit()
    manifest = json.loads((path / MANIFEST).read_text("utf-8"))
    assert manifest["format"] == FORMAT == 3
    manifest["format"] = value
    (path / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    return path


def test_an_older_index_says_how_to_rebuild_it(tmp_path: Path) -> None:
    path = _index_with_format(tmp_path, 2)
    with pytest.raises(IndexMismatchError) as error:
        Index.open(path)
    assert str(error.value) == (
        f"index {path} was built by an older ragline (format 2; this ragline reads format 3): "
        f"delete {path} and rebuild it with `ragline index SOURCE --index {path}`"
    )


def test_a_newer_index_says_to_upgrade(tmp_path: Path) -> None:
    path = _index_with_format(tmp_path, 4)
    with pytest.raises(IndexMismatchError, match=r"newer ragline \(format 4; this ragline reads format 3\): upgrade"):
        Index.open(path)


@pytest.mark.parametrize("value", [None, "2", 2.5, True])
def test_a_missing_or_odd_format_number(tmp_path: Path, value: object) -> None:
    path = _index_with_format(tmp_path, value)
    with pytest.raises(IndexMismatchError, match="has no valid format number"):
        Index.open(path)


def test_open_or_create_refuses_an_older_index_too(tmp_path: Path) -> None:
    # `ragline index` goes through open_or_create: it must not write format-2 segments into a format-1 index.
    path = _index_with_format(tmp_path, 1)
    before = (path / MANIFEST).read_bytes()
    with pytest.raises(IndexMismatchError, match="older ragline"):
        Index.open_or_create(path)
    assert (path / MANIFEST).read_bytes() == before


@pytest.mark.parametrize("content", ["[]", '"manifest"', "42"])
def test_a_manifest_that_is_not_an_object_is_corrupt(tmp_path: Path, content: str) -> None:
    path = tmp_path / "ix"
    Index.create(path).close()
    (path / MANIFEST).write_text(content, "utf-8")
    with pytest.raises(CorruptIndexError, match="not an index manifest"):
        Index.open(path)


def test_a_chunk_keeps_its_parent_document_through_the_index(tmp_path: Path) -> None:
    # Format 3: the document a chunk was cut from is a field of the chunk, stored and read back.
    from ragline.ingest.pipeline import IngestConfig, chunk_documents

    chunks, _ = chunk_documents([Document("guide#2024", "one two three four five six", "Guide")],
                                IngestConfig("fixed:size=2", "none"))  # fmt: skip
    assert [c.parent for c in chunks] == ["guide#2024"] * 3  # an id with '#' of its own stays whole
    with Index.create(tmp_path / "ix") as index:
        index.add(chunks)
        index.commit()
    reopened = Index.open(tmp_path / "ix")
    assert {reopened.get(c.id).parent for c in chunks} == {"guide#2024"}
    hits = reopened.search("three", 1)
    assert hits[0].document_id == "guide#2024"
