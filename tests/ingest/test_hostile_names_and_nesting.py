"""A file name that is not UTF-8 and HTML nested past libxml2's depth limit: reported or kept, never fatal."""

from __future__ import annotations

import json
import os
from pathlib import Path

import lxml.etree
import pytest

from ragline.cli import main
from ragline.errors import InputError
from ragline.ingest import load_folder
from ragline.ingest.html import load_html


def test_a_non_utf8_file_name_is_reported_and_skipped(tmp_path: Path) -> None:
    """Planted fault: no check of the name (the code before: UnicodeEncodeError in content_hash aborted
    the run, nothing indexed)."""
    root = os.fsencode(tmp_path)
    with open(os.path.join(root, b"lat\xe9.md"), "wb") as out:
        out.write(b"Latin-1 named notes")
    os.mkdir(os.path.join(root, b"d\xefr"))
    with open(os.path.join(root, b"d\xefr", b"inner.md"), "wb") as out:
        out.write(b"under a badly named folder")
    (tmp_path / "good.md").write_text("fine notes")
    report = load_folder(tmp_path)
    assert [d.id for d in report.documents] == ["good"]
    assert len(report.errors) == 2 and all(isinstance(e, InputError) for e in report.errors)
    for error in report.errors:
        str(error).encode("utf-8")  # printable: the bad byte is escaped
    assert any("lat\\xe9.md" in e.source for e in report.errors) and "UTF-8" in report.errors[0].reason


def test_the_cli_indexes_the_rest_of_a_folder_with_a_non_utf8_name(capsys, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    with open(os.path.join(os.fsencode(docs), b"lat\xe9.md"), "wb") as out:
        out.write(b"Latin-1 named notes")
    (docs / "good.md").write_text("fine notes")
    assert main(["index", str(docs), "--index", str(tmp_path / "idx"), "--embedder", "none", "--output", "json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert (result["added"], result["skipped"]) == (1, 1) and "lat\\xe9.md" in captured.err


@pytest.mark.parametrize("depth", [300, 2000])
def test_deeply_nested_html_keeps_its_text(tmp_path: Path, depth: int) -> None:
    """Planted fault: parsing without ``huge_tree`` (libxml2 stops at depth 256: the deep text and everything
    after it were lost with no report), or walking the tree by recursion past Python's limit."""
    page = tmp_path / "deep.html"
    page.write_text("<html><body><h1>Top</h1>" + "<div><script>hidden()</script>" * depth + "<p>DEEP text</p>"
                    + "</div>" * depth + "<p>after the nest</p></body></html>")  # fmt: skip
    document = load_html(page, Path("deep.html"))
    assert "DEEP text" in document.text and "after the nest" in document.text
    assert "hidden()" not in document.text and document.text.startswith("# Top")


def test_html_past_the_parser_limit_is_reported(tmp_path: Path) -> None:
    """Nothing past the parser's depth limit is lost in silence: libxml2 2.14 (lxml 6) stops at 2,048 levels and
    the file is reported; libxml2 2.12 (lxml 5.3, the lower bound) has no limit with ``huge_tree`` and the file is
    indexed whole. Planted fault: no look at the parser's error log (the code before indexed the text above the
    limit and said nothing of what followed)."""
    (tmp_path / "deep.html").write_text("<p>top</p>" + "<div>" * 3000 + "DEEP" + "</div>" * 3000 + "<p>after</p>")
    (tmp_path / "good.html").write_text("<p>fine</p>")
    report = load_folder(tmp_path)
    if lxml.etree.LIBXML_VERSION < (2, 13) and not report.errors:
        deep = next(d for d in report.documents if d.id == "deep")
        assert "DEEP" in deep.text and "after" in deep.text
        return
    assert [d.id for d in report.documents] == ["good"]
    (error,) = report.errors
    assert error.source.endswith("deep.html") and "2,048" in error.reason
