"""The reader global-search: map over community reports, reduce to one answer citing the chunks behind them."""

from __future__ import annotations

from ragline.answer import global_search
from ragline.components import build, names
from ragline.index import Index
from ragline.index.filter_syntax import acl_filter
from ragline.types import Document

CREWS = [
    ("crew-kestrel", "Kestrel", "Mira Olsen", "Dunmore", ["a"]),
    ("crew-heron", "Heron", "Tomas Reyes", "Dunmore", ["a"]),
    ("crew-plover", "Plover", "Ana Lutz", "Ashby", ["a"]),
    ("crew-wren", "Wren", "Jon Vale", "Dunmore", ["b"]),
]


def _index() -> Index:
    index = Index.create(None, None)
    index.add(
        Document(
            i, f"The {name} crew is led by {lead}. The {name} crew is based at the {yard} yard.", name, {"acl": acl}
        )
        for i, name, lead, yard, acl in CREWS
    )
    index.commit()
    return index


def test_global_search_lists_from_the_reports_and_cites_only_chunks_the_asker_may_read():
    """The answer is reduced from the reports' sentences and cites the chunks behind them; a principal of group
    "a" never gets Wren (group "b") as an item or a citation.
    Planted fault: the filter not passed to the report ranking (`ranked_reports(question, k)`) lists Wren."""
    index = _index()
    assert "global-search" in names("reader")
    reader = build("reader", "global-search", index=index)
    assert reader.retrieves
    question = "Which crews are based at the Dunmore yard?"
    everyone, context = reader.answer(question, acl_filter(["a", "b"]))
    assert set(everyone.details["items"]) == {"Kestrel", "Heron", "Wren"}
    assert {c.chunk_id for c in everyone.citations} == {"crew-kestrel", "crew-heron", "crew-wren"}
    assert everyone.details["reports"] and all(s.hit.doc_id.startswith("crew-") for s in context.sources)
    only_a, context = reader.answer(question, acl_filter(["a"]))
    assert set(only_a.details["items"]) == {"Kestrel", "Heron"}
    assert "crew-wren" not in {s.hit.doc_id for s in context.sources} | {c.chunk_id for c in only_a.citations}
    assert global_search.GlobalSearchReader.retrieves
