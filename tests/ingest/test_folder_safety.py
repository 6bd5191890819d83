"""Folder loads that must not leak, lose or mix up documents: metadata, links, id clashes, unreadable
folders, deep trees, binary and non-UTF-8 files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragline.errors import InputError, MetadataError
from ragline.ingest import load_folder, load_path


def write(root: Path, name: str, data: bytes | str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.mark.parametrize(
    "data",
    [
        b"---\r\nacl: [hr]\r\n---\r\nOSPREY secret\r\n",
        b"\xef\xbb\xbf---\nacl: [hr]\n---\nOSPREY secret\n",
        "---\r\nacl: [hr]\r\n---\r\nOSPREY secret\r\n".encode("utf-16"),
    ],
    ids=["crlf", "utf8-bom", "utf16-bom-crlf"],
)
def test_front_matter_is_read_with_crlf_and_bom(tmp_path: Path, data: bytes) -> None:
    write(tmp_path, "secret.md", data)
    report = load_folder(tmp_path)
    assert report.errors == []
    [doc] = report.documents
    assert doc.metadata["acl"] == ["hr"]
    assert doc.text.strip() == "OSPREY secret" and "acl" not in doc.text


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("bad.md", "---\nacl: [hr\n---\nsecret", "not valid YAML"),
        ("list.md", "---\n- hr\n---\nsecret", "mapping"),
        ("open.md", "---\nacl: [hr]\nsecret text without a closing line", "never closed"),
    ],
)
def test_bad_front_matter_is_a_metadata_error_and_not_kept(tmp_path: Path, name: str, data: str, reason: str) -> None:
    write(tmp_path, "ok.md", "fine")
    path = write(tmp_path, name, data)
    report = load_folder(tmp_path)
    assert [d.id for d in report.documents] == ["ok"]
    [error] = report.errors
    assert isinstance(error, MetadataError) and error.source == str(path) and reason in error.reason
    assert Path(name).stem not in report.keep  # fail closed: the earlier version leaves the index


def test_bad_sidecar_is_a_metadata_error_and_not_kept(tmp_path: Path) -> None:
    write(tmp_path, "pay.txt", "salary bands")
    write(tmp_path, "pay.txt.meta.json", '{"acl": ["hr"')
    report = load_folder(tmp_path)
    assert report.documents == []
    assert isinstance(report.errors[0], MetadataError) and "pay.txt" in str(report.errors[0])
    assert "pay" not in report.keep
    assert report.unsupported == {}  # a sidecar is no unsupported file


def test_a_file_that_cannot_be_read_is_kept(tmp_path: Path) -> None:
    write(tmp_path, "blob.txt", b"text\x00binary")
    report = load_folder(tmp_path)
    assert "binary" in str(report.errors[0]) and "blob" in report.keep


def test_links_outside_the_folder_are_reported_not_followed(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", "passwd.txt", "root:x:0:0 OSPREY")
    write(tmp_path / "outside", "more/deep.txt", "outside folder text")
    docs = tmp_path / "docs"
    write(docs, "a.txt", "inside")
    (docs / "p.txt").symlink_to(outside)
    (docs / "dir").symlink_to(tmp_path / "outside")
    report = load_folder(docs)
    assert [d.id for d in report.documents] == ["a"]
    assert sorted(e.source for e in report.errors) == [str(docs / "dir"), str(docs / "p.txt")]
    assert all("links outside the indexed folder" in e.reason and "--follow-links" in e.reason for e in report.errors)
    assert "p" not in report.keep  # a leaked file indexed earlier is removed

    followed = load_folder(docs, follow_links=True)
    assert followed.errors == []
    assert [d.id for d in followed.documents] == ["a", "dir/more/deep", "dir/passwd", "p"]


def test_links_inside_the_folder_are_not_indexed_twice_and_cannot_loop(tmp_path: Path) -> None:
    write(tmp_path, "sub/a.txt", "alpha")
    (tmp_path / "alias.txt").symlink_to(tmp_path / "sub" / "a.txt")
    (tmp_path / "sub" / "loop").symlink_to(tmp_path)
    for follow in (False, True):
        report = load_folder(tmp_path, follow_links=follow)
        assert report.errors == [] and [d.id for d in report.documents] == ["sub/a"]


def test_followed_links_that_loop_outside_the_folder_end(tmp_path: Path) -> None:
    write(tmp_path / "outside", "x.txt", "outside")
    (tmp_path / "outside" / "again").symlink_to(tmp_path / "outside")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ext").symlink_to(tmp_path / "outside")
    report = load_folder(docs, follow_links=True)
    assert [d.id for d in report.documents] == ["ext/x"]


def test_files_that_differ_only_by_extension_are_refused_and_the_rest_loads(tmp_path: Path) -> None:
    write(tmp_path, "notes.md", "markdown notes")
    write(tmp_path, "notes.txt", "text notes")
    write(tmp_path, "report.html", "<p>html report</p>")
    write(tmp_path, "report.txt", "text report")
    write(tmp_path, "other.txt", "other")
    report = load_folder(tmp_path)
    assert [d.id for d in report.documents] == ["other"]
    assert len(report.errors) == 4
    clash = next(e for e in report.errors if e.source == str(tmp_path / "notes.md"))
    assert "notes.md" in clash.reason and "notes.txt" in clash.reason and "'notes'" in clash.reason
    assert "notes" in report.keep and "report" in report.keep


def test_an_unreadable_folder_is_reported_and_its_ids_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "a.txt", "open")
    write(tmp_path, "locked/b.txt", "hidden from us")
    write(tmp_path, "lockedness/c.txt", "a folder whose name only starts the same")
    locked, scandir = tmp_path / "locked", os.scandir

    def scandir_denying_locked(path):  # chmod 000 does not stop root, which runs the tests
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", scandir_denying_locked)
    report = load_folder(tmp_path)
    assert [d.id for d in report.documents] == ["a", "lockedness/c"]
    [error] = report.errors
    assert error.source == str(locked) and "Permission denied" in error.reason
    assert "locked/b" in report.keep and "locked/deeper/x#3" in report.keep
    assert "lockedness/c" not in report.keep and "locked" not in report.keep


def test_very_deep_folders_are_walked(tmp_path: Path) -> None:
    deep = tmp_path
    try:
        for _ in range(1200):  # deeper than Python's recursion limit (os.makedirs itself would recurse)
            deep = deep / "d"
            deep.mkdir()
        (deep / "bottom.txt").write_text("at the bottom")
        report = load_folder(tmp_path)
        assert report.errors == [] and report.documents[0].id == "d/" * 1200 + "bottom"
    finally:  # bottom up: pytest's clean-up of old temporary folders recurses, and would fail on this tree
        (deep / "bottom.txt").unlink(missing_ok=True)
        while deep != tmp_path:
            deep.rmdir()
            deep = deep.parent


def test_nul_bytes_anywhere_mean_binary(tmp_path: Path) -> None:
    write(tmp_path, "late.txt", b"plain text " * 2000 + b"\x00tail")
    write(tmp_path, "page.html", b"<p>" + b"plain text " * 2000 + b"\x00</p>")
    report = load_folder(tmp_path)
    assert report.documents == [] and all("binary" in e.reason for e in report.errors) and len(report.errors) == 2


FRENCH = (
    "Le café du coin ouvre à sept heures. Les employés préfèrent la crème brûlée et le thé glacé. "
    "Après la réunion, nous irons déjeuner près de la gare où le garçon sert des crêpes."
)
ENGLISH_1252 = (
    "The “smart quotes” problem — café prices rose to €5 – and the naïve résumé said so. "
    "It’s a typical Windows-1252 document, isn’t it?"
)
CHINESE = "电网维护：变电站每年检查一次。输电线路需要定期巡检，发现问题及时处理。员工应当遵守安全规程，佩戴防护装备。"
JAPANESE = "電力網の保守：変電所は毎年点検されます。送電線は定期的に巡回し、問題があればすぐに対処します。"


@pytest.mark.parametrize(
    ("text", "encoding"),
    [(FRENCH, "latin-1"), (ENGLISH_1252, "cp1252"), (CHINESE, "gb2312"), (JAPANESE, "shift_jis"), (FRENCH, "utf-16")],
)
def test_non_utf8_text_is_decoded_and_its_encoding_recorded(tmp_path: Path, text: str, encoding: str) -> None:
    write(tmp_path, "doc.txt", text.encode(encoding))
    report = load_folder(tmp_path)
    assert report.errors == []
    [doc] = report.documents
    assert doc.text == text
    assert text.encode(doc.metadata["encoding"]) == text.encode(encoding)


def test_utf8_records_no_encoding(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", FRENCH)
    write(tmp_path, "b.txt", b"\xef\xbb\xbf" + FRENCH.encode())
    assert [d.metadata for d in load_folder(tmp_path).documents] == [{}, {}]


def test_unsupported_suffixes_are_counted(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "text")
    for name in ("b.doc", "c.doc", "d.odt", "Makefile", "e.txt.meta.json", ".hidden.doc"):
        write(tmp_path, name, "x")
    assert load_folder(tmp_path).unsupported == {"": 1, ".doc": 2, ".odt": 1}


def test_load_path_reads_one_file_with_its_stem_as_id(tmp_path: Path) -> None:
    path = write(tmp_path, "sub/policy.md", "# Policy\n\nRemote work.")
    report = load_path(path)
    assert [(d.id, d.source, d.title) for d in report.documents] == [("policy", "policy.md", "Policy")]
    with pytest.raises(InputError, match="unsupported file type"):
        load_path(write(tmp_path, "x.doc", "x"))
    with pytest.raises(InputError, match="no such file"):
        load_path(tmp_path / "missing.txt")
