from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.errors import InputError
from ragline.ingest import load_folder, load_jsonl_corpus


def write(root: Path, name: str, data: bytes | str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_text_and_markdown_files_become_documents(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "plain text about turbines")
    write(tmp_path, "sub/b.md", "# Grid maintenance\n\nSubstations are inspected yearly.")
    write(tmp_path, "c.doc", "unsupported suffix")
    write(tmp_path, "sub/d.doc", "unsupported suffix")
    write(tmp_path, "e.odt", "unsupported suffix")
    write(tmp_path, ".hidden/d.md", "hidden")
    report = load_folder(tmp_path)
    assert report.errors == []
    assert [d.id for d in report.documents] == ["a", "sub/b"]
    assert report.unsupported == {".doc": 2, ".odt": 1}
    assert report.documents[0].title == "a" and report.documents[1].title == "Grid maintenance"
    assert report.documents[1].source == "sub/b.md"


def test_front_matter_and_sidecar_become_metadata(tmp_path: Path) -> None:
    write(
        tmp_path,
        "policy.md",
        "---\ntitle: Remote work\nacl: [all, hr]\nversion: 2\neffective_date: 2026-01-01\n---\n"
        "Work from home twice a week.",
    )
    write(tmp_path, "notes.txt", "quarterly notes")
    write(tmp_path, "notes.txt.meta.json", json.dumps({"acl": ["finance"]}))
    docs = {d.id: d for d in load_folder(tmp_path).documents}
    policy = docs["policy"]
    assert policy.title == "Remote work"
    assert policy.metadata == {"acl": ["all", "hr"], "version": 2, "effective_date": "2026-01-01"}
    assert policy.text == "Work from home twice a week."
    assert docs["notes"].metadata == {"acl": ["finance"]}


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("empty.txt", b"", "empty"),
        ("blank.md", b"   \n\n", "empty"),
        ("binary.txt", b"\x89PNG\x00\x00\x01garbage", "binary"),
        ("noise.txt", bytes(range(128, 256)) * 6, "no other encoding decodes it"),
        ("big.txt", b"word " * 400, "size cap"),
        ("badyaml.md", b"---\nacl: [unclosed\n---\nbody", "front matter"),
        ("only_front_matter.md", b"---\ntitle: x\n---\n", "empty"),
    ],
)
def test_bad_files_are_reported_by_name_and_the_rest_loads(tmp_path: Path, name: str, data: bytes, reason: str) -> None:
    write(tmp_path, "good.md", "# Good\n\nA fine document.")
    bad = write(tmp_path, name, data)
    report = load_folder(tmp_path, max_bytes=1000)
    assert [d.id for d in report.documents] == ["good"]
    assert len(report.errors) == 1
    error = report.errors[0]
    assert isinstance(error, InputError) and error.source == str(bad)
    assert reason in str(error)


def test_unreadable_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "good.txt", "fine")
    locked = write(tmp_path, "locked.txt", "secret")
    original = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self == locked:
            raise PermissionError(13, "Permission denied")
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    report = load_folder(tmp_path)
    assert [d.id for d in report.documents] == ["good"]
    assert "Permission denied" in str(report.errors[0]) and report.errors[0].source == str(locked)


def test_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such directory"):
        load_folder(tmp_path / "nope")


def test_jsonl_corpus_reports_bad_lines_with_line_numbers(tmp_path: Path) -> None:
    corpus = write(
        tmp_path,
        "corpus.jsonl",
        '{"_id": "1", "title": "A", "text": "alpha"}\n'
        "{not json\n"
        "\n"
        '{"title": "no id", "text": "x"}\n'
        '{"_id": "4", "text": "delta", "metadata": {"acl": ["hr"]}}\n'
        '["a list"]\n',
    )
    report = load_jsonl_corpus(corpus)
    assert [d.id for d in report.documents] == ["1", "4"]
    assert report.documents[1].metadata == {"acl": ["hr"]}
    assert [e.source for e in report.errors] == [f"{corpus}:2", f"{corpus}:4", f"{corpus}:6"]


def test_jsonl_corpus_missing_file(tmp_path: Path) -> None:
    report = load_jsonl_corpus(tmp_path / "corpus.jsonl")
    assert report.documents == [] and "cannot open" in str(report.errors[0])
