"""Small-to-big at equal budget (Lecture 2 §5.4): hit rate against covered evidence.

The lecture's trade-off: small chunks match a question better (their text is about one thing), but one
small chunk holds little of what an answer needs; reading each small chunk's parent section carries more
evidence, and at an equal context budget fewer candidates fit. Each arm indexes the corpus with one
chunker, retrieves the top ``DEPTH`` chunks and runs the pipeline's expand stage (``chunk``,
``sentences`` or ``section``, ``ragline.retrieve.expand``) with the same total budget of characters,
so every arm hands the reader at most the same amount of text:

    plain            ordinary chunks (one per section), read as they are
    small            one sentence a chunk, read as it is
    small+sentences  one sentence a chunk, read with two sentences on each side
    small+section    one sentence a chunk, read as its enclosing section

Per question, with evidence located in its documents (Orrin Grid's annotated answer-bearing sentences;
for a questions folder, the sentences of the supporting documents that contain an answer):

    gold@1      the first retrieved chunk overlaps an evidence sentence (the match, before expansion)
    hit         some passage of the context overlaps an evidence sentence (a gold chunk was read)
    covered     the share of the question's evidence sentences whole inside the context
    answer      an answer string (or alias) occurs in the context

Each arm is compared with ``plain`` by paired tests (``ragline.eval.stats.compare``) on ``covered``
and ``hit``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rich.table import Table

from ragline.components import build, register
from ragline.eval.experiments import Experiment
from ragline.index.filters import FilterLike, acl_filter
from ragline.index.store import IndexSettings
from ragline.ingest.pipeline import IngestConfig, build_index
from ragline.retrieve.base import hits_for
from ragline.text.sentences import split_sentences
from ragline.types import Document, Hit

DEPTH = 20  # chunks retrieved before expansion; the budget, not this, bounds the context
BUDGETS = (500, 1000, 2000)  # characters of context over all passages
SMALL = "sentences:window=1"
ARMS: dict[str, tuple[str, str]] = {  # name -> (chunker, expander)
    "plain": ("structure:max_words=200", "chunk"),
    "small": (SMALL, "chunk"),
    "small+sentences": (SMALL, "sentences:window=2"),
    "small+section": (SMALL, "section"),
}
RETRIEVERS = ("bm25", "hybrid")
METRICS = ("gold@1", "hit", "covered", "answer")


@dataclass
class EvidenceQuestion:
    """A question with the spans of its documents that an answer must come from."""

    id: str
    text: str
    type: str
    answers: list[str]
    evidence: list[tuple[str, int, int]]  # (document id, start, end) of each evidence sentence
    filter: FilterLike = None


@dataclass
class EvidenceSet:
    name: str
    documents: list[Document]
    questions: list[EvidenceQuestion]
    skipped: int = 0  # questions whose evidence could not be located in their documents
    notes: list[str] = field(default_factory=list)


def _locate(documents: dict[str, Document], doc_id: str, sentence: str) -> tuple[str, int, int] | None:
    document = documents.get(doc_id)
    start = document.text.find(sentence) if document is not None else -1
    return (doc_id, start, start + len(sentence)) if start >= 0 else None


def orrin_set(seed: int | None = None) -> EvidenceSet:
    """Orrin Grid's answerable questions, their annotated evidence sentences, each as the asking user."""
    from ragline.corpora.orrin import DEFAULT_SEED, build_orrin

    corpus = build_orrin(DEFAULT_SEED if seed is None else seed)
    documents = {d.id: d for d in corpus.documents}
    questions, skipped = [], 0
    for q in corpus.questions:
        if not q.gold_doc_ids or not q.evidence:
            continue
        located = [_locate(documents, doc_id, sentence) for doc_id, sentence in q.evidence]
        if None in located:
            skipped += 1
            continue
        spans = [span for span in located if span is not None]
        questions.append(EvidenceQuestion(q.id, q.text, q.type, q.answers, spans, acl_filter(q.user_groups)))
    return EvidenceSet(corpus.name, corpus.documents, questions, skipped)


def dataset_set(path: str, limit: int | None = None) -> EvidenceSet:
    """A questions folder (``answers``, ``supporting_ids``): evidence = the supporting documents'
    sentences that contain an answer. Questions with no such sentence (unanswerable ones) are left out."""
    from ragline.errors import InputError
    from ragline.eval.datasets import load_dataset

    dataset = load_dataset(path, "test")
    if not dataset.questions:
        raise InputError(
            str(path),
            "small-to-big needs a questions folder (questions.jsonl with answers and "
            "supporting_ids), not a retrieval-only BEIR folder",
        )
    documents = {d.id: d for d in dataset.corpus}
    questions, skipped = [], 0
    for q in dataset.questions:
        answers = [str(a) for a in q.get("answers") or [] if str(a).strip()]
        if not answers:
            continue
        if limit is not None and len(questions) + skipped >= limit:
            break
        spans = []
        for doc_id in q.get("supporting_ids") or []:
            document = documents.get(str(doc_id))
            if document is None:
                continue
            for start, end in split_sentences(document.text):
                if any(_contains(document.text[start:end], a) for a in answers):
                    spans.append((document.id, start, end))
        if not spans:
            skipped += 1
            continue
        questions.append(EvidenceQuestion(str(q["id"]), str(q["question"]), str(q.get("type", "all")), answers, spans))
    return EvidenceSet(dataset.name, dataset.corpus, questions, skipped)


def _contains(text: str, answer: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(answer.lower()) + r"(?!\w)", text.lower()) is not None


def _span(hit: Hit) -> tuple[str, int, int] | None:
    """(document id, start, end) of a hit or passage in its document."""
    start, end = hit.metadata.get("start"), hit.metadata.get("end")
    if not isinstance(start, int) or not isinstance(end, int):
        return None
    return str(hit.metadata.get("doc_id") or hit.document_id), start, end


def _overlaps(span: tuple[str, int, int] | None, evidence: Sequence[tuple[str, int, int]]) -> bool:
    return span is not None and any(d == span[0] and s < span[2] and e > span[1] for d, s, e in evidence)


def judge(question: EvidenceQuestion, hits: Sequence[Hit], context: Sequence[Hit]) -> dict[str, float]:
    """The four per-question figures (see the module docstring) of ranked chunks and the context read."""
    spans = [_span(p) for p in context]
    covered = sum(
        any(s is not None and s[0] == d and s[1] <= start and end <= s[2] for s in spans)
        for d, start, end in question.evidence
    )
    text = "\n".join(p.text for p in context)
    return {
        "gold@1": float(bool(hits) and _overlaps(_span(hits[0]), question.evidence)),
        "hit": float(any(_overlaps(s, question.evidence) for s in spans)),
        "covered": covered / len(question.evidence),
        "answer": float(any(_contains(text, a) for a in question.answers)),
    }


def run_set(
    evidence_set: EvidenceSet,
    arms: dict[str, tuple[str, str]] | None = None,
    budgets: Sequence[int] = BUDGETS,
    retrievers: Sequence[str] = RETRIEVERS,
    embedder: str | None = "minilm",
    depth: int = DEPTH,
) -> dict[str, Any]:
    """Every arm x retriever x budget on one evidence set: means, context size, paired tests vs ``plain``."""
    from ragline.answer.context import approx_tokens
    from ragline.eval.stats import compare

    arms = ARMS if arms is None else arms
    needs_vectors = any(r != "bm25" for r in retrievers)
    indexes = {}
    for chunker in dict.fromkeys(c for c, _ in arms.values()):
        settings = IndexSettings(embedder=embedder if needs_vectors else None, vector_index="flat")
        indexes[chunker] = build_index(evidence_set.documents, IngestConfig(chunker), settings)
    per_query: dict[tuple[str, str, int], dict[str, dict[str, float]]] = {}
    rows = []
    for retriever_spec in retrievers:
        ranked = {}  # (chunker, question id) -> hits: each index is searched once per question
        for chunker, index in indexes.items():
            retriever = build("retriever", retriever_spec, index=index)
            for q in evidence_set.questions:
                ranked[chunker, q.id] = hits_for(index, retriever.rank(q.text, depth, q.filter))
        for arm, (chunker, expander_spec) in arms.items():
            for budget in budgets:
                expander = build("expander", _with_budget(expander_spec, budget), index=indexes[chunker])
                scores, tokens, passages = {}, [], []
                for q in evidence_set.questions:
                    hits = ranked[chunker, q.id]
                    context = expander.expand(q.text, hits)
                    scores[q.id] = judge(q, hits, context)
                    tokens.append(approx_tokens("\n".join(p.text for p in context)))
                    passages.append(len(context))
                per_query[arm, retriever_spec, budget] = scores
                rows.append(
                    {
                        "arm": arm,
                        "chunker": chunker,
                        "expander": expander.config(),
                        "retriever": retriever_spec,
                        "budget_chars": budget,
                        "n": len(scores),
                        **{m: round(float(np.mean([s[m] for s in scores.values()])), 4) for m in METRICS},
                        "context_tokens_p50": float(np.median(tokens)),
                        "passages_mean": round(float(np.mean(passages)), 2),
                        "by_type": _by_type(evidence_set.questions, scores),
                    }
                )
    for row in rows:
        base = per_query.get(("plain", row["retriever"], row["budget_chars"]))
        if base is None or row["arm"] == "plain" or len(base) < 2:  # a paired test needs two questions
            continue
        mine = per_query[row["arm"], row["retriever"], row["budget_chars"]]
        row["vs_plain"] = {
            m: _brief(compare({k: v[m] for k, v in base.items()}, {k: v[m] for k, v in mine.items()}))
            for m in ("hit", "covered")
        }
    return {
        "corpus": evidence_set.name,
        "questions": len(evidence_set.questions),
        "questions_skipped": evidence_set.skipped,
        "chunks": {chunker: len(index) for chunker, index in indexes.items()},
        "depth": depth,
        "rows": rows,
    }


def _by_type(questions: Sequence[EvidenceQuestion], scores: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Mean hit and covered per question type (only when there is more than one type)."""
    types = sorted({q.type for q in questions})
    if len(types) < 2:
        return {}
    out = {}
    for kind in types:
        ids = [q.id for q in questions if q.type == kind]
        means = {m: round(float(np.mean([scores[i][m] for i in ids])), 4) for m in ("hit", "covered")}
        out[kind] = {"n": len(ids), **means}
    return out


def _with_budget(spec: str, budget: int) -> str:
    """The expander spec with ``max_chars`` and ``total_chars`` set to the budget (one passage may fill it)."""
    separator = "," if ":" in spec else ":"
    return f"{spec}{separator}max_chars={budget},total_chars={budget}"


def _brief(comparison: Any) -> dict[str, float]:
    return {
        "delta": round(comparison["delta"], 4),
        "p": round(comparison["p_randomization"], 4),
        "ci": [round(x, 4) for x in comparison["ci"]],
    }


def run(sets: Sequence[EvidenceSet], embedder: str | None = "minilm", **options: Any) -> dict[str, Any]:
    """``run_set`` on each evidence set."""
    return {"experiment": "small-to-big", "sets": [run_set(s, embedder=embedder, **options) for s in sets]}


def tables(payload: dict[str, Any]) -> list[Table]:
    out = []
    for result in payload["sets"]:
        table = Table(
            title=f"Small-to-big on {result['corpus']} ({result['questions']} questions, top "
            f"{result['depth']} chunks, equal character budget; p: randomization vs plain)"
        )
        for column in ("retriever", "budget", "arm", *METRICS, "tokens p50", "passages", "covered vs plain"):
            table.add_column(column, justify="left" if column in ("retriever", "arm") else "right")
        for row in result["rows"]:
            versus = row.get("vs_plain", {}).get("covered")
            cell = f"{versus['delta']:+.3f} (p {versus['p']:.3f})" if versus else "—"
            table.add_row(
                row["retriever"],
                str(row["budget_chars"]),
                row["arm"],
                *(f"{row[m]:.3f}" for m in METRICS),
                f"{row['context_tokens_p50']:.0f}",
                f"{row['passages_mean']:.1f}",
                cell,
            )
        out.append(table)
    return out


def from_args(args: Any) -> dict[str, Any]:
    """--dataset's evidence set (else Orrin's, --seed), with --embedder and the --retriever legs."""
    sets = [dataset_set(args.dataset, args.limit)] if args.dataset else [orrin_set(args.seed)]
    return run(sets, args.embedder, retrievers=args.retriever or RETRIEVERS)


@register("experiment", "small-to-big")
def experiment() -> Experiment:
    """Small chunks read as they are, with a sentence window or as their section, vs plain chunks, at equal
    budgets: gold chunk at 1 and read vs share of the evidence in the context."""
    return Experiment("small-to-big", from_args, tables)
