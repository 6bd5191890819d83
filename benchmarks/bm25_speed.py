"""BM25 speed: ragline against bm25s (and rank_bm25, tantivy), on identical tokens, in one process.

Usage::

    .venv/bin/python benchmarks/bm25_speed.py --dataset ../shared/bench/scifact --output json
    .venv/bin/python benchmarks/bm25_speed.py --synthetic 1000000
    .venv/bin/python benchmarks/bm25_speed.py --quick

What is measured (k = 10, BM25 "lucene" with k1 = 0.9, b = 0.4 for ragline and bm25s):

- Tokens. A BEIR folder is analyzed once with ragline's ``english`` analyzer (documents as
  ``title + "\\n" + text``, like ragline's ``body`` field; all queries of ``queries.jsonl``). A
  synthetic corpus (``synthetic.py``) is made of terms already. Every system gets these same tokens:
  bm25s and rank_bm25 as token lists, tantivy as whitespace-separated text with its ``whitespace``
  tokenizer, ragline as ``Document(text=" ".join(tokens))`` indexed with a ``pretokenized`` analyzer
  (no lowercasing, stopwords or stemming: its word tokenizer splits the text back into the same
  tokens, which the script verifies: per-document lengths and the vocabulary). Queries without tokens
  are dropped for everyone.
- Index build. ragline: ``Index.create(None)`` + ``add`` + ``commit`` (``ragline_index_s``); ragline
  computes collection statistics and posting weights lazily at the first query, so
  ``ragline_index_ready_s`` adds that first query. ragline's time includes re-splitting the text and
  hashing each document (its API takes text). bm25s: ``BM25.index`` from token lists
  (``bm25s_index_tokens_s``) and from ``(token id lists, vocab)`` (``bm25s_index_ids_s``, after
  ``bm25s_token_ids_s`` spent outside the timing to map tokens to ids, as ``bm25s.tokenize`` would);
  ``bm25s_index_s`` is the faster of the two, named by ``bm25s_index_input``. bm25s's numba functions
  are compiled on a tiny corpus first, so no build time includes JIT compilation.
- One query at a time, as a service answers: ragline ``index.search_terms(tokens, 10)``; bm25s
  ``retrieve([tokens], k=10, n_threads=1)`` on its numba backend (``backend="numba"``, the fastest;
  ``n_threads=1`` runs its serial jitted kernel); tantivy a boolean SHOULD query of term queries,
  ``searcher.search(query, 10, count=False)``. One warm-up pass over all queries, then ``--passes``
  timed passes, systems interleaved pass by pass so that machine noise hits all alike; the median
  pass gives queries per second.
- Batched: bm25s ``retrieve(all_queries, k=10, n_threads=T)`` (one call) against ragline's
  ``index.search_terms_batch(all_queries, 10, threads=T)`` (one call; its results are checked equal to
  one query at a time) and ragline looping over ``search_terms``, at T = 1 and at each of
  ``--batch-threads`` (default 2, if the machine has 2 usable cores).
- Index ready: build plus the first query, ``ragline_index_ready_s`` against ``bm25s_index_ready_s``
  (``bm25s_index_s`` + its first ``retrieve``; its JIT compilation is excluded, see above).
- Agreement: the share of queries where ragline and bm25s return the same top-10 (``top10_agreement``:
  the same ids, or the same scores with differences only among documents tied at the 10th score;
  ``top10_exact``: the same id sets; ``top10_overlap``: mean shared fraction).
- Filtered: every document has metadata ``{"group": f"g{i % 10}"}``; ragline with the filter
  ``"group = g3"`` (10% of the documents) against ragline unfiltered in the same passes:
  ``filtered_qps`` and ``filtered_ratio`` = filtered / unfiltered.
- rank_bm25 (BM25Okapi) scores every document per query, so it runs on the first
  ``--rank-bm25-docs`` documents and ``--rank-bm25-queries`` queries, one timed pass, with ragline on
  the same subsample for comparison (``ragline_qps_subsample``).
- tantivy (if importable): in-memory index, one writer thread, term frequencies without positions.
  Its BM25 is fixed at k1 = 1.2, b = 0.75 and quantizes document lengths, so it is compared for
  speed only; ``tantivy_top10_overlap`` is its overlap with ragline run at k1 = 1.2, b = 0.75.
- ``--synthetic`` only: adding 1,000 new documents to the N-document ragline index, ``commit`` and the
  first query after it (which updates the collection statistics from the previous commit's and
  recomputes the posting weights): ``add_1000_s``; bm25s cannot update
  an index, so ``bm25s_rebuild_s`` rebuilds it on N + 1,000 documents (same input path as above).

Everything but the threaded batch runs single-threaded: OMP/MKL/OPENBLAS thread variables are set to
1 below, before numpy is imported (``thread_env`` in the output). After the data is prepared the script calls
``gc.collect(); gc.freeze()`` so the garbage collector does not rescan the benchmark's own token lists
during the timed parts. Output: one JSON line on stdout; progress goes to stderr.
"""

from __future__ import annotations

import os

THREAD_ENV = {var: "1" for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
# numba's pool must hold the threads of the threaded batch runs (bm25s's parallel kernel); every other
# part runs serial kernels, which never use the pool.
THREAD_ENV["NUMBA_NUM_THREADS"] = str(max(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2))
os.environ.update(THREAD_ENV)

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import bm25s  # noqa: E402
import numpy as np  # noqa: E402

import ragline  # noqa: E402
from ragline.index.bm25 import BM25Params  # noqa: E402
from ragline.index.store import Index, IndexSettings  # noqa: E402
from ragline.text.analyzer import Analyzer, get_analyzer  # noqa: E402
from ragline.types import Document  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import bench_root, log, package_version, peak_rss_gib, print_result, timed  # noqa: E402
from synthetic import more_documents, synthetic_corpus  # noqa: E402

K = 10
K1, B = 0.9, 0.4
FILTER = "group = g3"
PRETOKENIZED = Analyzer(name="pretokenized", tokenizer="word", stopwords="none", stemmer=None, lowercase=False)

Tokens = list[str]


# -- data ---------------------------------------------------------------------------------------------
def load_beir_tokens(folder: Path) -> tuple[list[str], list[Tokens], list[Tokens]]:
    """Document ids, document tokens and query tokens of a BEIR folder, analyzed with ``english``."""
    english = get_analyzer("english")
    ids, doc_tokens = [], []
    with open(folder / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            title, text = row.get("title") or "", row.get("text") or ""
            ids.append(str(row["_id"]))
            doc_tokens.append(english(f"{title}\n{text}" if title else text))
    with open(folder / "queries.jsonl", encoding="utf-8") as fh:
        query_tokens = [english(json.loads(line)["text"]) for line in fh]
    return ids, doc_tokens, query_tokens


def ragline_documents(ids: Sequence[str], doc_tokens: Sequence[Tokens], start: int = 0) -> list[Document]:
    return [
        Document(doc_id, " ".join(tokens), metadata={"group": f"g{(start + i) % 10}"})
        for i, (doc_id, tokens) in enumerate(zip(ids, doc_tokens))
    ]


# -- ragline ------------------------------------------------------------------------------------------
def build_ragline(documents: list[Document]) -> Index:
    index = Index.create(None, IndexSettings(analyzer=PRETOKENIZED))
    index.add(documents)
    index.commit()
    return index


def check_ragline_tokens(index: Index, doc_tokens: Sequence[Tokens]) -> None:
    """The pretokenized analyzer must give back exactly the tokens: same lengths, same vocabulary."""
    fields = [segment.fields["body"] for segment in index.segments]  # a large commit makes several
    lengths = np.fromiter(map(len, doc_tokens), dtype=np.int64, count=len(doc_tokens))
    if not np.array_equal(np.concatenate([np.asarray(f.lengths, dtype=np.int64) for f in fields]), lengths):
        raise SystemExit("ragline re-split the pretokenized text into other tokens (lengths differ)")
    vocab: set[str] = set()
    for tokens in doc_tokens:
        vocab.update(tokens)
    if set().union(*(f.terms for f in fields)) != vocab:
        raise SystemExit("ragline's vocabulary differs from the given tokens")
    for tokens in doc_tokens[:1000]:
        if PRETOKENIZED(" ".join(tokens)) != tokens:
            raise SystemExit(f"pretokenized analysis changed {tokens[:10]}")


def ragline_hits(index: Index, query: Tokens, **kwargs: Any) -> list[tuple[str, float]]:
    return [(index.segments[si].ids[row], score) for si, row, score in index.search_terms(query, K, **kwargs)]


# -- bm25s --------------------------------------------------------------------------------------------
def new_bm25s() -> bm25s.BM25:
    return bm25s.BM25(method="lucene", k1=K1, b=B, backend="numba")


def warm_bm25s_jit() -> float:
    """Compile bm25s's numba index builder and retrieval kernel on a tiny corpus; returns seconds."""
    start = time.perf_counter()
    tiny = new_bm25s()
    tiny.index([["a", "b"], ["b", "c"], ["c", "d"]], show_progress=False)
    tiny.retrieve([["a", "c"]], k=2, show_progress=False, n_threads=1)
    return time.perf_counter() - start


def to_token_ids(doc_tokens: Sequence[Tokens], vocab: dict[str, int]) -> list[list[int]]:
    """Map tokens to ids, growing ``vocab`` (what ``bm25s.tokenize`` produces)."""
    return [[vocab.setdefault(t, len(vocab)) for t in tokens] for tokens in doc_tokens]


def bm25s_hits(result: Any, ids: Sequence[str], row: int = 0) -> list[tuple[str, float]]:
    docs, scores = result.documents[row], result.scores[row]
    return [(ids[d], float(s)) for d, s in zip(docs.tolist(), scores.tolist()) if s > 0]


# -- comparison ---------------------------------------------------------------------------------------
def same_top_k(a: list[tuple[str, float]], b: list[tuple[str, float]], tol: float = 1e-4) -> bool:
    """Equal top-k, allowing a different choice among documents tied at the k-th score."""
    if {d for d, _ in a} == {d for d, _ in b}:
        return True
    if len(a) != len(b) or not a:
        return False
    sa, sb = sorted(s for _, s in a), sorted(s for _, s in b)
    if any(abs(x - y) > tol * max(1.0, abs(x)) for x, y in zip(sa, sb)):
        return False
    cut = sa[0] + tol * max(1.0, abs(sa[0]))
    return {d for d, s in a if s > cut} == {d for d, s in b if s > cut}


def overlap(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> float:
    ids_a, ids_b = {d for d, _ in a}, {d for d, _ in b}
    return len(ids_a & ids_b) / max(len(ids_a), len(ids_b), 1)


def interleaved_passes(
    passes: int, runs: dict[str, Callable[[], Any]], cpu: dict[str, float] | None = None
) -> dict[str, float]:
    """Median seconds of one pass of each run; one warm-up pass each, then runs alternate pass by pass.

    ``cpu``, if given, receives each run's smallest CPU time of a pass (``time.process_time``: the
    process's CPU seconds, which time taken by other jobs on the machine does not inflate; with threads
    it sums them).
    """
    for run in runs.values():
        run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    cpu_times: dict[str, list[float]] = {name: [] for name in runs}
    for p in range(passes):
        for name, run in runs.items():
            cpu_start = time.process_time()
            times[name].append(timed(run)[1])
            cpu_times[name].append(time.process_time() - cpu_start)
        log(f"  pass {p + 1}/{passes}: " + ", ".join(f"{n} {t[-1]:.3f}s" for n, t in times.items()))
    if cpu is not None:
        cpu.update({name: min(t) for name, t in cpu_times.items()})
    return {name: statistics.median(t) for name, t in times.items()}


def timed_cpu(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``fn()``, the seconds it took and the CPU seconds it used."""
    cpu_start = time.process_time()
    result, seconds = timed(fn)
    return result, seconds, time.process_time() - cpu_start


# -- tantivy ------------------------------------------------------------------------------------------
def tantivy_bench(
    doc_tokens: Sequence[Tokens], queries: list[Tokens], passes: int, index: Index, ids: Sequence[str]
) -> dict[str, Any]:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", tokenizer_name="whitespace", index_option="freq")
    builder.add_integer_field("row", stored=True)
    schema = builder.build()

    def build() -> Any:
        tindex = tantivy.Index(schema)  # in memory
        writer = tindex.writer(heap_size=256_000_000, num_threads=1)
        for row, tokens in enumerate(doc_tokens):
            writer.add_document(tantivy.Document(body=" ".join(tokens), row=row))
        writer.commit()
        writer.wait_merging_threads()
        tindex.reload()
        return tindex

    tindex, build_s = timed(build)
    searcher = tindex.searcher()
    log(f"tantivy: indexed in {build_s:.2f}s ({searcher.num_segments} segments)")

    def search(tokens: Tokens) -> Any:
        clauses = [
            (tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", t, index_option="freq")) for t in tokens
        ]
        return searcher.search(tantivy.Query.boolean_query(clauses), K, count=False)

    qps = len(queries) / interleaved_passes(passes, {"tantivy": lambda: [search(q) for q in queries]})["tantivy"]
    params = BM25Params(k1=1.2, b=0.75)
    shared = []
    for q in queries:
        theirs = [(ids[searcher.doc(addr)["row"][0]], s) for s, addr in search(q).hits]
        shared.append(overlap(theirs, ragline_hits(index, q, bm25=params)))
    return {
        "tantivy_qps": round(qps, 1),
        "tantivy_index_s": round(build_s, 3),
        "tantivy_top10_overlap": round(float(np.mean(shared)), 4),
    }


# -- rank_bm25 ----------------------------------------------------------------------------------------
def rank_bm25_bench(
    ids: Sequence[str], doc_tokens: Sequence[Tokens], queries: list[Tokens], n_docs: int, n_queries: int, passes: int
) -> dict[str, Any]:
    from rank_bm25 import BM25Okapi

    sub_ids, sub_tokens, sub_queries = ids[:n_docs], doc_tokens[:n_docs], queries[:n_queries]
    okapi, build_s = timed(lambda: BM25Okapi(sub_tokens, k1=K1, b=B))

    def search(tokens: Tokens) -> np.ndarray:
        scores = okapi.get_scores(tokens)
        top = np.argpartition(-scores, K - 1)[:K]
        return top[np.argsort(-scores[top])]

    for q in sub_queries[:3]:
        search(q)
    log(f"rank_bm25: {len(sub_ids)} docs indexed in {build_s:.2f}s; timing {len(sub_queries)} queries")
    _, seconds = timed(lambda: [search(q) for q in sub_queries])
    sub_index = build_ragline(ragline_documents(sub_ids, sub_tokens))
    ours = interleaved_passes(
        passes, {"ragline-subsample": lambda: [sub_index.search_terms(q, K) for q in sub_queries]}
    )
    return {
        "rank_bm25_qps": round(len(sub_queries) / seconds, 1),
        "rank_bm25_docs": len(sub_ids),
        "rank_bm25_queries": len(sub_queries),
        "rank_bm25_index_s": round(build_s, 3),
        "ragline_qps_subsample": round(len(sub_queries) / ours["ragline-subsample"], 1),
    }


# -- main ---------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--dataset", type=Path, help="a BEIR folder (corpus.jsonl, queries.jsonl)")
    source.add_argument("--synthetic", type=int, metavar="N", help="a generated corpus of N short documents")
    parser.add_argument("--quick", action="store_true", help="a tiny run (5,000 synthetic docs, 3 passes)")
    parser.add_argument("--queries", type=int, help="use at most this many queries (synthetic: 1000)")
    parser.add_argument("--passes", type=int, default=5, help="timed passes over the queries (median reported)")
    parser.add_argument("--build-passes", type=int, default=3, help="interleaved index builds of each system")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic corpus")
    parser.add_argument("--rank-bm25-docs", type=int, default=20_000)
    parser.add_argument("--rank-bm25-queries", type=int, default=200)
    parser.add_argument("--no-rank-bm25", action="store_true")
    parser.add_argument("--no-tantivy", action="store_true")
    parser.add_argument(
        "--batch-threads", type=int, nargs="*", default=[2], help="thread counts for the batched runs besides 1"
    )
    parser.add_argument("--output", choices=["json", "pretty"], default="json", help="one JSON line, or indented")
    args = parser.parse_args(argv)
    if args.quick:
        if args.dataset is None and args.synthetic is None:
            args.synthetic = 5000
        args.passes = min(args.passes, 3)
        args.queries = min(args.queries or 200, 200)
        args.rank_bm25_docs = min(args.rank_bm25_docs, 2000)
        args.rank_bm25_queries = min(args.rank_bm25_queries, 50)
    if args.dataset is None and args.synthetic is None:
        parser.error("give --dataset DIR, --synthetic N or --quick")
    return args


def load_tokens(args: argparse.Namespace, result: dict[str, Any]) -> tuple[list[str], list[Tokens], list[Tokens]]:
    """Ids, document tokens and the non-empty queries of the chosen corpus; their sizes go into ``result``."""
    if args.dataset is not None:
        folder = args.dataset
        if not folder.is_dir():
            folder = bench_root() / folder
        log(f"analyzing {folder} with ragline's english analyzer")
        (ids, doc_tokens, queries), analyze_s = timed(lambda: load_beir_tokens(folder))
        result["dataset"] = folder.name
        result["analyze_s"] = round(analyze_s, 3)
    else:
        log(f"generating {args.synthetic} synthetic documents (seed {args.seed})")
        doc_tokens, queries = synthetic_corpus(args.synthetic, n_queries=args.queries or 1000, seed=args.seed)
        ids = [f"d{i}" for i in range(len(doc_tokens))]
        result["dataset"] = f"synthetic-{args.synthetic}"
    nonempty = [q for q in queries if q]
    dropped, queries = len(queries) - len(nonempty), nonempty[: args.queries]
    result |= {
        "docs": len(doc_tokens),
        "queries": len(queries),
        "dropped_queries": dropped,
        "doc_tokens": int(sum(map(len, doc_tokens))),
        "query_tokens_mean": round(float(np.mean([len(q) for q in queries])), 2),
        "k": K,
        "bm25": {"method": "lucene", "k1": K1, "b": B},
    }
    return ids, doc_tokens, queries


def build_both(
    args: argparse.Namespace,
    documents: list[Document],
    doc_tokens: list[Tokens],
    queries: list[Tokens],
    result: dict[str, Any],
) -> tuple[Index, Any, list[list[int]], dict[str, int]]:
    """``--build-passes`` interleaved builds of each system (median wall, least CPU of a pass), each until its first
    query is answered; returns the last pass's ragline index and bm25s retriever, and bm25s's token ids."""
    result["bm25s_jit_warmup_s"] = round(warm_bm25s_jit(), 3)
    vocab: dict[str, int] = {}
    token_ids, result["bm25s_token_ids_s"] = timed(lambda: to_token_ids(doc_tokens, vocab))
    walls: dict[str, list[float]] = {name: [] for name in ("ragline", "ragline_ready", "tokens", "ids", "ids_ready")}
    cpus: dict[str, list[float]] = {name: [] for name in ("ragline_ready", "ids_ready")}
    for _ in range(args.build_passes):
        index = retriever = None  # the previous pass's indexes are freed before the next build
        gc.collect()
        index, build_s, build_cpu_s = timed_cpu(lambda: build_ragline(documents))
        _, first_query_s, first_cpu_s = timed_cpu(lambda ix=index: ix.search_terms(queries[0], K))
        walls["ragline"].append(build_s)
        walls["ragline_ready"].append(build_s + first_query_s)
        cpus["ragline_ready"].append(build_cpu_s + first_cpu_s)
        walls["tokens"].append(timed(lambda: new_bm25s().index(doc_tokens, show_progress=False))[1])
        retriever = new_bm25s()
        _, ids_s, ids_cpu_s = timed_cpu(lambda r=retriever: r.index((token_ids, vocab), show_progress=False))
        _, bm25s_first_s, bm25s_first_cpu_s = timed_cpu(
            lambda r=retriever: r.retrieve([queries[0]], k=K, show_progress=False, n_threads=1)
        )
        walls["ids"].append(ids_s)
        walls["ids_ready"].append(ids_s + bm25s_first_s)
        cpus["ids_ready"].append(ids_cpu_s + bm25s_first_cpu_s)
    median = {name: statistics.median(t) for name, t in walls.items()}
    result["build_passes"] = args.build_passes
    result["ragline_index_s"] = median["ragline"]
    result["ragline_index_ready_s"] = median["ragline_ready"]
    result["ragline_index_ready_cpu_s"] = min(cpus["ragline_ready"])
    check_ragline_tokens(index, doc_tokens)
    result["tokens_verified"] = True
    result["vocab"] = len(index.collection_stats().vocab)
    result["ragline_segments"] = len(index.segments)
    log(f"ragline: indexed in {result['ragline_index_s']:.2f}s, ready in {result['ragline_index_ready_s']:.2f}s")
    tokens_s, ids_s = median["tokens"], median["ids"]
    result["bm25s_index_tokens_s"], result["bm25s_index_ids_s"] = tokens_s, ids_s
    result["bm25s_index_input"] = "token ids + vocab" if ids_s <= tokens_s else "token lists"
    result["bm25s_index_s"] = min(ids_s, tokens_s)
    result["bm25s_index_ready_s"] = result["bm25s_index_s"] + median["ids_ready"] - median["ids"]
    result["bm25s_index_ids_ready_cpu_s"] = min(cpus["ids_ready"])
    result["index_ready_ratio"] = round(result["bm25s_index_ready_s"] / result["ragline_index_ready_s"], 3)
    result["index_ready_cpu_ratio"] = round(
        result["bm25s_index_ids_ready_cpu_s"] / result["ragline_index_ready_cpu_s"], 3
    )
    result["bm25s_backend"] = f"{retriever.backend} (retrieve n_threads=1: serial jitted kernel)"
    log(f"bm25s: indexed from token lists in {tokens_s:.2f}s, from ids in {ids_s:.2f}s")
    return index, retriever, token_ids, vocab


def agreement(index: Index, retriever: Any, ids: Sequence[str], queries: list[Tokens]) -> dict[str, Any]:
    """How often the two systems return the same top 10; the filter is checked to keep only its group."""
    batch = retriever.retrieve(queries, k=K, show_progress=False, n_threads=1)
    pairs = [(ragline_hits(index, q), bm25s_hits(batch, ids, i)) for i, q in enumerate(queries)]
    found = {
        "top10_agreement": round(float(np.mean([same_top_k(a, b) for a, b in pairs])), 4),
        "top10_exact": round(float(np.mean([{d for d, _ in a} == {d for d, _ in b} for a, b in pairs])), 4),
        "top10_overlap": round(float(np.mean([overlap(a, b) for a, b in pairs])), 4),
    }
    filtered = [index.search_terms(q, K, filter=FILTER) for q in queries[:50]]
    assert all(index.segments[si].metadata[row]["group"] == "g3" for hits in filtered for si, row, _ in hits)
    log(f"top-10 agreement {found['top10_agreement']} (exact sets {found['top10_exact']})")
    return found


def one_at_a_time(args: argparse.Namespace, index: Index, retriever: Any, queries: list[Tokens]) -> dict[str, Any]:
    """Queries/s and CPU per query, one query at a time, unfiltered and filtered."""
    log(f"one query at a time: {args.passes} passes of {len(queries)} queries")
    cpu: dict[str, float] = {}
    wall = interleaved_passes(
        args.passes,
        {
            "ragline": lambda: [index.search_terms(q, K) for q in queries],
            "bm25s": lambda: [retriever.retrieve([q], k=K, show_progress=False, n_threads=1) for q in queries],
            "ragline-filtered": lambda: [index.search_terms(q, K, filter=FILTER) for q in queries],
        },
        cpu,
    )
    n = len(queries)
    return {
        "ragline_qps": round(n / wall["ragline"], 1),
        "bm25s_qps": round(n / wall["bm25s"], 1),
        "qps_ratio": round(wall["bm25s"] / wall["ragline"], 3),
        "ragline_cpu_us": round(cpu["ragline"] / n * 1e6, 2),
        "bm25s_cpu_us": round(cpu["bm25s"] / n * 1e6, 2),
        "cpu_ratio": round(cpu["bm25s"] / cpu["ragline"], 3),
        "filter": FILTER,
        "filtered_qps": round(n / wall["ragline-filtered"], 1),
        "filtered_ratio": round(wall["ragline"] / wall["ragline-filtered"], 3),
    }


def batched(args: argparse.Namespace, index: Index, retriever: Any, queries: list[Tokens]) -> dict[str, Any]:
    """Both systems' batch calls at 1 and ``--batch-threads`` threads; ragline's batch is first checked to return
    exactly what one query at a time returns."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    thread_counts = [1] + sorted({t for t in args.batch_threads if 1 < t <= usable})
    loop_hits = [index.search_terms(q, K) for q in queries]
    for t in thread_counts:
        if index.search_terms_batch(queries, K, threads=t) != loop_hits:
            raise SystemExit(f"ragline's batch with {t} threads differs from one query at a time")
    log(f"batched (threads {thread_counts}); batch results verified equal to one query at a time")
    runs: dict[str, Callable[[], Any]] = {"ragline-loop": lambda: [index.search_terms(q, K) for q in queries]}
    for t in thread_counts:
        runs[f"ragline-batch-{t}t"] = lambda t=t: index.search_terms_batch(queries, K, threads=t)
        runs[f"bm25s-batch-{t}t"] = lambda t=t: retriever.retrieve(queries, k=K, show_progress=False, n_threads=t)
    cpu: dict[str, float] = {}
    wall = interleaved_passes(args.passes, runs, cpu)
    n = len(queries)
    found: dict[str, Any] = {"batch_verified_equal": True}
    for t in thread_counts:
        ours, theirs = f"ragline-batch-{t}t", f"bm25s-batch-{t}t"
        found[f"batched_ragline_qps_{t}t"] = round(n / wall[ours], 1)
        found[f"batched_bm25s_qps_{t}t"] = round(n / wall[theirs], 1)
        found[f"batched_qps_ratio_{t}t"] = round(wall[theirs] / wall[ours], 3)
        found[f"batched_ragline_cpu_us_{t}t"] = round(cpu[ours] / n * 1e6, 2)
        found[f"batched_bm25s_cpu_us_{t}t"] = round(cpu[theirs] / n * 1e6, 2)
        found[f"batched_cpu_ratio_{t}t"] = round(cpu[theirs] / cpu[ours], 3)
    found["looped_ragline_qps"] = round(n / wall["ragline-loop"], 1)
    return found


def incremental_update(
    args: argparse.Namespace,
    index: Index,
    documents: list[Document],
    doc_tokens: list[Tokens],
    queries: list[Tokens],
    bm25s_input: tuple[str, list[list[int]], dict[str, int]],
) -> dict[str, Any]:
    """1,000 new documents: ragline adds and commits them; bm25s, which cannot add, rebuilds from its input kind."""
    new_tokens = more_documents(1000, seed=args.seed + 1)
    new_ids = [f"n{i}" for i in range(len(new_tokens))]
    new_documents = ragline_documents(new_ids, new_tokens, start=len(documents))

    def add_and_query() -> None:
        index.add(new_documents)
        index.commit()
        index.search_terms(queries[0], K)

    found: dict[str, Any] = {}
    _, found["add_1000_s"] = timed(add_and_query)
    kind, token_ids, vocab = bm25s_input
    if kind == "token lists":
        _, found["bm25s_rebuild_s"] = timed(lambda: new_bm25s().index(doc_tokens + new_tokens, show_progress=False))
    else:
        _, found["bm25s_rebuild_s"] = timed(
            lambda: new_bm25s().index((token_ids + to_token_ids(new_tokens, vocab), vocab), show_progress=False)
        )
    log(f"add 1000: ragline {found['add_1000_s']:.3f}s, bm25s rebuild {found['bm25s_rebuild_s']:.2f}s")
    return found


def environment() -> dict[str, Any]:
    """Versions, threads, memory and load: what a reader needs to compare two runs."""
    return {
        "threads": 1,
        "thread_env": THREAD_ENV,
        "versions": {
            "ragline": ragline.__version__,
            "bm25s": bm25s.__version__,
            "numpy": np.__version__,
            **{name: package_version(name) for name in ("numba", "rank-bm25", "tantivy")},
        },
        "peak_rss_gib": round(peak_rss_gib(), 3),  # the whole process: every system's index at once
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "machine": platform.machine(),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    result: dict[str, Any] = {"load_average_start": [round(x, 2) for x in os.getloadavg()]}
    ids, doc_tokens, queries = load_tokens(args, result)
    documents = ragline_documents(ids, doc_tokens)
    gc.collect()
    gc.freeze()
    log(f"{len(doc_tokens)} documents, {result['doc_tokens']} tokens, {len(queries)} queries")

    index, retriever, token_ids, vocab = build_both(args, documents, doc_tokens, queries, result)
    result |= agreement(index, retriever, ids, queries)
    result |= one_at_a_time(args, index, retriever, queries)
    result |= batched(args, index, retriever, queries)
    if not args.no_rank_bm25:
        result |= rank_bm25_bench(ids, doc_tokens, queries, args.rank_bm25_docs, args.rank_bm25_queries, args.passes)
    if not args.no_tantivy:
        try:
            import tantivy  # noqa: F401
        except ImportError:
            result["tantivy_qps"] = None
        else:
            result |= tantivy_bench(doc_tokens, queries, args.passes, index, ids)
    if args.synthetic is not None:
        bm25s_input = (result["bm25s_index_input"], token_ids, vocab)
        result |= incremental_update(args, index, documents, doc_tokens, queries, bm25s_input)

    for key, value in result.items():
        if key.endswith("_s") and isinstance(value, float):
            result[key] = round(value, 3)
    result |= environment()
    print_result(result, args.output)
    return result


if __name__ == "__main__":
    main()
