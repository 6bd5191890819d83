"""The agent loop's small helpers: each attempt's query and rung, evidence one sentence a line, and the
reader's numbering of all hops' evidence."""

from __future__ import annotations

from typing import Any

from ragline.text.sentences import sentence_texts
from ragline.types import Hit


def _attempts(query: str, rungs: int, retries: int, analyze: Any) -> list[tuple[str, int]]:
    """(query text, ladder rung) per attempt: the query; its terms alone (a rewrite); then costlier rungs."""
    rewritten = " ".join(dict.fromkeys(w for w in query.replace("?", " ").split() if analyze(w)))
    plan = [(query, 0)]
    if rewritten and rewritten != query:
        plan.append((rewritten, 0))
    plan += [(query, rung) for rung in range(1, rungs)]
    return plan[: retries + 1]


def _sentence_lines(hit: Hit) -> Hit:
    """``hit`` with one sentence a line, whitespace collapsed (``ragline.text.sentences``): a document
    rebuilt from its chunks has line breaks where chunk boundaries fell, and a bridge name found in a
    sentence ("Blue Lake") is then looked up in the text as written, with single spaces."""
    text = "\n".join(sentence_texts(hit.text))
    return Hit(hit.doc_id, hit.score, hit.rank, hit.title, text, hit.metadata, hit.parent)


def _renumber(per_hop: list[list[Hit]]) -> list[Hit]:
    """Every hop's evidence ranked 1..n, the last hop first: in a decomposed chain it answers the question
    the reader is asked, and earlier hops (the bridges' evidence) follow, latest first. ``_by_grade`` keeps
    this order among passages of equal grade."""
    ordered = [h for hits in reversed(per_hop) for h in hits]
    return [Hit(h.doc_id, h.score, i, h.title, h.text, h.metadata, h.parent) for i, h in enumerate(ordered, start=1)]


def _by_grade(hits: list[Hit], grades: list[float]) -> list[Hit]:
    """``hits`` re-ranked 1..n by their grade against the question the reader is asked, best first; equal
    grades keep their order. A hop that graded low (a single-hop question whose best sentence misses a word)
    is followed by interleaved hops that, excluding the documents already read, bring only other records:
    placed first, they pushed the one passage that names the question's code out of the reader's top sources."""
    order = sorted(range(len(hits)), key=lambda i: -grades[i])
    return [
        Hit(hits[i].doc_id, hits[i].score, n, hits[i].title, hits[i].text, hits[i].metadata, hits[i].parent)
        for n, i in enumerate(order, start=1)
    ]
