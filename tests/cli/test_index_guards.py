"""``ragline index`` refuses what would silently destroy or leak: a mass deletion, another folder synced
into an index, the index indexed into itself, a link named on the command line, the filesystem root; and
a file given as ``--index`` or a damaged ``docs.jsonl`` is a clear error, not a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main
from ragline.errors import CorruptIndexError
from ragline.index import Index


def index_cli(capsys: pytest.CaptureFixture[str], source: Path | str, index: Path, *flags: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["index", str(source), "--index", str(index), "--embedder", "none", "--output", "json", *flags])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def folder_of(root: Path, n: int, name: str = "docs") -> Path:
    folder = root / name
    folder.mkdir()
    for i in range(n):
        (folder / f"{name}{i}.md").write_text(f"note {i} of {name}: the turbines are inspected yearly")
    return folder


def resync_after_removing(capsys: pytest.CaptureFixture[str], tmp_path: Path, removed: int) -> tuple[int, str]:
    """Index a folder of 6 notes, remove ``removed`` of them, and sync again: (exit code, what it said)."""
    docs, index = folder_of(tmp_path, 6), tmp_path / "idx"
    assert index_cli(capsys, docs, index)[0] == 0
    for i in range(removed):
        (docs / f"docs{i}.md").unlink()
    return index_cli(capsys, docs, index)


def test_a_sync_deleting_more_than_half_stops_and_asks(capsys, tmp_path: Path) -> None:
    """Planted fault: no mass-delete check (the code before: 4 of 6 documents deleted, exit 0)."""
    docs, index = tmp_path / "docs", tmp_path / "idx"
    code, said = resync_after_removing(capsys, tmp_path, 4)
    assert code == 2 and "--allow-mass-delete" in said and "4 of the 6 documents" in said
    assert len(Index.open(index)) == 6  # nothing was written
    code, said = index_cli(capsys, docs, index, "--allow-mass-delete")
    assert code == 0 and json.loads(said.splitlines()[0])["deleted"] == 4 and len(Index.open(index)) == 2


def test_deleting_half_or_less_goes_ahead(capsys, tmp_path: Path) -> None:
    code, said = resync_after_removing(capsys, tmp_path, 3)
    assert code == 0 and json.loads(said.splitlines()[0])["deleted"] == 3


def test_deleting_every_document_of_a_small_index_asks_too(capsys, tmp_path: Path) -> None:
    docs, index = folder_of(tmp_path, 1), tmp_path / "idx"
    assert index_cli(capsys, docs, index)[0] == 0
    (docs / "docs0.md").write_text("")  # empty: skipped, and kept
    (docs / "new.md").write_text("a new note")
    assert index_cli(capsys, docs, index)[0] == 0  # the empty file keeps its earlier version: nothing deleted
    (docs / "docs0.md").unlink()
    (docs / "new.md").unlink()
    (docs / "other.md").write_text("other")
    code, said = index_cli(capsys, docs, index)
    assert code == 2 and "--allow-mass-delete" in said


def test_another_folder_into_an_existing_index_is_refused(capsys, tmp_path: Path) -> None:
    """Planted fault: no comparison with the recorded source (the code before: "6 deleted", exit 0)."""
    docs, other, index = folder_of(tmp_path, 6), folder_of(tmp_path, 1, "other"), tmp_path / "idx"
    assert index_cli(capsys, docs, index)[0] == 0
    code, said = index_cli(capsys, other, index)
    assert code == 2 and str(docs.resolve()) in said and str(other.resolve()) in said
    assert len(Index.open(index)) == 6
    moved = tmp_path / "moved"
    docs.rename(moved)  # the same documents from a new place delete nothing: allowed
    code, said = index_cli(capsys, moved, index)
    assert code == 0 and json.loads(said.splitlines()[0])["deleted"] == 0
    one = tmp_path / "one.md"  # one file is added, never deletes: allowed
    one.write_text("a single note")
    assert index_cli(capsys, one, index)[0] == 0 and len(Index.open(index)) == 7


def test_the_index_into_itself_is_refused(capsys, tmp_path: Path) -> None:
    """Planted fault: no check (the code before: the index folder's files replaced its documents)."""
    docs, index = folder_of(tmp_path, 3), tmp_path / "idx"
    assert index_cli(capsys, docs, index)[0] == 0
    code, said = index_cli(capsys, index, index)
    assert code == 2 and "itself" in said
    code, said = index_cli(capsys, index / "segments", index)
    assert code == 2 and "itself" in said


def test_a_link_named_on_the_command_line_is_refused(capsys, tmp_path: Path) -> None:
    """Planted fault: ``load_path`` reading the link's target (the code before indexed /etc/passwd)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0 OSPREY")
    docs = folder_of(tmp_path, 1)
    (docs / "passwd.txt").symlink_to(secret)
    index = tmp_path / "idx"
    code, said = index_cli(capsys, docs / "passwd.txt", index)
    assert code == 0 and "link" in said and "--follow-links" in said
    assert json.loads(said.splitlines()[0])["added"] == 0
    assert index_cli(capsys, docs / "passwd.txt", index, "--follow-links")[0] == 0
    assert [d.text for d in Index.open(index).documents()] == ["root:x:0:0 OSPREY"]


def test_the_filesystem_root_asks_for_yes(capsys, tmp_path: Path) -> None:
    """Planted fault: no check (the code before started walking the whole disk)."""
    code, said = index_cli(capsys, "/", tmp_path / "idx")
    assert code == 2 and "--yes" in said and not (tmp_path / "idx").exists()


def test_index_pointing_at_a_file_is_an_error(capsys, tmp_path: Path) -> None:
    """Planted fault: ``Index.create`` calling mkdir on the file (the code before: FileExistsError traceback)."""
    docs, target = folder_of(tmp_path, 1), tmp_path / "afile"
    target.write_text("not an index")
    code, said = index_cli(capsys, docs, target)
    assert code == 2 and "afile" in said and "not a directory" in said and "Traceback" not in said
    capsys.readouterr()
    assert main(["search", "turbines", "--index", str(target)]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_a_bit_flip_in_docs_jsonl_is_a_corrupt_index_error(capsys, tmp_path: Path) -> None:
    """Planted fault: reading stored text without catching the decode error (the code before:
    UnicodeDecodeError traceback)."""
    docs, index = folder_of(tmp_path, 2), tmp_path / "idx"
    assert index_cli(capsys, docs, index)[0] == 0
    (stored,) = index.glob("segments/*/docs.jsonl")
    data = bytearray(stored.read_bytes())
    data[data.index(b"turbines")] ^= 0x80
    stored.write_bytes(bytes(data))
    with pytest.raises(CorruptIndexError, match="docs.jsonl"):
        list(Index.open(index).documents())
    capsys.readouterr()
    assert main(["search", "turbines", "--index", str(index)]) == 2
    err = capsys.readouterr().err
    assert "docs.jsonl" in err and "rebuild" in err
