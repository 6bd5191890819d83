"""Orrin Grid paraphrase questions (17 a world), Hit@1: hybrid against query transforms and trained models.

Usage::

    PYTHONPATH=src python benchmarks/orrin_paraphrase.py                      # synonyms from a corpus thesaurus
    PYTHONPATH=src python benchmarks/orrin_paraphrase.py --embedder trained:orrin-synthetic \\
        --reranker trained:orrin-synthetic-reranker --llm-arms

Every arm is chosen on the training world (``ragline corpus orrin --train``, seed 224) and only the choice is
run on the evaluation world, once. Arms (each over the MiniLM hybrid unless it says otherwise):

* ``synonyms``: the ``synonyms`` transform with a thesaurus built from the world's own corpus
  (``ragline.retrieve.thesaurus``: corpus terms and their nearest MiniLM vocabulary words), one arm per
  (``--min-dfs`` x ``--thresholds``), weight ``--weight``;
* ``--embedder NAME``: hybrid over an index embedded by a model trained on synthetic queries
  (``ragline train queries`` then ``ragline train embedder``);
* ``--reranker NAME``: the cross-encoder ``NAME`` over hybrid's top 10, alone and interpolated w = 0.5;
* ``--llm-arms``: the earlier LLM transforms (rewrite, multi-query, HyDE; the reply cache answers a rerun).

Each arm is compared with hybrid on the same world (paired randomization test on Hit@1 and nDCG@10).
Output: one JSON line, also written to ``benchmarks/results/orrin_paraphrase.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"
METRICS = ("hit@1", "ndcg@10", "hit@10")


def world(folder: Path, train: bool) -> Path:
    """The Orrin world as a BEIR folder (written by ``ragline corpus orrin``)."""
    argv = [sys.executable, "-m", "ragline", "corpus", "orrin", "--out", str(folder)] + (["--train"] if train else [])
    subprocess.run(argv, check=True, capture_output=True)
    return folder


def evaluate_arms(folder: Path, arms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each arm's metrics on the paraphrase questions of ``folder``, one index per embedder."""
    from ragline.cli.evaluate import EVAL_BASE
    from ragline.eval.datasets import load_beir, only_types
    from ragline.eval.harness import build_eval_index, evaluate_retrieval

    dataset = only_types(load_beir(folder, "test"), {"paraphrase"})
    out = []
    for embedder in dict.fromkeys(arm["embedder"] for arm in arms):
        group = [arm for arm in arms if arm["embedder"] == embedder]
        base = EVAL_BASE.with_overrides(index={"embedder": embedder})
        configs = [base.with_overrides(retrieve={"retriever": arm["retriever"]}) for arm in group]
        built = build_eval_index(dataset, configs)
        for arm, result in zip(group, evaluate_retrieval(dataset, configs, built, METRICS, depth=100)):
            hits = result.per_query_metric("hit@1")
            out.append({**arm, **{m: round(float(result.metrics[m]), 4) for m in METRICS},
                        "hits": int(sum(hits.values())), "queries": len(hits),
                        "per_query": {m: result.per_query_metric(m) for m in ("hit@1", "ndcg@10")}})  # fmt: skip
    return out


def compared(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with their paired tests against the first row (hybrid); the per-query values dropped."""
    from ragline.eval.stats import compare

    base = rows[0]["per_query"]
    for row in rows[1:]:
        tests = {m: compare(base[m], row["per_query"][m]) for m in ("hit@1", "ndcg@10")}
        row["vs_hybrid"] = {m: {"delta": round(c["delta"], 4), "p_randomization": round(c["p_randomization"], 4)}
                            for m, c in tests.items()}  # fmt: skip
    for row in rows:
        row["lost"] = sorted(q for q, v in row["per_query"]["hit@1"].items() if v < base["hit@1"][q])
        row["gained"] = sorted(q for q, v in row["per_query"]["hit@1"].items() if v > base["hit@1"][q])
        del row["per_query"]
    return rows


def thesaurus_arms(folder: Path, out: Path, min_dfs: list[int], thresholds: list[float], weight: float,
                   neighbours: int) -> list[dict[str, Any]]:  # fmt: skip
    """A thesaurus file per (min_df, threshold) built from ``folder``'s corpus, and its arm."""
    from ragline.retrieve.thesaurus import word_vectors, write_thesaurus
    from ragline.train.synthetic import read_corpus

    documents = read_corpus(folder)
    arms = []
    for min_df in min_dfs:
        vectors = word_vectors(documents, min_df=min_df)
        for threshold in thresholds:
            file = out / f"{folder.name}-df{min_df}-t{threshold}.txt"
            groups = vectors.groups(threshold, neighbours)
            write_thesaurus(groups, file, f"{folder.name}: min_df {min_df}, threshold {threshold}")
            spec = f'transformed:first=hybrid,transforms="synonyms:file={file},weight={weight}"'
            arms.append({"arm": "synonyms", "label": f"synonyms min_df={min_df} threshold={threshold}",
                         "embedder": "minilm", "retriever": spec, "groups": len(groups),
                         "setting": {"min_df": min_df, "threshold": threshold, "weight": weight}})  # fmt: skip
    return arms


def training_arms(args: argparse.Namespace, folder: Path, tmp: Path) -> list[dict[str, Any]]:
    arms = [{"arm": "hybrid", "label": "hybrid", "embedder": "minilm", "retriever": "hybrid"}]
    if args.llm_arms:
        for name in ("multi-query", "hyde", "rewrite"):
            arms.append({"arm": name, "label": f"+ {name}", "embedder": "minilm",
                         "retriever": f"transformed:first=hybrid,transforms={name}"})  # fmt: skip
    if args.reranker:
        for w in (1.0, 0.5):
            cross = f"cross:model={args.reranker}" + (f",interpolate={w}" if w < 1 else "")
            arms.append({"arm": "reranker", "label": f"+ {args.reranker} top 10, w = {w}", "embedder": "minilm",
                         "retriever": f'reranked:first=hybrid,reranker="{cross}",depth=10'})  # fmt: skip
    if args.embedder:
        arms.append({"arm": "embedder", "label": f"hybrid over {args.embedder}", "embedder": args.embedder,
                     "retriever": "hybrid"})  # fmt: skip
    if args.thresholds:
        thresholds = [float(t) for t in args.thresholds.split(",")]
        min_dfs = [int(n) for n in args.min_dfs.split(",")]
        arms += thesaurus_arms(folder, tmp, min_dfs, thresholds, args.weight, args.neighbours)
    return arms


def choices(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per kind of arm, the training world's best (Hit@1, then nDCG@10; the first listed on a tie)."""
    best: dict[str, dict[str, Any]] = {}
    for row in rows[1:]:
        kept = best.get(row["arm"])
        if kept is None or (row["hit@1"], row["ndcg@10"]) > (kept["hit@1"], kept["ndcg@10"]):
            best[row["arm"]] = row
    return list(best.values())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--thresholds", default="0.6,0.7,0.8", help="thesaurus cosine thresholds ('' for none)")
    p.add_argument("--min-dfs", default="1,2", help="thesaurus least document frequencies of a corpus term")
    p.add_argument("--neighbours", type=int, default=3, help="synonyms per corpus term (3)")
    p.add_argument("--weight", type=float, default=0.5, help="weight of the expanded query (0.5)")
    p.add_argument("--embedder", help="an embedder trained on synthetic queries, e.g. trained:orrin-synthetic")
    p.add_argument("--reranker", help="a reranker trained on synthetic queries")
    p.add_argument("--llm-arms", action="store_true", help="also the LLM transforms rewrite, multi-query, HyDE")
    p.add_argument("--tag", default="", help="suffix of the result file")
    p.add_argument("--out", help="the result file (default: benchmarks/results/orrin_paraphrase[_TAG].json)")
    args = p.parse_args()

    with tempfile.TemporaryDirectory(prefix="orrin-para-") as name:
        tmp = Path(name)
        train_world, eval_world = world(tmp / "orrin-train", True), world(tmp / "orrin-eval", False)
        train_rows = compared(evaluate_arms(train_world, training_arms(args, train_world, tmp)))
        picked = choices(train_rows)
        eval_arms = [{k: v for k, v in train_rows[0].items() if k in ("arm", "label", "embedder", "retriever")}]
        for row in picked:
            arm = {k: v for k, v in row.items() if k in ("arm", "label", "embedder", "retriever", "setting")}
            if row["arm"] == "synonyms":  # the same setting, the thesaurus built from this world's corpus
                setting = row["setting"]
                arm = thesaurus_arms(eval_world, tmp, [setting["min_df"]], [setting["threshold"]], setting["weight"],
                                     args.neighbours)[0]  # fmt: skip
            eval_arms.append(arm)
        eval_rows = compared(evaluate_arms(eval_world, eval_arms))
    for row in train_rows + eval_rows:  # the thesaurus files lived in the temporary folder
        row["retriever"] = row["retriever"].replace(str(tmp) + "/", "")
    result = {"benchmark": "orrin_paraphrase", "questions": "paraphrase", "metrics": list(METRICS),
              "choice": "per kind of arm, the best training-world Hit@1 (then nDCG@10)",
              "training_world": train_rows, "evaluation_world": eval_rows}  # fmt: skip
    path = Path(args.out) if args.out else RESULTS / f"orrin_paraphrase{'_' + args.tag if args.tag else ''}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
