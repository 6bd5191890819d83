"""Closed book vs oracle passage vs RAG (Lecture 12 §4.2), and the k sweep of recall vs reader EM.

The notes' claims: a closed-book model answers an invented world's questions almost never (3.5% EM),
the reader given the right document almost always (100%), RAG in between and bounded by retrieval
(at k = 1 BM25's paraphrase EM equals its R@1); raising k to 5 lets the reader pick the answer from
more candidates ("the reader acts as a reranker"), while more sources also mean more distractors.

Rows: ``closed book`` is the local LLM asked the bare question, on a fixed sample (the model is slow on
the shared CPU; its replies are cached, so a rerun is instant); ``oracle`` is the extractive reader
given the question's gold documents; ``RAG r k=K`` the extractive reader over retriever r's top K;
each ``--config`` adds its whole pipeline as a row. The sweep reads the top k of one retriever for
k = 1 ... 20: Recall@k (all gold documents retrieved) beside EM; the extractive reader weighs a
source by its rank (its position bias), so EM can fall while recall rises.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from rich.table import Table

from ragline.answer.context import build_context
from ragline.components import register
from ragline.corpora.base import Question
from ragline.eval.answers import contains_answer, exact_match
from ragline.eval.experiments import Experiment, configs_of, llm_of
from ragline.types import Hit

DEFAULT_LLM = "local:qwen2.5-coder-0.5b"
CLOSED_BOOK_QUESTIONS = 40
RAG_KS = (1, 5)
SWEEP_KS = (1, 3, 5, 10, 20)
RETRIEVERS = ("bm25", "dense", "hybrid")
BUDGET = 100_000  # no token budget: k alone decides what the reader sees
CLOSED_BOOK_PROMPT = "Answer the question with the answer only (a name, a year or a number), no sentence."


def golds(question: Question) -> list[str]:
    return [question.answer, *question.aliases]


def _rates(outcomes: Sequence[tuple[str, float]]) -> dict[str, Any]:
    by_type: dict[str, list[float]] = defaultdict(list)
    for qtype, value in outcomes:
        for group in dict.fromkeys((qtype, "all")):  # a dataset's one type is "all": count it once
            by_type[group].append(value)
    ordered = sorted(by_type.items(), key=lambda item: item[0] == "all")
    return {t: {"n": len(v), "em": round(sum(v) / len(v), 4)} for t, v in ordered}


def _hit(doc: Any, rank: int) -> Hit:
    return Hit(doc.id, 1.0 / rank, rank, doc.title, doc.text, dict(doc.metadata), doc.parent)


def dataset_corpus(path: str, embedder: str | None, limit: int | None = None) -> tuple[Any, Any]:
    """A questions folder (``questions.jsonl`` with answers) as a corpus of questions, and its index."""
    from types import SimpleNamespace

    from ragline.errors import InputError
    from ragline.eval.datasets import load_dataset
    from ragline.index import Index, IndexSettings

    dataset = load_dataset(path, "test")
    if not dataset.questions:
        raise InputError(f"{path}: the readers experiment needs questions.jsonl with answers (a QA set)")
    questions = []
    for row in dataset.questions[:limit]:
        answers = [str(a) for a in row.get("answers") or []]
        if answers and row.get("supporting_ids"):
            questions.append(
                Question(
                    id=str(row["id"]),
                    text=str(row["question"]),
                    type=str(row.get("type", "all")),
                    answer=answers[0],
                    aliases=answers[1:],
                    gold_doc_ids=[str(d) for d in row["supporting_ids"]],
                )
            )
    index = Index.create(None, IndexSettings(embedder=embedder, vector_index="flat"))
    index.add(dataset.corpus)
    index.commit()
    return SimpleNamespace(name=dataset.name, questions=questions, documents=dataset.corpus), index


def closed_book_sample(questions: Sequence[Question], n: int, seed: int = 0) -> list[Question]:
    """A fixed sample of ``n`` questions, the same share of each type as the whole set."""
    rng = random.Random(seed)
    by_type: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_type[q.type].append(q)
    chosen: list[Question] = []
    for _, group in sorted(by_type.items()):
        chosen += rng.sample(group, min(len(group), round(n * len(group) / len(questions))))
    return chosen


def closed_book(llm: Any, questions: Sequence[Question]) -> dict[str, Any]:
    """EM (and "contains the answer") of ``llm`` asked each question with no source at all."""
    em, contains, replies = [], [], []
    for q in questions:
        messages = [{"role": "system", "content": CLOSED_BOOK_PROMPT}, {"role": "user", "content": q.text}]
        reply = llm.chat(messages, max_tokens=24).strip().splitlines()[0:1]
        text = reply[0].strip().rstrip(".") if reply else ""
        em.append((q.type, exact_match(text, golds(q))))
        contains.append((q.type, float(contains_answer(text, golds(q)) is not None)))
        replies.append({"id": q.id, "question": q.text, "gold": q.answer, "reply": text})
    return {"by_type": _rates(em), "contains": _rates(contains)["all"], "replies": replies[:10]}


def run(
    corpus: Any,
    index: Any,
    llm: Any = None,
    closed_book_questions: int = CLOSED_BOOK_QUESTIONS,
    retrievers: Sequence[str] = RETRIEVERS,
    sweep_retriever: str = "bm25",
    pipelines: Sequence[Any] = (),
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every row on every question of ``corpus`` (indexed whole in ``index``); ``llm`` None: no closed book.

    ``pipelines`` are ``PipelineConfig`` objects, each run as a whole over ``index``.
    """
    from ragline.answer.pipeline import RAGPipeline, build_reader
    from ragline.retrieve.registry import build_retriever

    questions = [q for q in corpus.questions if q.answer]
    documents = {d.id: d for d in corpus.documents}
    rows: dict[str, Any] = {}
    if llm is not None:
        sample = closed_book_sample(questions, closed_book_questions)
        rows["closed book (LLM)"] = closed_book(llm, sample)
        if log:
            log(f"closed book: {len(sample)} questions")
    readers: dict[int, Any] = {}

    def reader(k: int) -> Any:
        if k not in readers:
            readers[k] = build_reader(f"extractive:top_k={k}")
        return readers[k]

    def em_of(answer: Any, q: Question) -> float:
        return 0.0 if answer.abstained else exact_match(answer.text, golds(q))

    oracle = []
    for q in questions:
        hits = [_hit(documents[d], r) for r, d in enumerate(q.gold_doc_ids, start=1)]
        oracle.append((q.type, em_of(reader(len(hits)).read(q.text, build_context(hits, BUDGET)), q)))
    rows["oracle passage"] = {"by_type": _rates(oracle)}
    built = {name: build_retriever(name, index) for name in {*retrievers, sweep_retriever}}
    rankings = {name: {q.id: r.search(q.text, max(SWEEP_KS)) for q in questions} for name, r in built.items()}
    for name in retrievers:
        for k in RAG_KS:
            outcomes = [
                (q.type, em_of(reader(k).read(q.text, build_context(rankings[name][q.id][:k], BUDGET)), q))
                for q in questions
            ]
            rows[f"RAG {name} k={k}"] = {"by_type": _rates(outcomes)}
    for config in pipelines:
        pipeline = RAGPipeline.from_config(config, index)
        outcomes = [(q.type, em_of(pipeline.answer(q.text)[0], q)) for q in questions]
        rows[f"config {config.name}"] = {"by_type": _rates(outcomes), "config": config.to_dict()}
    sweep = []
    for k in SWEEP_KS:
        recall, em, em_found = [], [], []
        for q in questions:
            hits = rankings[sweep_retriever][q.id][:k]
            found = set(q.gold_doc_ids) <= {h.document_id for h in hits}
            value = em_of(reader(k).read(q.text, build_context(hits, BUDGET)), q)
            recall.append((q.type, float(found)))
            em.append((q.type, value))
            if found:
                em_found.append((q.type, value))
        sweep.append({"k": k, "recall": _rates(recall), "em": _rates(em), "em_when_retrieved": _rates(em_found)})
    return {
        "experiment": "readers",
        "corpus": corpus.name,
        "questions": len(questions),
        "closed_book_questions": closed_book_questions if llm is not None else 0,
        "llm": getattr(llm, "id", None),
        "llm_calls": {"cached": llm.hits, "model": llm.misses} if hasattr(llm, "misses") else None,
        "rows": rows,
        "sweep_retriever": sweep_retriever,
        "sweep": sweep,
    }


def tables(payload: dict[str, Any]) -> list[Table]:
    rows = payload["rows"]
    types = [t for t in rows["oracle passage"]["by_type"]]
    table = Table(
        title=f"Readers on {payload['corpus']} ({payload['questions']} questions; closed book on "
        f"{payload['closed_book_questions']}): EM by type"
    )
    for column in ("system", *types):
        table.add_column(column, justify="left" if column == "system" else "right")
    for name, row in rows.items():
        by_type = row["by_type"]
        table.add_row(name, *(f"{by_type[t]['em']:.2f}" if t in by_type else "—" for t in types))
    sweep = Table(
        title=f"k sweep, {payload['sweep_retriever']} top k, extractive reader: Recall@k / EM "
        "(EM when all gold retrieved), all questions"
    )
    for column in ("k", "recall@k", "EM", "EM | retrieved", "multihop recall", "multihop EM"):
        sweep.add_column(column, justify="right")
    for row in payload["sweep"]:
        found = row["em_when_retrieved"].get("all", {}).get("em")
        multihop_recall = row["recall"].get("multihop", {}).get("em")
        multihop_em = row["em"].get("multihop", {}).get("em")
        sweep.add_row(
            str(row["k"]),
            f"{row['recall']['all']['em']:.3f}",
            f"{row['em']['all']['em']:.3f}",
            "—" if found is None else f"{found:.3f}",
            "—" if multihop_recall is None else f"{multihop_recall:.3f}",
            "—" if multihop_em is None else f"{multihop_em:.3f}",
        )
    return [table, sweep]


def plot(payload: dict[str, Any], path: str) -> None:
    """Recall@k and EM against k (the sweep)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = [row["k"] for row in payload["sweep"]]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(ks, [row["recall"]["all"]["em"] for row in payload["sweep"]], marker="o", label="Recall@k (all gold)")
    ax.plot(ks, [row["em"]["all"]["em"] for row in payload["sweep"]], marker="s", label="EM, extractive reader")
    # EM on the questions whose gold documents are all in the top k: what more distractors cost the reader.
    found = [row["em_when_retrieved"].get("all", {}).get("em") for row in payload["sweep"]]
    ax.plot(
        ks,
        [float("nan") if f is None else f for f in found],
        marker="^",
        linestyle="--",
        label="EM when all gold retrieved",
    )
    ax.set_xscale("log")
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_xlabel("k (sources read)")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"{payload['corpus']}: {payload['sweep_retriever']} top k")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def from_args(args: Any) -> dict[str, Any]:
    """--dataset's questions and passages (else the countries world), the --llm reader and each --config."""
    from ragline.eval.experiments.dense_transfer import countries_workload

    if args.dataset:
        corpus, index = dataset_corpus(args.dataset, args.embedder, args.limit)
    else:
        from ragline.corpora.countries import build_countries

        corpus, index = build_countries(), countries_workload(args.embedder).index
    return run(corpus, index, llm=llm_of(args), closed_book_questions=args.closed_book, pipelines=configs_of(args))


@register("experiment", "readers")
def experiment() -> Experiment:
    """Closed book vs oracle vs RAG at k 1 and 5, and the k sweep."""
    return Experiment("readers", from_args, tables, plot, configs=True)
