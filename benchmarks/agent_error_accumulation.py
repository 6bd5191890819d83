"""Error accumulation over chained steps: success of an n-step chain vs (1 - e)^n, with and without a self-check.

Each step is one real read: a countries question (evaluation world, ``direct`` and ``paraphrase``),
BM25 top 5 of the index chunked as ``pipelines/agent.toml``, the extractive reader. Only questions the
clean pipeline answers correctly are steps, so a step fails only by an injected error and theory is
(1 - e)^n. A read error is injected with probability ``e``: the reader's answer is replaced by one of
its own runner-up candidates that is wrong (the error a span reader makes). A chain of ``n`` steps
succeeds when every step's answer is right. The self-check runs the support check
(``ragline.answer.support.SupportCheck``: does the answer's sentence carry the question?) on each
step's answer; an answer it rejects is read again (one retry, itself exposed to ``e``), and an answer
still rejected ends the chain as an abstention (a failure, not a wrong answer). Chains are sampled
with a fixed seed. Writes JSON and a PNG plot.

    PYTHONPATH=src python benchmarks/agent_error_accumulation.py [--chains 2000]
        [--out benchmarks/results/agent_error_accumulation.json]
        [--plot benchmarks/results/agent_error_accumulation.png]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from ragline.answer.context import build_context
from ragline.answer.extractive import Candidate
from ragline.answer.support import SupportCheck
from ragline.components import build
from ragline.corpora.countries import build_countries
from ragline.index import Index
from ragline.index.filters import acl_filter
from ragline.ingest.pipeline import IngestConfig, chunk_documents
from ragline.retrieve.registry import build_retriever
from ragline.text.normalize import normalize_answer

RATES = (0.05, 0.1, 0.2, 0.3)
STEPS = (1, 2, 3, 4, 5)
RUNNER_UPS = 10  # wrong candidates an injected error may pick from


def step_pool() -> list[dict]:
    """Per clean-correct question: whether the support check accepts the right answer, and each wrong runner-up."""
    corpus = build_countries()
    index = Index.create(None)
    chunks, _ = chunk_documents(corpus.documents, IngestConfig("fixed:size=100,overlap=30", "breadcrumb"))
    index.add(chunks)
    index.commit()
    retriever = build_retriever("bm25", index)
    reader = build("reader", "extractive", index=index).reader  # the span reader, whose candidates are needed
    check = SupportCheck(analyzer=index.settings.analyzer)
    pool = []
    for q in [*corpus.questions_of_type("direct"), *corpus.questions_of_type("paraphrase")]:
        gold = {normalize_answer(a) for a in [q.answer, *q.aliases]}
        context = build_context(retriever.search(q.text, 5, acl_filter(q.user_groups)), 1500)
        answer = reader.read(q.text, context)
        if answer.abstained or normalize_answer(answer.text) not in gold:
            continue
        candidates = reader.candidates(q.text, context)
        right = [c for c in candidates if normalize_answer(c.text) in gold]
        wrong = [supported(check, q.text, c) for c in candidates if normalize_answer(c.text) not in gold][:RUNNER_UPS]
        if right and wrong:
            pool.append({"id": q.id, "right_supported": supported(check, q.text, right[0]), "wrong_supported": wrong})
    return pool


def supported(check: SupportCheck, question: str, candidate: Candidate) -> bool:
    """The support check of a candidate at its own place in its chunk, as the reader runs it."""
    hit = candidate.hit
    title = f"{hit.title} {hit.metadata.get('section', '')}".strip()
    return check(question, candidate.text, hit.text, title, at=candidate.start)


def read_step(step: dict, e: float, rng: random.Random) -> tuple[bool, bool]:
    """(answer right, support check accepts it) for one read with error rate ``e``."""
    if rng.random() < e:
        return False, rng.choice(step["wrong_supported"])
    return True, step["right_supported"]


def chain_succeeds(steps: list[dict], e: float, self_check: bool, rng: random.Random) -> bool:
    for step in steps:
        right, accepted = read_step(step, e, rng)
        if self_check and not accepted:
            right, accepted = read_step(step, e, rng)  # one retry
            if not accepted:
                return False  # abstains: the chain does not finish
        if not right:
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chains", type=int, default=2000, help="sampled chains per (e, n)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/agent_error_accumulation.json")
    parser.add_argument("--plot", default="benchmarks/results/agent_error_accumulation.png")
    args = parser.parse_args()
    pool = step_pool()
    caught = [not s for p in pool for s in p["wrong_supported"]]
    report = {"world": "countries (evaluation world), direct + paraphrase", "steps_in_pool": len(pool),
              "chains": args.chains, "seed": args.seed,
              "wrong_runner_ups_rejected_by_check": round(sum(caught) / len(caught), 4),
              "right_answers_rejected_by_check": round(sum(not p["right_supported"] for p in pool) / len(pool), 4),
              "rows": []}  # fmt: skip
    rng = random.Random(args.seed)
    for e in RATES:
        for n in STEPS:
            row = {"e": e, "n": n, "theory": round((1 - e) ** n, 4)}
            for self_check in (False, True):
                wins = sum(chain_succeeds(rng.sample(pool, n), e, self_check, rng) for _ in range(args.chains))
                row["with_check" if self_check else "without_check"] = round(wins / args.chains, 4)
            report["rows"].append(row)
    text = json.dumps(report, indent=2)
    print(text)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    plot(report, Path(args.plot))


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, e in enumerate(RATES):
        rows = [r for r in report["rows"] if r["e"] == e]
        color = f"C{i}"
        ax.plot(STEPS, [r["theory"] for r in rows], ":", color=color, label=f"(1-e)^n, e={e}")
        ax.plot(STEPS, [r["without_check"] for r in rows], "o-", color=color, label=f"measured, e={e}")
        ax.plot(STEPS, [r["with_check"] for r in rows], "s--", color=color, label=f"with self-check, e={e}")
    ax.set_xlabel("steps n")
    ax.set_ylabel("chain success")
    ax.set_xticks(list(STEPS))
    ax.set_ylim(0, 1.02)
    ax.set_title(f"Error accumulation ({report['steps_in_pool']} real reads, {report['chains']} chains per point)")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
