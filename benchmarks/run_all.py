"""``make bench``: the benchmarks and experiments behind BENCHMARKS.md, with the commands it quotes.

Long: many hours on 2 cores the first time (embedding SciFact, a million-document BM25 index, a
million-vector HNSW, about three hours of local-LLM generation); embeddings and LLM replies are cached,
so a rerun is much faster. Each step's JSON line goes to ``benchmarks/results/<name>.json`` (the ANN
steps write their own folders); a failed step is reported and the others still run. ``--only NAME``
runs one step (repeatable); ``--list`` shows them. Not here: ``chunking_llm_context_variants.json``, a
one-off comparison of context prompts.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from common import ROOT, command_argv

RESULTS = ROOT / "benchmarks" / "results"


LEGS = "--retriever bm25 --retriever dense --retriever hybrid"
COUNTRIES = "--vector-index flat --metrics hit@1,hit@5,mrr@10,ndcg@10"
ORRIN_READING = "--retriever hybrid --chunker fixed:size=100,overlap=30 --context breadcrumb --vector-index flat"
SAME_NAME = "="  # the step's JSON line goes to benchmarks/results/<step name>.json

# name -> (command as BENCHMARKS.md quotes it, result file name; None: the command writes its own files).
# {bench} is the shared benchmark folder; "ragline" and "python" run from this virtual environment.
PLAN: dict[str, tuple[str, str | None]] = {
    "corpus_orrin": ("ragline corpus orrin --out benchmarks/data/orrin", None),
    "corpus_countries_en": ("ragline corpus countries --out benchmarks/data/countries-en", None),
    "corpus_countries_zh": ("ragline corpus countries-zh --out benchmarks/data/countries-zh", None),
    "bm25_speed_scifact": ("python benchmarks/bm25_speed.py --dataset {bench}/scifact --output json", SAME_NAME),
    "bm25_speed_1m": ("python benchmarks/bm25_speed.py --synthetic 1000000 --output json", SAME_NAME),
    "ann": ("python benchmarks/ann.py --n 100000 --output json", None),
    "ann_1m": (
        "python benchmarks/ann.py --n 1000000 --skip scifact,embed --ivf-train-sample 200000 "
        "--results benchmarks/results/ann_1m --output json",
        None,
    ),
    "ann_1m_filtered": (
        "python benchmarks/ann.py --n 1000000 --skip hnswlib,ivf,ivfpq,scifact,embed --ef 128 "
        "--results benchmarks/results/ann_1m_filtered --output json",
        None,
    ),
    "ann_scifact": (
        "python benchmarks/ann.py --n 20000 --queries 200 --skip filtered,ivf,ivfpq,embed "
        "--results benchmarks/results/ann_scifact --output json",
        None,
    ),
    **{
        f"bm25_{name}": (f"ragline eval {{bench}}/{name} --retriever bm25 --split test --output json", SAME_NAME)
        for name in ("scifact", "cranfield", "cisi", "npl")
    },
    **{
        f"hybrid_{name}": (
            f"ragline eval {{bench}}/{name} --split test --vector-index flat {LEGS} --retriever hybrid:fuser=min_max "
            "--retriever hybrid:fuser=rrf,k=60 --output json",
            SAME_NAME,
        )
        for name in ("scifact", "cranfield", "cisi", "npl")
    },
    "fusion_scifact_train": (
        "ragline eval {bench}/scifact --split train --vector-index flat --retriever bm25 --retriever dense "
        "--retriever hybrid:fuser=min_max --retriever hybrid:fuser=z_score --retriever hybrid:fuser=rrf,k=60 "
        "--retriever hybrid:fuser=min_max,weights=0.3/0.7 --retriever hybrid:fuser=min_max,weights=0.7/0.3 "
        "--metrics ndcg@10,recall@100,mrr@10 --output json",
        SAME_NAME,
    ),
    **{
        f"scifact_chunks_{context}": (
            f"ragline eval {{bench}}/scifact --split test --vector-index flat --chunker fixed:size=128 "
            f"--context {context} {LEGS} --output json",
            SAME_NAME,
        )
        for context in ("none", "breadcrumb", "late")
    },
    "countries_en_minilm": (f"ragline eval benchmarks/data/countries-en {COUNTRIES} {LEGS} --output json", SAME_NAME),
    "countries_en_e5": (
        f"ragline eval benchmarks/data/countries-en {COUNTRIES} {LEGS} --embedder multilingual-e5-small --output json",
        SAME_NAME,
    ),
    "countries_zh_e5": (
        f"ragline eval benchmarks/data/countries-zh {COUNTRIES} --analyzer chinese {LEGS} "
        "--embedder multilingual-e5-small --output json",
        SAME_NAME,
    ),
    "countries_zh_bigram": (
        f"ragline eval benchmarks/data/countries-zh {COUNTRIES} --analyzer cjk-bigram --retriever bm25 --output json",
        SAME_NAME,
    ),
    "chunking": ("ragline experiment chunking --output json", SAME_NAME),
    "chunking_train": ("ragline experiment chunking --seed 224 --output json", SAME_NAME),
    "chunking_llm_context": (
        "ragline experiment chunking --chunker fixed:size=100,overlap=30 --context none --context breadcrumb "
        "--context late --context llm --output json",
        SAME_NAME,
    ),
    "lab_scorers_orrin": (
        "ragline experiment scorers --plot benchmarks/results/scorers_orrin.png --output json",
        SAME_NAME,
    ),
    **{
        f"lab_scorers_{name}": (
            f"ragline experiment scorers --dataset {{bench}}/{name} --plot benchmarks/results/scorers_{name}.png "
            "--output json",
            SAME_NAME,
        )
        for name in ("scifact", "cranfield")
    },
    "lab_rrf_k_orrin": ("ragline experiment rrf-k --plot benchmarks/results/rrf_k_orrin.png --output json", SAME_NAME),
    **{
        f"lab_rrf_k_{name}": (
            f"ragline experiment rrf-k --dataset {{bench}}/{name} --plot benchmarks/results/rrf_k_{name}.png "
            "--output json",
            SAME_NAME,
        )
        for name in ("scifact", "cranfield")
    },
    "lab_embedding_probe": (
        "ragline experiment embedding-probe --dataset {bench}/scifact --output json",
        SAME_NAME,
    ),
    "lab_dense_transfer": ("ragline experiment dense-transfer --output json", SAME_NAME),
    "lab_readers_countries": (
        "ragline experiment readers --closed-book 40 --plot benchmarks/results/readers_k_sweep_countries.png "
        "--output json",
        SAME_NAME,
    ),
    "lab_readers_squad": (
        "ragline experiment readers --dataset {bench}/squad_v2_dev_subset --closed-book 40 "
        "--plot benchmarks/results/readers_k_sweep_squad.png --output json",
        SAME_NAME,
    ),
    "lab_knowledge_update": ("ragline experiment knowledge-update --closed-book 10 --output json", SAME_NAME),
    "lost_in_the_middle": (
        "ragline experiment lost-in-the-middle --questions 30 --output json "
        "--plot benchmarks/results/lost_in_the_middle.png",
        SAME_NAME,
    ),
    "answers_orrin_extractive": (
        f"ragline eval benchmarks/data/orrin --reader extractive {ORRIN_READING} --output json",
        SAME_NAME,
    ),
    "answers_orrin_llm": (
        f"ragline eval benchmarks/data/orrin --reader llm:max_tokens=64 --match contains {ORRIN_READING} "
        "--judge default --output json",
        SAME_NAME,
    ),
    "answers_squad_extractive": (
        "ragline eval {bench}/squad_v2_dev_subset --reader extractive --retriever bm25 --output json",
        SAME_NAME,
    ),
    "answers_squad_extractive_sample200": (
        "ragline eval {bench}/squad_v2_dev_subset --reader extractive --retriever bm25 --sample 200 --seed 0 "
        "--output json",
        SAME_NAME,
    ),
    "answers_squad_llm": (
        "ragline eval {bench}/squad_v2_dev_subset --reader llm:max_tokens=48 --match contains --retriever bm25 "
        "--sample 200 --seed 0 --output json",
        SAME_NAME,
    ),
    "qa_support_calibration": ("python benchmarks/qa_support.py --calibrate --output json", SAME_NAME),
    "qa_support": ("python benchmarks/qa_support.py --output json", SAME_NAME),
    "concurrent_readers": ("python benchmarks/concurrent_readers.py --time-cap 540", SAME_NAME),
    "train_reranker_scifact": (
        "ragline train reranker {bench}/scifact --name scifact --negatives 5 --eval-every 40 --max-length 192",
        None,
    ),
    "rerank_depth_scifact_dev": (
        "python benchmarks/rerank_depth.py --dev-slice --depths 20,50 --weights 1.0,0.5,0.3,0.2 --tag scifact_dev",
        None,
    ),
    "answer_latency": ("python benchmarks/answer_latency.py --questions 10 --output json", SAME_NAME),
    "load_test": ("python benchmarks/load_test.py --clients 8 --seconds 60", SAME_NAME),
    "default_guard": ("python benchmarks/default_guard.py --train --llm", SAME_NAME),
    "index_memory": ("python benchmarks/index_memory.py --sizes 6,60", SAME_NAME),
    "scale_out": ("python benchmarks/scale_out.py --ray-docs 150 --kill-after 25,50", SAME_NAME),
    "scifact_best": (
        "ragline eval {bench}/scifact --split test --config pipelines/scifact-best.toml --output json",
        SAME_NAME,
    ),
}


def steps() -> dict[str, tuple[list[str], str | None]]:
    """Name -> (argv, result file stem or None), in an order that builds each step's input first."""
    return {name: (command_argv(cmd), name if result == SAME_NAME else result) for name, (cmd, result) in PLAN.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", help="run just this step (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the steps and exit")
    args = parser.parse_args()
    plan = steps()
    if args.list:
        for name, (cmd, _) in plan.items():
            print(f"{name}: {' '.join(cmd)}")
        return 0
    RESULTS.mkdir(parents=True, exist_ok=True)
    failed = []
    for name, (cmd, result) in plan.items():
        if args.only and name not in args.only:
            continue
        started = time.perf_counter()
        print(f"[bench] {name}: {' '.join(cmd)}", file=sys.stderr, flush=True)
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            failed.append(name)
            print(f"[bench] {name} FAILED ({done.returncode}):\n{done.stderr[-2000:]}", file=sys.stderr)
            continue
        if result is not None:
            (RESULTS / f"{result}.json").write_text(done.stdout.strip().splitlines()[-1] + "\n")
        print(f"[bench] {name}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    if failed:
        print(f"[bench] failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
