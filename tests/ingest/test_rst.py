from __future__ import annotations

from pathlib import Path

from ragline.ingest import load_folder
from ragline.ingest.markdown import sections_of
from ragline.ingest.rst import rst_to_markdown

GUIDE = """\
=============
Billing Guide
=============

:acl: finance, hr
:version: 3

See :ref:`the refunds section <refunds>` and `Python <https://python.org>`_.

Refunds
=======

.. note:: Refunds take 5 days.

.. _partial:

Partial refunds
---------------

::

  # not a heading
  code

Taxes
=====

VAT applies.
"""


def test_rst_sections_become_markdown_headings_with_levels_by_first_appearance() -> None:
    text, title, metadata = rst_to_markdown(GUIDE)
    assert title == "Billing Guide"
    assert metadata == {"acl": ["finance", "hr"], "version": 3}
    assert "# Billing Guide\n" in text and "\n## Refunds\n" in text and "\n### Partial refunds\n" in text
    assert "See the refunds section and Python." in text
    assert "note: Refunds take 5 days." in text and ".. _partial" not in text
    assert "\n  \\# not a heading" in text  # kept as text, never a heading
    assert ":acl:" not in text and "=====" not in text


def test_rst_file_loads_with_sections_and_metadata(tmp_path: Path) -> None:
    (tmp_path / "billing.rst").write_text(GUIDE.replace("\n", "\r\n"))
    [doc] = load_folder(tmp_path).documents
    assert doc.id == "billing" and doc.title == "Billing Guide" and doc.metadata["acl"] == ["finance", "hr"]
    paths = [s.path for s in sections_of(doc)]
    assert paths == [
        ("Billing Guide",),
        ("Billing Guide", "Refunds"),
        ("Billing Guide", "Refunds", "Partial refunds"),
        ("Billing Guide", "Taxes"),
    ]


def test_rst_without_headings_takes_the_file_name_as_title(tmp_path: Path) -> None:
    (tmp_path / "plain.rst").write_text("Just a paragraph.\n\nAnd another one.\n")
    [doc] = load_folder(tmp_path).documents
    assert doc.title == "plain" and doc.text.startswith("Just a paragraph.")
