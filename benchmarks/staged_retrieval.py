"""Anthropic's staged table: contextual embeddings -> + BM25 -> + rerank, as retrieval failure rate.

Usage::

    .venv/bin/python benchmarks/staged_retrieval.py --corpus scifact              # test split, title as context
    .venv/bin/python benchmarks/staged_retrieval.py --corpus orrin                # LLM-written chunk contexts
    .venv/bin/python benchmarks/staged_retrieval.py --corpus scifact --rerank-sample 100 --scifact-docs 1000

Anthropic ("Introducing Contextual Retrieval", 2024) reports the failure rate 1 - Recall@20 of each
stage: embeddings of plain chunks, embeddings of chunks with a context prepended, the same fused with
BM25 over the contextual text, and a reranker over the fused candidates. Here:

    scifact  documents are whole abstracts; ``plain`` embeds the abstract alone, ``title`` embeds the
             BEIR title before it (ragline's default indexing: "title\\ntext"), the document's only context
    orrin    Orrin Grid cut by ``--chunker`` (fixed:size=100,overlap=30, the chunking experiment's); ``plain``
             embeds each chunk's text alone, ``title`` is ragline's default (document title, then the chunk),
             ``llm`` the local LLM's sentence of context per chunk (``ingest/llm_context.py``; replies come
             from the LLM response cache when that experiment ran before); ``--orrin-questions N`` runs a
             seeded sample of N questions over their gold documents and ``--orrin-distractors`` others

Rows: dense over each index; hybrid (BM25 + dense, z-score, equal weights) over each contextual index;
and the trained cross-encoder over the contextual hybrid's top ``--depth`` (its score alone, and
interpolated with the first stage at ``--weights``; Recall@20 can only change when the depth exceeds 20).
Each row's per-query Recall@``--cutoff`` is compared with the row before it (paired randomization test). A Orrin
question runs as its asking user (ACL filter); chunks fold into their documents before Recall is taken.
Output: one JSON line on stdout, also written to ``benchmarks/results/staged_retrieval_CORPUS.json``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from common import bench_root, log, peak_rss_gib, print_result, write_result  # noqa: E402

RESULTS = Path(__file__).parent / "results"
CUTOFFS = (5, 20)  # Recall@k of each stage; --cutoff picks the one the paired tests use


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", choices=("scifact", "orrin"), default="scifact")
    p.add_argument("--dataset", default=str(bench_root() / "scifact"))
    p.add_argument("--split", default="test")
    p.add_argument("--chunker", default="fixed:size=100,overlap=30", help="orrin: the chunker")
    p.add_argument("--contexts", default="plain,title,llm", help="orrin: the indexes, in stage order")
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--model", default="trained:scifact", help="the cross-encoder")
    p.add_argument("--max-length", type=int, default=192)
    p.add_argument("--depth", type=int, default=50, help="candidates the cross-encoder reranks")
    p.add_argument("--weights", default="1.0,0.5", help="cross-encoder weights (1: its score alone)")
    p.add_argument("--rerank-sample", type=int, help="rerank a seeded sample of this many queries only")
    p.add_argument(
        "--scifact-docs",
        type=int,
        help="scifact: a sub-corpus of this many documents (every judged "
        "one, then a seeded sample of the others), since the plain index is embedded from scratch",
    )
    p.add_argument(
        "--orrin-questions",
        type=int,
        help="orrin: a seeded sample of this many questions, on a "
        "sub-corpus of their gold documents and --orrin-distractors other documents",
    )
    p.add_argument("--orrin-distractors", type=int, default=12)
    p.add_argument(
        "--cutoff",
        type=int,
        default=20,
        choices=CUTOFFS,
        help="the Recall@k of the paired tests "
        "(20, Anthropic's; 5 for a sub-corpus of a few dozen documents, where Recall@20 is near 1)",
    )
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--tag", help="results file suffix (default: the corpus)")
    p.add_argument("--out", help="the result file (default: benchmarks/results/staged_retrieval_TAG.json)")
    args = p.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    if args.corpus == "scifact":
        indexes, queries = _scifact(args)
    else:
        indexes, queries = _orrin(args)
    result = run(indexes, queries, args)
    result.update(corpus=args.corpus, split=args.split if args.corpus == "scifact" else "evaluation world",
                  documents=getattr(args, "documents", None), peak_rss_gib=round(peak_rss_gib(), 2))  # fmt: skip
    path = Path(args.out) if args.out else RESULTS / f"staged_retrieval_{args.tag or args.corpus}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_result(path, result)
    print_result(result)
    return 0


def _scifact(args):
    from ragline.eval.datasets import load_beir
    from ragline.index.store import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index

    dataset = load_beir(args.dataset, args.split)
    corpus = dataset.corpus
    if args.scifact_docs and args.scifact_docs < len(corpus):
        # A sub-corpus: every document judged for the split's queries, then a seeded sample of the others.
        judged = {d for qid in dataset.judged_queries for d in dataset.qrels[qid]}
        others = sorted(d.id for d in corpus if d.id not in judged)
        keep = judged | set(random.Random(0).sample(others, max(args.scifact_docs - len(judged), 0)))
        corpus = [d for d in corpus if d.id in keep]
    args.documents = len(corpus)
    settings = IndexSettings(embedder=args.embedder, vector_index="flat")
    indexes = {}
    # index_text = the abstract alone: what is embedded (and searched by BM25) loses the title.
    plain = [replace(d, index_text=d.text) for d in corpus]
    for name, documents in (("plain", plain), ("title", corpus)):
        log(f"indexing {name}")
        indexes[name] = build_index(documents, IngestConfig(), settings)
    queries = [(qid, text, {d: g for d, g in dataset.qrels[qid].items()}, None)
               for qid, text in sorted(dataset.judged_queries.items())]  # fmt: skip
    return indexes, queries


def _orrin(args):
    from ragline.corpora.orrin import DEFAULT_SEED, build_orrin
    from ragline.index.filters import acl_filter
    from ragline.index.store import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index, chunk_documents

    corpus = build_orrin(DEFAULT_SEED)
    documents, questions = corpus.documents, [q for q in corpus.questions if q.gold_doc_ids]
    if args.orrin_questions:
        # A sub-corpus: the gold documents of a seeded question sample plus seeded distractor documents,
        # so that the LLM writes contexts for fewer chunks (each reply costs seconds on shared cores).
        rng = random.Random(0)
        questions = sorted(rng.sample(questions, args.orrin_questions), key=lambda q: q.id)
        gold = {d for q in questions for d in q.gold_doc_ids}
        others = sorted(d.id for d in documents if d.id not in gold)
        keep = gold | set(rng.sample(others, min(args.orrin_distractors, len(others))))
        documents = [d for d in documents if d.id in keep]
    settings = IndexSettings(embedder=args.embedder, vector_index="flat")
    indexes = {}
    for name in args.contexts.split(","):
        log(f"indexing {name}")
        if name == "plain":
            chunks, _ = chunk_documents(documents, IngestConfig(args.chunker))
            index = _index_of([replace(c, index_text=c.text) for c in chunks], settings)
        else:
            index = build_index(documents, IngestConfig(args.chunker, "none" if name == "title" else name),
                                settings)  # fmt: skip
        indexes[name] = index
    queries = [(q.id, q.text, dict.fromkeys(q.gold_doc_ids, 1), acl_filter(q.user_groups)) for q in questions]
    args.documents = len(documents)
    return indexes, queries


def _index_of(chunks, settings):
    from ragline.index import Index

    index = Index.create(None, settings)
    index.add(chunks)
    index.commit()
    return index


def _documents(index, ranked):
    """Document ids best first with their best score (a document's chunks fold into its first)."""
    out: dict[str, float] = {}
    for chunk_id, score in ranked:
        doc = index.get(chunk_id)
        out.setdefault(doc.document_id if doc is not None else chunk_id, float(score))
    return out


def run(indexes, queries, args) -> dict:
    import numpy as np

    from ragline.components import build
    from ragline.eval.metrics import evaluate
    from ragline.eval.stats import compare
    from ragline.retrieve.base import hits_for
    from ragline.retrieve.rerank import interpolated

    qrels = {qid: gold for qid, _, gold, _ in queries}
    metric = f"recall@{args.cutoff}"
    metrics = [f"recall@{k}" for k in CUTOFFS]
    stages: list[tuple[str, dict[str, dict[str, float]]]] = []

    def add(name: str, run_: dict[str, dict[str, float]], only=None) -> None:
        wanted = qrels if only is None else {q: qrels[q] for q in only}
        per_query = evaluate(wanted, run_, metrics)
        stages.append((name, per_query))
        log(f"{name}: failure rate@{args.cutoff} {1 - np.mean([v[metric] for v in per_query.values()]):.4f}")

    contextual = list(indexes)[-1]
    for name, index in indexes.items():
        dense = build("retriever", "dense", index=index)
        add(f"dense, {name}", {qid: _documents(index, dense.rank(text, 100, f)) for qid, text, _, f in queries})
    index = indexes[contextual]
    hybrid = build("retriever", "hybrid", index=index)
    first = {qid: hybrid.rank(text, 100, f) for qid, text, _, f in queries}
    add(f"hybrid (+ BM25), {contextual}", {qid: _documents(index, ranked) for qid, ranked in first.items()})

    sample = list(queries)
    if args.rerank_sample and args.rerank_sample < len(queries):
        sample = sorted(random.Random(0).sample(queries, args.rerank_sample))
        add(f"hybrid (+ BM25), {contextual}, rerank sample",
            {qid: _documents(index, first[qid]) for qid, *_ in sample}, [qid for qid, *_ in sample])  # fmt: skip
    reranker = build("reranker", f"cross:model={args.model},max_length={args.max_length}")
    started = time.perf_counter()
    cross = {}
    for i, (qid, text, _, _) in enumerate(sample):
        cross[qid] = reranker.scores(text, hits_for(index, first[qid][: args.depth]))
        if i % 25 == 0:
            log(f"reranked {i}/{len(sample)} queries")
    rerank_seconds = time.perf_counter() - started
    for weight in (float(w) for w in args.weights.split(",")):
        run_ = {}
        for qid, *_ in sample:
            top = first[qid][: args.depth]
            final = interpolated(cross[qid], [s for _, s in top], weight)
            order = sorted(range(len(top)), key=lambda i: -final[i])
            ranked = [(top[i][0], 1000.0 - r) for r, i in enumerate(order)] + first[qid][args.depth :]
            run_[qid] = _documents(index, ranked)
        add(f"+ rerank top {args.depth}, w={weight}", run_, [qid for qid, *_ in sample])

    rows, previous = [], None
    for name, scores in stages:
        row: dict = {"stage": name, "queries": len(scores)}
        for m in metrics:
            row[m] = float(np.mean([v[m] for v in scores.values()]))
            row[f"failure_rate@{m.split('@')[1]}"] = 1.0 - row[m]
        per_query = {qid: v[metric] for qid, v in scores.items()}
        if previous is not None and previous.keys() == per_query.keys():
            versus = compare(previous, per_query)
            row["vs_previous"] = {"metric": metric, "delta_recall": versus["delta"], "p": versus["p_randomization"],
                                  "ci": versus["ci"]}  # fmt: skip
        if not name.startswith("+ rerank"):  # every rerank row is compared with the same first stage
            previous = per_query
        rows.append(row)
    return {"rows": rows, "queries": len(queries), "rerank_queries": len(sample), "depth": args.depth,
            "reranker": reranker.config(), "rerank_seconds": round(rerank_seconds, 1),
            "indexes": {name: len(index) for name, index in indexes.items()}, "threads": args.threads}  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
