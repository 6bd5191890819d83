"""Conflicting ACL sources fail closed: a file whose sources disagree on its ACL is reported, not indexed.

The sources of one file's ACL: YAML front matter (a key may appear once), a ``FILE.meta.json`` sidecar,
HTML ``<meta name="acl">`` tags, a reStructuredText field list. Where two of them give different ACLs
the file is a ``MetadataError`` naming both, so its earlier indexed version leaves the index too.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.errors import MetadataError
from ragline.ingest import load_folder


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.write_text(text, "utf-8")
    return path


def only_error(root: Path) -> MetadataError:
    report = load_folder(root)
    assert [type(e) for e in report.errors] == [MetadataError], report.errors
    return report.errors[0]


def test_front_matter_and_sidecar_that_disagree_are_refused_naming_both(tmp_path: Path) -> None:
    """Planted fault: the sidecar's acl replacing the front matter's (the code before) made the hr file public."""
    write(tmp_path, "hr_review.md", "---\nacl: [hr]\n---\nDana's salary review.")
    write(tmp_path, "hr_review.md.meta.json", json.dumps({"acl": ["all"]}))
    write(tmp_path, "notice.md", "---\nacl: [all]\n---\nThe office closes early.")
    report = load_folder(tmp_path)
    assert [d.id for d in report.documents] == ["notice"]  # the rest of the folder loads
    (error,) = report.errors
    assert isinstance(error, MetadataError) and "hr_review.md" in error.source
    assert "front matter" in error.reason and "hr_review.md.meta.json" in error.reason
    assert "['hr']" in error.reason and "['all']" in error.reason


def test_sources_that_agree_load(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "---\nacl: hr\ntitle: A\n---\ntext")
    write(tmp_path, "a.md.meta.json", json.dumps({"acl": ["hr"], "version": 2}))
    write(tmp_path, "b.html", '<meta name="acl" content="hr, all"><meta name="ragline:acl" content="all,hr"><p>x</p>')
    report = load_folder(tmp_path)
    assert report.errors == []
    assert [(d.id, d.metadata["acl"]) for d in report.documents] == [("a", ["hr"]), ("b", ["all", "hr"])]


def test_a_repeated_front_matter_key_is_refused(tmp_path: Path) -> None:
    """Planted fault: PyYAML's plain safe_load keeps the last ``acl`` (here the wider one)."""
    write(tmp_path, "pay.md", "---\nacl: [hr]\ntitle: Pay\nacl: [all]\n---\nSalaries.")
    error = only_error(tmp_path)
    assert "'acl'" in error.reason and "lines 2 and 4" in error.reason


def test_a_repeated_sidecar_key_is_refused(tmp_path: Path) -> None:
    """Planted fault: plain ``json.loads`` keeps the last ``acl``: the hr file became readable by ``all``."""
    write(tmp_path, "pay.md", "Salaries.")
    write(tmp_path, "pay.md.meta.json", '{"acl": ["hr"], "acl": ["all"]}')
    error = only_error(tmp_path)
    assert "pay.md.meta.json" in error.source and "'acl' is given twice" in error.reason


def test_two_html_acl_tags_are_refused(tmp_path: Path) -> None:
    """Planted fault: the second ``<meta name="acl">`` replacing the first."""
    write(tmp_path, "pay.html", '<meta name="acl" content="hr"><meta name="acl" content="all"><p>Salaries.</p>')
    error = only_error(tmp_path)
    assert "acl" in error.reason and "hr" in error.reason and "all" in error.reason


def test_html_and_rst_against_their_sidecars(tmp_path: Path) -> None:
    write(tmp_path, "pay.html", '<meta name="acl" content="hr"><p>Salaries.</p>')
    write(tmp_path, "pay.html.meta.json", json.dumps({"acl": ["all"]}))
    write(tmp_path, "leave.rst", ":acl: hr\n:acl: all\n\nLeave rules.\n")
    write(tmp_path, "bonus.rst", ":acl: hr\n\nBonus rules.\n")
    write(tmp_path, "bonus.rst.meta.json", json.dumps({"acl": "all"}))
    report = load_folder(tmp_path)
    assert report.documents == []
    assert sorted(Path(e.source).name for e in report.errors) == ["bonus.rst", "leave.rst", "pay.html"]
    assert all(isinstance(e, MetadataError) for e in report.errors)


# -- the fuzz: whatever the sources say, the stored ACL is never wider than any one of them -------------------
GROUPS = st.lists(st.sampled_from(["all", "hr", "finance", "legal"]), max_size=3, unique=True)


def _groups(value: object) -> set[str]:
    return {str(v) for v in value} if isinstance(value, list) else set() if value is None else {str(value)}


Case = tuple[str, str, list[list[str]], list[str] | None]


@st.composite
def sourced_file(draw: st.DrawFn) -> Case:
    """(file name, its text, the ACLs its own metadata gives, the sidecar's ACL or None)."""
    kind = draw(st.sampled_from(["md", "html", "rst"]))
    embedded = draw(st.lists(GROUPS, max_size=3))
    if kind == "md":
        lines = [f"acl: {json.dumps(acl)}" for acl in embedded] + draw(st.lists(st.just("version: 2"), max_size=1))
        lines = draw(st.permutations(lines))
        text = ("---\n" + "\n".join(lines) + "\n---\n" if lines else "") + "Salary bands by grade."
    elif kind == "html":
        tags = [f'<meta name="{draw(st.sampled_from(["acl", "ragline:acl"]))}" content="{", ".join(acl)}">'
                for acl in embedded]  # fmt: skip
        text = "".join(tags) + "<p>Salary bands by grade.</p>"
        embedded = [acl for acl in embedded if acl]  # an empty content attribute gives no acl
    else:
        text = "".join(f":acl: {', '.join(acl)}\n" for acl in embedded) + "\nSalary bands by grade.\n"
    sidecar = draw(st.none() | GROUPS)
    return f"doc.{kind}", text, embedded, sidecar


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sourced_file())
def test_the_stored_acl_is_never_wider_than_any_source(case: Case) -> None:
    """Planted fault: any of the last-one-wins merges (sidecar over front matter, last YAML key, last meta tag,
    last rst field) stores an ACL wider than one of the sources, and the fuzz finds it."""
    name, text, embedded, sidecar = case
    sources = [set(acl) for acl in embedded] + ([] if sidecar is None else [set(sidecar)])
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write(root, name, text)
        if sidecar is not None:
            write(root, name + ".meta.json", json.dumps({"acl": sidecar}))
        report = load_folder(root)
    if not report.documents:
        assert [type(e) for e in report.errors] == [MetadataError]
        # Refused only where the sources disagree, or YAML repeats the key (refused whatever the values).
        assert len({frozenset(s) for s in sources}) > 1 or (name.endswith(".md") and len(embedded) > 1)
        return
    stored = _groups(report.documents[0].metadata.get("acl"))
    for source in sources:
        assert stored <= source, (text, sidecar, stored)
    if not sources:
        assert "acl" not in report.documents[0].metadata
