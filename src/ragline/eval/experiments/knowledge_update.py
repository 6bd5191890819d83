"""Knowledge update and conflict (Lecture 12 §4.4): edit a document, re-sync, ask again; then a conflict.

The notes' claims: (a) after the 40 leaders are renamed in their documents, RAG answers the new name
100% of the time, with no retraining, while a closed-book model cannot change; (b) with the old
document kept and a "breaking news" document added, the reader answers the new name 0% and the old one
100%: it judges "which passage looks like an answer", not dates.

Steps, on the countries world (whole documents, BM25 top 5, the extractive reader): ask each
country's leader; replace each government document by its edited version (same id: the index
replaces it) and ask again; restore the originals and add one news document per country; ask again;
finally mark each old document ``superseded_by`` its news (metadata, as a sync job would) so the
pipeline's drop-superseded step removes it, and ask again. The closed-book LLM (optional, a small
cached sample) is asked before and after the edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from ragline.answer.context import build_context
from ragline.answer.pipeline import build_reader
from ragline.answer.versions import drop_superseded
from ragline.components import register
from ragline.eval.answers import contains_answer
from ragline.eval.experiments import Experiment, llm_of
from ragline.eval.experiments.readers import CLOSED_BOOK_PROMPT
from ragline.types import Document

RELATION = "leader"
K = 5
NEWS = "Breaking news: {country} has a new leader, {new}, who took office this week."


def _outcome(text: str, old: str, new: str) -> str:
    if contains_answer(text, [new]):
        return "new"
    if contains_answer(text, [old]):
        return "old"
    return "other"


def _shares(outcomes: Sequence[str]) -> dict[str, float]:
    n = max(len(outcomes), 1)
    return {kind: round(sum(o == kind for o in outcomes) / n, 4) for kind in ("new", "old", "other")}


def run(llm: Any = None, llm_questions: int = 10, reader_spec: str = f"extractive:top_k={K}") -> dict[str, Any]:
    from ragline.corpora.countries import TRAIN_SEED, build_countries
    from ragline.index import Index, IndexSettings
    from ragline.retrieve.registry import build_retriever

    corpus = build_countries()
    # New names from the training world: invented too, and disjoint from the evaluation world's.
    fresh = build_countries(TRAIN_SEED).entities[RELATION]
    documents = {d.id: d for d in corpus.documents}
    facts = [f for f in corpus.facts if f.fact_id.endswith(f"#{RELATION}")]
    cases = []
    for fact, new in zip(facts, fresh):
        doc = documents[fact.doc_id]
        country = str(doc.metadata["country"])
        cases.append(
            {"doc": doc, "country": country, "old": fact.value, "new": new, "question": f"Who is {country} led by?"}
        )
    index = Index.create(None, IndexSettings(embedder=None))
    index.add(corpus.documents)
    index.commit()
    retriever = build_retriever("bm25", index)
    reader = build_reader(reader_spec)

    def ask(drop: bool = False) -> list[str]:
        outcomes = []
        for case in cases:
            hits = retriever.search(case["question"], K)
            hits = drop_superseded(hits) if drop else hits
            answer = reader.read(case["question"], build_context(hits, 100_000))
            outcomes.append("other" if answer.abstained else _outcome(answer.text, case["old"], case["new"]))
        return outcomes

    def closed_book() -> list[str]:
        out = []
        for case in cases[:llm_questions]:
            messages = [
                {"role": "system", "content": CLOSED_BOOK_PROMPT},
                {"role": "user", "content": case["question"]},
            ]
            out.append(_outcome(llm.chat(messages, max_tokens=24), case["old"], case["new"]))
        return out

    steps: dict[str, Any] = {"before": {"rag": _shares(ask())}}
    if llm is not None:
        steps["before"]["closed_book"] = _shares(closed_book())
    edited = [
        Document(
            c["doc"].id,
            c["doc"].text.replace(c["old"], c["new"]),
            c["doc"].title,
            {**c["doc"].metadata, "version": int(c["doc"].metadata.get("version", 1)) + 1},
        )
        for c in cases
    ]
    index.add(edited)
    index.commit()
    steps["edited"] = {"rag": _shares(ask()), "documents": len(index)}
    if llm is not None:
        # The model read no document, so its answers cannot have moved (the same cached requests).
        steps["edited"]["closed_book"] = _shares(closed_book())
    index.add([c["doc"] for c in cases])  # the originals back
    news = [
        Document(
            f"news-{i:03d}",
            NEWS.format(country=c["country"], new=c["new"]),
            metadata={"doc_type": "news", "country": c["country"], "acl": ["all"]},
        )
        for i, c in enumerate(cases)
    ]
    index.add(news)
    index.commit()
    outcomes = ask()
    steps["news added"] = {
        "rag": _shares(outcomes),
        "documents": len(index),
        "news_retrieved": _news_retrieved(retriever, cases),
    }
    index.add(
        [
            Document(c["doc"].id, c["doc"].text, c["doc"].title, {**c["doc"].metadata, "superseded_by": n.id})
            for c, n in zip(cases, news)
        ]
    )
    index.commit()
    steps["old marked superseded"] = {"rag": _shares(ask(drop=True))}
    return {
        "experiment": "knowledge-update",
        "corpus": corpus.name,
        "questions": len(cases),
        "reader": reader.config(),
        "retriever": "bm25",
        "k": K,
        "news_template": NEWS,
        "closed_book_questions": llm_questions if llm is not None else 0,
        "llm": getattr(llm, "id", None),
        "steps": steps,
    }


def _news_retrieved(retriever: Any, cases: Sequence[dict[str, Any]]) -> float:
    """Share of questions whose top K holds the country's news document (the reader saw both)."""
    found = 0
    for case in cases:
        hits = retriever.search(case["question"], K)
        found += any(h.doc_id.startswith("news-") and case["country"] in h.text for h in hits)
    return round(found / max(len(cases), 1), 4)


def tables(payload: dict[str, Any]) -> list[Table]:
    table = Table(
        title=f"Knowledge update on {payload['corpus']} ({payload['questions']} leader questions, "
        f"BM25 top {payload['k']}): share answering the new name / the old one / other"
    )
    for column in ("step", "reader", "new", "old", "other"):
        table.add_column(column, justify="left" if column in ("step", "reader") else "right")
    for step, row in payload["steps"].items():
        for who in ("rag", "closed_book"):
            if who in row:
                shares = row[who]
                name = "RAG, extractive" if who == "rag" else f"closed book ({payload['closed_book_questions']})"
                table.add_row(step, name, f"{shares['new']:.2f}", f"{shares['old']:.2f}", f"{shares['other']:.2f}")
    return [table]


@register("experiment", "knowledge-update")
def experiment() -> Experiment:
    """Edit a document, then a conflicting one."""
    return Experiment(
        "knowledge-update", lambda args: run(llm=llm_of(args), llm_questions=min(args.closed_book, 40)), tables
    )
