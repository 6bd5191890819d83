"""The ``ppr`` retriever and the entity graph it walks (no embedder: the first stage is BM25)."""

from __future__ import annotations

import random

from ragline.components import names
from ragline.index import Index
from ragline.index.filter_syntax import acl_filter
from ragline.index.settings import IndexSettings
from ragline.retrieve.registry import build_retriever
from ragline.structures.entities import RuleEntityExtractor, entity_key, query_keys
from ragline.structures.graph import build_graph, derived_acl
from ragline.types import Document

DOCS = [
    Document("film", "Night Harbor is a 1990 film directed by Marta Quell. It was shot in Vesna.", "Night Harbor"),
    Document("quell", "Marta Quell was born in the town of Ostrava Lipa and studied painting.", "Marta Quell"),
    Document("other", "Harbor seals rest on rocks near the harbor at night.", "Harbor seal"),
    Document("vesna", "Vesna is a port town known for its night market.", "Vesna"),
]


def _index(docs: list[Document]) -> Index:
    index = Index.create(None, IndexSettings())
    index.add(docs)
    index.commit()
    return index


def test_rules_find_names_not_sentence_openers():
    """Planted fault: keeping a capitalized sentence-opening word ("It") as an entity fails the last assert."""
    names_ = RuleEntityExtractor().extract(DOCS[0].text, DOCS[0].title).names()
    assert "Marta Quell" in names_ and "Night Harbor" in names_ and "Vesna" in names_
    assert not any(entity_key(n) == "it" for n in names_)
    assert entity_key("The Beatles (band)") == entity_key("beatles")


def test_query_keys_take_lower_case_names_of_several_words_only():
    """Planted fault: matching one lower-case word ("harbor") as a name fails the second assert."""
    keys = {"night harbor": 0, "harbor": 1}
    assert query_keys("who directed night harbor", keys) == ["night harbor"]
    assert query_keys("where do seals rest near the harbor", keys) == []


def test_ppr_reaches_the_bridge_passage_that_shares_no_word_with_the_question():
    """The birthplace of the director is in a passage naming neither the film nor "directed"; BM25 alone ranks
    it below the harbor-seal passage, ppr seeded by the entity Night Harbor reaches it through Marta Quell.
    Planted fault: a walk that never leaves the seed (damping 0) leaves "quell" below "other", in BM25's order."""
    index = _index(DOCS)
    question = "Where was the director of Night Harbor born?"
    assert "ppr" in names("retriever")
    bm25 = [d for d, _ in build_retriever("bm25", index).rank(question, 4)]
    ranked = [d for d, _ in build_retriever("ppr:first=bm25,seed_k=0", index).rank(question, 4)]
    assert bm25.index("quell") > bm25.index("other")
    assert ranked[0] == "film" and ranked.index("quell") < ranked.index("other")
    still = [d for d, _ in build_retriever("ppr:first=bm25,seed_k=0,damping=0", index).rank(question, 4)]
    assert still.index("quell") > still.index("other")


def test_ppr_filter_applies_inside_the_walk():
    """Random principals over random ACLs: every passage ppr returns is readable, and k of them are returned
    whenever k readable passages exist. Planted fault: not masking the walk (``keep=None``) returns unreadable
    passages reached through entities."""
    rng = random.Random(7)
    groups = ["a", "b", "c"]
    docs = [Document(d.id, d.text, d.title, {"acl": rng.sample(groups, rng.randint(1, 2))}) for d in DOCS]
    index = _index(docs)
    ppr = build_retriever("ppr:first=bm25", index)
    for _ in range(60):
        mine = rng.sample(groups, rng.randint(1, 2))
        readable = {d.id for d in docs if set(d.metadata["acl"]) & set(mine)}
        got = [d for d, _ in ppr.rank("Where was the director of Night Harbor born?", 3, acl_filter(mine))]
        assert set(got) <= readable


def test_graph_communities_and_reports_carry_their_sources_acl():
    """Each report is built from chunks of one ACL and carries it; derived_acl is the intersection.
    Planted fault: a union in derived_acl fails the first assert."""
    assert derived_acl([{"acl": ["a", "b"]}, {"acl": ["b", "c"]}]) == ["b"]
    assert derived_acl([{"acl": ["a"]}, {}]) == []
    assert derived_acl([{}, {}]) is None
    docs = [Document(d.id, d.text, d.title, {"acl": ["x"] if d.id == "quell" else ["y"]}) for d in DOCS]
    graph = build_graph(docs)
    assert graph.communities and graph.communities[0]
    acl_of = {d.id: d.metadata["acl"] for d in docs}
    for report in graph.reports:
        assert report.sources and all(acl_of[s] == report.acl for s in report.sources)
