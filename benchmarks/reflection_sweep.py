"""Choose the reflection readers' settings on the Orrin *training* world: a small grid for Self-RAG and CRAG.

Every question of the training world (``TRAIN_SEED``) and its closed-book questions, as in ``ragline experiment
reflection`` (BM25, the extractive reader, closed-book answers from the calculator or the cached local LLM).
Self-RAG: ``retrieve_threshold`` x ``min_score`` x ``w_use``; CRAG: the bands ``(lower, upper)`` x
``strip_threshold``. Each row: correct / wrong / abstained on all questions and on the closed-book ones,
and retrievals per question. The rule (written before the run): the most correct answers overall, ties to
fewer wrong, then fewer retrievals. Writes JSON.

    PYTHONPATH=src python benchmarks/reflection_sweep.py [--out benchmarks/results/reflection_sweep_train.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path
from typing import Any

from ragline.corpora.orrin import TRAIN_SEED
from ragline.eval.experiments import reflection
from ragline.reflect.worlds import orrin_world

ROOT = Path(__file__).resolve().parents[1]
SELF_RAG = {"retrieve_threshold": (0.3, 0.5, 0.7), "min_score": (0.3, 0.5, 0.8), "w_use": (0.0, 0.5)}
CRAG = {"bands": ((0.2, 0.5), (0.3, 0.7), (0.4, 0.8)), "strip_threshold": (0.1, 0.3, 0.5)}
ALL = 10_000  # questions per type: every one


def grid(axes: dict[str, tuple[Any, ...]]) -> list[dict[str, Any]]:
    return [dict(zip(axes, values)) for values in itertools.product(*axes.values())]


def crag_settings(row: dict[str, Any]) -> dict[str, Any]:
    lower, upper = row["bands"]
    return {"lower": lower, "upper": upper, "strip_threshold": row["strip_threshold"]}


def best(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return max(rows, key=lambda r: (r["all"]["correct"], -r["all"]["wrong"], -r["all"]["retrievals"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/reflection_sweep_train.json"))
    args = parser.parse_args()
    started = time.perf_counter()
    world = orrin_world(TRAIN_SEED)
    out: dict[str, Any] = {"world": world.name, "questions": len(world.questions)}
    for arm, axes, to_settings in (("self-rag", SELF_RAG, dict), ("crag", CRAG, crag_settings)):
        rows = []
        for row in grid(axes):
            settings = to_settings(row)
            payload = reflection.run(world, per_type=ALL, names=(arm,), settings={arm: settings})
            summary = payload["arms"][arm]["summary"]
            rows.append({"settings": settings, "all": summary["all"], "closed_book": summary["closed-book"]})
            print(arm, settings, summary["all"], flush=True)
        out[arm] = {"rows": rows, "chosen": best(rows)}
    out["wall_s"] = round(time.perf_counter() - started, 1)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({arm: out[arm]["chosen"] for arm in ("self-rag", "crag")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
