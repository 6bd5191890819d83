"""graph-local and graph-global over the entity graph, and the derived-text ACL fuzz."""

from __future__ import annotations

import random

import pytest

from ragline.components import build, names
from ragline.index import Index
from ragline.index.filter_syntax import acl_filter
from ragline.index.settings import IndexSettings
from ragline.retrieve import graph_search
from ragline.retrieve.registry import build_retriever
from ragline.types import Document

PEOPLE = ["Alder Voss", "Brin Castell", "Cora Mendel", "Dario Fenn", "Elsa Quint", "Farid Oyelaran", "Greta Lund"]
PLACES = ["Port Vesna", "Ostrava Lipa", "Kellan Ridge", "Marrow Bay", "Tessaly"]
GROUPS = ["g0", "g1", "g2", "g3", "g4"]


def _world(seed: int = 3, n: int = 60) -> list[Document]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        a, b = rng.sample(PEOPLE, 2)
        place = rng.choice(PLACES)
        text = f"{a} met {b} in {place}. {b} later moved to {rng.choice(PLACES)} with {rng.choice(PEOPLE)}."
        docs.append(Document(f"d{i}", text, f"Note {i}", {"acl": rng.sample(GROUPS, rng.randint(1, 2))}))
    return docs


def _index(docs: list[Document]) -> Index:
    index = Index.create(None, IndexSettings())
    index.add(docs)
    index.commit()
    return index


def test_local_search_finds_the_chunks_of_the_question_entities_and_their_neighbours():
    """Planted fault: neighbour_weight ignored (only the question's entities) fails the neighbour assert."""
    docs = [
        Document("a", "Alder Voss founded the Tessaly Guild.", "A"),
        Document("b", "The Tessaly Guild trades in copper.", "B"),
        Document("c", "Copper prices fell in winter.", "C"),
    ]
    index = _index(docs)
    assert {"graph-local", "graph-global"} <= set(names("retriever"))
    ranked = [d for d, s in build_retriever("graph-local", index).rank("What did Alder Voss found?", 3) if s > 0]
    assert ranked[0] == "a" and "b" in ranked
    relations = build_retriever("graph-local", index).relations("Alder Voss")
    assert relations and relations[0]["sources"] == ["a"]


def test_global_search_hands_on_the_chunks_behind_the_best_report():
    """Planted fault: reports' sources dropped (rank returning report ids) fails the subset assert."""
    docs = _world()
    index = _index(docs)
    retriever = build_retriever("graph-global", index)
    reports = retriever.reports("Who met Cora Mendel in Port Vesna?", 3)
    assert reports and all(r.metadata["sources"] for r in reports)
    ranked = [d for d, _ in retriever.rank("Who met Cora Mendel in Port Vesna?", 10)]
    assert ranked and set(ranked) <= {d.id for d in docs}


def _leaks(index: Index, docs: list[Document], pairs: int, seed: int) -> tuple[int, int]:
    acl = {d.id: set(d.metadata["acl"]) for d in docs}
    local = build_retriever("graph-local", index)
    glob = build_retriever("graph-global", index)
    answers = build("reader", "global-search", index=index)
    rng = random.Random(seed)
    leaks = shown = read = 0
    for _ in range(pairs):
        mine = set(rng.sample(GROUPS, rng.randint(1, 3)))
        question = f"Who met {rng.choice(PEOPLE)} in {rng.choice(PLACES)}?"
        readable = lambda chunk, mine=mine: bool(acl[chunk] & mine)  # noqa: E731
        flt = acl_filter(sorted(mine))
        reports = glob.reports(question, 5, flt)
        shown += len(reports)
        for report in reports:
            leaks += not all(readable(s) for s in report.metadata["sources"])
            leaks += not (set(report.metadata["acl"] or ()) & mine)
        leaks += sum(not readable(d) for d, _ in glob.rank(question, 5, flt))
        leaks += sum(not readable(d) for d, _ in local.rank(question, 5, flt))
        leaks += sum(not readable(s) for r in local.relations(question, flt) for s in r["sources"])
        if _ % 5 == 0:  # global search's answer (every fifth pair: it reads as well as ranks)
            answer, context = answers.answer(question, flt)
            cited = [c.chunk_id for c in answer.citations] + [s.hit.doc_id for s in context.sources]
            leaks += sum(not readable(c) for c in cited)
            read += 1
    assert read == (pairs + 4) // 5
    return leaks, shown


@pytest.mark.slow
def test_derived_text_acl_fuzz_finds_no_leak_and_the_mutation_is_found(monkeypatch):
    """5,000 random principal/question pairs: no report, relation or chunk of graph-local / graph-global, and no
    source or citation of the global-search reader (1,000 of the pairs), a principal cannot read. Mutation check:
    the filter not applied to reports and relations (``allowed_ids`` answering "no restriction") must be found
    as leaks."""
    docs = _world()
    index = _index(docs)
    leaks, shown = _leaks(index, docs, 5000, seed=11)
    assert leaks == 0 and shown > 5000  # reports were shown, not withheld from everyone
    monkeypatch.setattr(graph_search, "allowed_ids", lambda index, flt: None)
    assert _leaks(_index(docs), docs, 300, seed=12)[0] > 0
