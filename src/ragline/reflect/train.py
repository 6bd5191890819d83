"""Train the reflection critics on the training worlds: ``python -m ragline.reflect.train [--out FILE]``.

Data: the Orrin *training* world (``TRAIN_SEED``) and the English countries training world, each a BM25
index of its chunks, every question (its closed-book ones included) asked as its user. Seven tenths of each
world's questions train (``worlds.held_out``: a stable hash of the id); the other three are held out and
give each critic's AUC, beside the lexical grade's on the same samples (the acceptance line of CRAG's
evaluator). Labels come from the QA sets, never from a rule:

* ``retrieve``: a question of the world needs retrieval; a closed-book one does not;
* ``relevance``: a BM25 top-10 hit is of a gold document of its question;
* ``retrieval``: a top-5 list holds a gold document; each answerable question also gives the top 5
  with its gold documents removed (a wrong retrieval that looks like a right one), closed-book and
  permission questions give lists that hold none;
* ``route``: the cheapest route that answered the question correctly: ``none`` for closed-book
  questions, else ``single`` (one BM25 retrieval, the extractive reader) if it was right, else ``agent`` (the
  agent of ``pipelines/agent.toml`` on BM25) if it was, else ``single``.

The critics are written to ``critics.json`` (checked in); the report (sizes, AUCs, route accuracy) is
printed as JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from ragline.reflect.critics import CRITICS_FILE, Critics, LogisticCritic, load_critics, save_critics
from ragline.reflect.features import PASSAGE, QUESTION, RETRIEVAL, passage_features, retrieval_features
from ragline.reflect.worlds import World, countries_world, held_out, orrin_world, user_filter

CLOSED = "closed-book"
K = 5
DEPTH = 10


def auc(scores: list[float], labels: list[int]) -> float | None:
    """ROC AUC (scikit-learn), None when the labels have one class only."""
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, scores)) if len(set(labels)) == 2 else None


def agent_spec() -> dict[str, Any]:
    """``pipelines/agent.toml``'s agent on BM25 alone (the training indexes hold no vectors)."""
    from ragline.config import load_config

    spec = dict(load_config("agent").read.reader)  # type: ignore[arg-type]
    spec["ladder"] = ["bm25"]
    return spec


def route_label(world: World, question: Any, retriever: Any, reader: Any, agent: Any) -> str:
    from ragline.answer.context import build_context
    from ragline.eval.answers import grade_question

    if question.type == CLOSED:
        return "none"
    context = build_context(retriever.search(question.text, K, user_filter(question)))
    if grade_question(question, reader.read(question.text, context), context).outcome == "correct":
        return "single"
    answer, context = agent.answer(question.text, user_filter(question))
    return "agent" if grade_question(question, answer, context, "em").outcome == "correct" else "single"


def collect(worlds: list[World], relevance: LogisticCritic | None = None) -> dict[str, Any]:
    """Feature rows and labels of every critic, per split (``train`` / ``held``)."""
    from ragline.agent.grader import LexicalGrader
    from ragline.components import build
    from ragline.reflect.critics import Critics
    from ragline.retrieve.registry import build_retriever

    data: dict[str, Any] = {
        s: {c: ([], [], [], []) for c in ("retrieve", "relevance", "retrieval", "route")} for s in ("train", "held")
    }
    for world in worlds:
        critics = Critics(world.index)
        terms = critics.terms
        retriever = build_retriever("bm25", world.index)
        reader = build("reader", "extractive")
        agent = build("reader", agent_spec(), index=world.index)
        lexical = LexicalGrader(world.index)
        for q in world.questions:
            split = data["held" if held_out(world.name, q) else "train"]
            row = critics.question_row(q.text)
            split["retrieve"][0].append(row)
            split["retrieve"][1].append("yes" if q.type != CLOSED else "no")
            split["route"][0].append(row)
            split["route"][1].append(route_label(world, q, retriever, reader, agent) if relevance else "single")
            hits = retriever.search(q.text, DEPTH, user_filter(q))
            gold = set(q.gold_doc_ids)
            rows = passage_features(q.text, hits, terms)
            split["relevance"][0].extend(rows)
            split["relevance"][1].extend("yes" if h.document_id in gold else "no" for h in hits)
            split["relevance"][2].extend(r[4] for r in rows)  # the lexical grade, the baseline
            if relevance is None:
                continue
            without = [
                h for h in retriever.search(q.text, DEPTH + len(gold) * 5, user_filter(q)) if h.document_id not in gold
            ][:K]
            lists = [(hits[:K], any(h.document_id in gold for h in hits[:K]))]
            if gold:
                lists.append((without, False))
            for listed, good in lists:
                prows = passage_features(q.text, listed, terms)
                probs = list(relevance.probability(prows)) if prows else []
                split["retrieval"][0].append(retrieval_features(probs, prows, row[0]))
                split["retrieval"][1].append("yes" if good else "no")
                split["retrieval"][2].append(max(lexical.grade(q.text, listed), default=0.0))
                split["retrieval"][3].append(world.name)
    return data


def train(worlds: list[World]) -> tuple[dict[str, LogisticCritic], dict[str, Any]]:
    started = time.perf_counter()
    first = collect(worlds)
    rel = first["train"]["relevance"]
    relevance = LogisticCritic.fit("relevance", PASSAGE, rel[0], rel[1], ("no", "yes"))
    data = collect(worlds, relevance)
    critics = {"relevance": relevance}
    report: dict[str, Any] = {"worlds": [w.name for w in worlds]}
    names = {"retrieve": QUESTION, "retrieval": RETRIEVAL}
    for name, features in names.items():
        rows, labels, *_ = data["train"][name]
        critics[name] = LogisticCritic.fit(name, features, rows, labels, ("no", "yes"))
    rows, labels, *_ = data["train"]["route"]
    classes = tuple(c for c in ("none", "single", "agent") if c in labels)
    critics["route"] = LogisticCritic.fit("route", QUESTION, rows, labels, classes)
    for name in ("retrieve", "relevance", "retrieval"):
        held_rows, held_labels, baseline, of_world = data["held"][name]
        y = [int(label == "yes") for label in held_labels]
        scores = list(critics[name].probability(held_rows))
        entry: dict[str, Any] = {
            "train": dict(Counter(data["train"][name][1])),
            "held_out": dict(Counter(held_labels)),
            "auc": auc(scores, y),
        }
        if baseline:
            entry["lexical_auc"] = auc(list(baseline), y)
        for world in dict.fromkeys(of_world):  # the same AUCs on each world's held-out questions alone
            at = [i for i, w in enumerate(of_world) if w == world]
            entry[world] = {
                "n": len(at),
                "auc": auc([scores[i] for i in at], [y[i] for i in at]),
                "lexical_auc": auc([baseline[i] for i in at], [y[i] for i in at]),
            }
        report[name] = entry
    held_rows, held_labels, *_ = data["held"]["route"]
    predicted = [critics["route"].classes[i] for i in np.argmax(critics["route"].probabilities(held_rows), axis=1)]
    report["route"] = {
        "train": dict(Counter(labels)),
        "held_out": dict(Counter(held_labels)),
        "accuracy": float(np.mean([p == t for p, t in zip(predicted, held_labels)])),
        "predicted": dict(Counter(predicted)),
    }
    for name, critic in critics.items():
        critics[name] = LogisticCritic(**{**critic.__dict__, "card": {"worlds": report["worlds"], **report[name]}})
    report["seconds"] = round(time.perf_counter() - started, 1)
    return critics, report


def main(argv: list[str] | None = None) -> int:
    from ragline.corpora.countries import TRAIN_SEED as COUNTRIES_TRAIN
    from ragline.corpora.orrin import TRAIN_SEED

    parser = argparse.ArgumentParser(prog="python -m ragline.reflect.train", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(CRITICS_FILE), help="where to write the critics (default: built-in)")
    args = parser.parse_args(argv)
    critics, report = train([orrin_world(TRAIN_SEED), countries_world(COUNTRIES_TRAIN)])
    save_critics(critics, Path(args.out))
    load_critics.cache_clear()
    print(json.dumps(report, indent=1))
    return 0


__all__ = ["Critics", "auc", "main", "train"]

if __name__ == "__main__":
    raise SystemExit(main())
