"""The CRAG grader threshold against accuracy and cost: the shipped agent with only ``threshold`` changed.

Multi-hop questions of the Orrin training world (``TRAIN_SEED``) and of the countries training world
(``TRAIN_SEED``), each indexed as ``pipelines/agent.toml`` says (no embeddings, so the ladder is BM25 and
an escalation is the rewritten query). For each threshold: answer accuracy (exact match, the share
correct), wrong and abstained shares, and cost in retrievals a question (from each trace), under the
shipped ``policy = "read"`` and under ``policy = "abstain"``. Writes JSON and a PNG plot.

    PYTHONPATH=src python benchmarks/agent_threshold_sweep.py
        [--out benchmarks/results/agent_threshold_sweep.json] [--plot benchmarks/results/agent_threshold_sweep.png]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragline.agent.loop import AgentSettings, MultiHopAgent
from ragline.config import load_config
from ragline.corpora import countries, orrin
from ragline.eval.answers import grade_question
from ragline.index import Index
from ragline.index.filters import acl_filter
from ragline.ingest.pipeline import IngestConfig, chunk_documents

ROOT = Path(__file__).resolve().parents[1]
THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
POLICIES = ("read", "abstain")


def worlds(config) -> dict:
    built = {"orrin_train": orrin.build_orrin(orrin.TRAIN_SEED), "countries_train": countries.build_countries(
        countries.TRAIN_SEED)}  # fmt: skip
    out = {}
    for name, corpus in built.items():
        index = Index.create(None)
        chunks, _ = chunk_documents(corpus.documents, IngestConfig(config.ingest.chunker, config.ingest.context))
        index.add(chunks)
        index.commit()
        out[name] = (corpus.questions_of_type("multihop"), index)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(ROOT / "pipelines" / "agent.toml"))
    parser.add_argument("--out", default="benchmarks/results/agent_threshold_sweep.json")
    parser.add_argument("--plot", default="benchmarks/results/agent_threshold_sweep.png")
    args = parser.parse_args()
    config = load_config(args.config)
    params = {k: v for k, v in dict(config.read.reader).items() if k != "name"}
    report: dict = {"config": args.config, "worlds": {}}
    for world, (questions, index) in worlds(config).items():
        rows = []
        for policy in POLICIES:
            for threshold in THRESHOLDS:
                agent = MultiHopAgent(index, AgentSettings.from_params({**params, "threshold": threshold,
                                                                        "policy": policy}))  # fmt: skip
                outcomes, retrievals = [], 0
                for q in questions:
                    answer, context = agent.answer(q.text, acl_filter(q.user_groups))
                    outcomes.append(grade_question(q, answer, context).outcome)
                    retrievals += answer.details["trace"]["cost"]["retrievals"]
                n = len(questions)
                rows.append({"policy": policy, "threshold": threshold, "questions": n,
                             "correct": round(outcomes.count("correct") / n, 4),
                             "wrong": round(outcomes.count("wrong") / n, 4),
                             "abstained": round(sum(o.startswith("abstain") for o in outcomes) / n, 4),
                             "retrievals_per_question": round(retrievals / n, 3)})  # fmt: skip
        report["worlds"][world] = rows
    text = json.dumps(report, indent=2)
    print(text)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    plot(report, Path(args.plot))


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for i, (world, rows) in enumerate(report["worlds"].items()):
        for policy, style in (("read", "-"), ("abstain", "--")):
            mine = [r for r in rows if r["policy"] == policy]
            xs = [r["threshold"] for r in mine]
            axes[0].plot(xs, [r["correct"] for r in mine], style, marker="o", color=f"C{i}",
                         label=f"{world}, policy={policy}")  # fmt: skip
            axes[1].plot(xs, [r["retrievals_per_question"] for r in mine], style, marker="o", color=f"C{i}",
                         label=f"{world}, policy={policy}")  # fmt: skip
    axes[0].set_ylabel("accuracy (exact match)")
    axes[0].set_ylim(0, 1.02)
    axes[1].set_ylabel("retrievals per question")
    for ax in axes:
        ax.set_xlabel("grader threshold")
        ax.legend(fontsize=7)
    fig.suptitle("CRAG grader threshold: accuracy and cost (multi-hop, training worlds)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
