from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.errors import InputError, MetadataError
from ragline.ingest import load_folder
from ragline.ingest.html import load_html
from ragline.ingest.markdown import sections_of

PAGE = """<!DOCTYPE html>
<html><head>
<title>Travel  Policy | Intranet</title>
<meta charset="utf-8">
<meta name="acl" content="all, finance">
<meta name="version" content="3">
<meta name="ragline:department" content="Finance">
<meta name="viewport" content="width=device-width">
<script>var banner = "# Not a heading"; trackVisitor();</script>
<style>p { color: red }</style>
</head>
<body>
<header><a href="/">Home</a><nav><ul><li><a href="/hr">HR</a></li><li><a href="/it">IT</a></li></ul></nav></header>
<main>
<article>
<header><h1>Travel Policy</h1></header>
<p>This policy   covers <b>business</b> travel.<br>It replaces the 2019 rules.</p>
<p># of trips per year is not limited.</p>
<h2>Receipts</h2>
<p>Submit receipts within 30 days.</p>
<ul>
  <li>Flights
    <ul><li>economy under 6 hours</li><li>business above</li></ul>
  </li>
  <li><p>Rail:</p><p>standard class</p></li>
</ul>
<h2>Limits</h2>
<table>
  <caption>Daily limits</caption>
  <tr><th>Item</th><th>Limit</th></tr>
  <tr><td>Meals</td><td>$60 | day</td></tr>
  <tr><td>Hotel</td><td>$180</td><td>per night</td></tr>
</table>
<pre># shell comment, not a heading
claim --submit</pre>
<aside>Related: the meals policy</aside>
<form><input name="q"><button>Search</button></form>
<div hidden>hidden text</div><div style="display: none">invisible text</div>
</article>
</main>
<footer>Copyright 2026 Orrin Grid</footer>
</body></html>
"""


def write(root: Path, name: str, data: bytes | str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_a_page_becomes_markdown_like_text_without_boilerplate(tmp_path: Path) -> None:
    path = write(tmp_path, "policies/travel.html", PAGE)
    document = load_html(path, Path("policies/travel.html"))
    assert document.id == "policies/travel" and document.source == "policies/travel.html"
    assert document.title == "Travel Policy | Intranet"
    assert document.metadata == {"acl": ["all", "finance"], "version": 3, "department": "Finance"}
    assert document.text == (
        "# Travel Policy\n\n"
        "This policy covers business travel.\nIt replaces the 2019 rules.\n\n"
        "\\# of trips per year is not limited.\n\n"
        "## Receipts\n\n"
        "Submit receipts within 30 days.\n\n"
        "- Flights\n  - economy under 6 hours\n  - business above\n- Rail: standard class\n\n"
        "## Limits\n\n"
        "Daily limits\n"
        "| Item | Limit |  |\n| --- | --- | --- |\n| Meals | $60 \\| day |  |\n| Hotel | $180 | per night |\n\n"
        "```\n# shell comment, not a heading\nclaim --submit\n```"
    )
    for boilerplate in ("Home", "HR", "trackVisitor", "color", "Related", "Search", "hidden", "invisible", "Copyright"):
        assert boilerplate not in document.text
    paths = [s.path for s in sections_of(document)]
    assert paths == [("Travel Policy",), ("Travel Policy", "Receipts"), ("Travel Policy", "Limits")]


def test_broken_html_still_parses_and_the_first_h1_is_the_title(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.htm", "<div><h1>Grid <i>maintenance</h1><p>Substations are <b>inspected<p>yearly.")
    document = load_html(path, Path("broken.htm"))
    assert document.title == "Grid maintenance"
    assert document.text.startswith("# Grid maintenance\n\nSubstations are inspected")
    assert "yearly." in document.text


def test_layout_tables_are_read_as_blocks_not_as_one_table(tmp_path: Path) -> None:
    page = "<table><tr><td><h1>Old site</h1><p>First paragraph.</p></td><td><p>Second.</p></td></tr></table>"
    document = load_html(write(tmp_path, "old.html", page), Path("old.html"))
    assert document.text == "# Old site\n\nFirst paragraph.\n\nSecond."


def test_encoding_falls_back_to_the_meta_charset_then_windows_1252(tmp_path: Path) -> None:
    declared = '<meta charset="iso-8859-1"><p>caf\xe9</p>'.encode("latin-1")
    assert load_html(write(tmp_path, "a.html", declared), Path("a.html")).text == "café"
    undeclared = "<p>\u201cquoted\u201d</p>".encode("cp1252")
    assert load_html(write(tmp_path, "b.html", undeclared), Path("b.html")).text == "\u201cquoted\u201d"


def test_sidecar_metadata_overrides_meta_tags(tmp_path: Path) -> None:
    page = '<meta name="acl" content="hr"><meta name="version" content="1"><h1>T</h1><p>x</p>'
    path = write(tmp_path, "p.html", page)
    write(tmp_path, "p.html.meta.json", json.dumps({"acl": ["hr"], "version": 2, "title": "Sidecar title"}))
    document = load_html(path, Path("p.html"))
    assert document.metadata == {"acl": ["hr"], "version": 2} and document.title == "Sidecar title"
    write(tmp_path, "p.html.meta.json", json.dumps({"acl": ["all"]}))  # an ACL the page does not give: refused
    with pytest.raises(MetadataError, match="p.html.meta.json"):
        load_html(path, Path("p.html"))


@pytest.mark.parametrize(
    "page",
    [
        b"",
        b"   \n",
        b"<html><head><title>Only a title</title></head><body></body></html>",
        b"<body><script>alert(1)</script><nav>Home</nav></body>",
    ],
)
def test_a_page_without_text_is_reported_empty(tmp_path: Path, page: bytes) -> None:
    path = write(tmp_path, "empty.html", page)
    with pytest.raises(InputError, match="empty") as caught:
        load_html(path, Path("empty.html"))
    assert caught.value.source == str(path)


def test_load_folder_dispatches_html_and_reports_bad_pages(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "# A\n\ntext")
    write(tmp_path, "b.html", PAGE)
    write(tmp_path, "c.HTM", "<p>upper-case suffix</p>")
    write(tmp_path, "d.html", "<nav>menu only</nav>")
    write(tmp_path, "e.html", b"\x00\x01binary")
    report = load_folder(tmp_path)
    assert [d.id for d in report.documents] == ["a", "b", "c"]
    assert sorted((Path(e.source).name, e.reason.split(" ")[0]) for e in report.errors) == [
        ("d.html", "empty:"),
        ("e.html", "looks"),
    ]
    assert load_folder(tmp_path, max_bytes=100).errors[0].reason.endswith("(raise --max-file-mb)")
