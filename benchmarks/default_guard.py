"""What the injection firewall costs the default pipeline: Orrin answers with and without its [guard].

Both arms are ``pipelines/default.toml`` over the built-in index of an Orrin world (hybrid retrieval, 100-word
chunks), one as shipped (``[guard] guard = "firewall:policy=redact"``) and one with the guard removed; each
question is asked as its user (its ACL filter). Every question is answered by the extractive reader in both
arms. With ``--llm``, the local LLM of the default pipeline answers, in both arms, the questions whose context
the firewall changed (a source redacted or dropped): every other question's prompt is the same in both arms,
byte for byte, so greedy decoding gives it the same reply and its outcome cannot change. Grading is
``ragline eval``'s (``--match contains`` for the LLM's sentence answers).

    PYTHONPATH=src python benchmarks/default_guard.py --train --llm    # the Orrin training world
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ragline.answer.pipeline import RAGPipeline, build_reader
from ragline.config import load_config
from ragline.corpora.builtin import orrin_index
from ragline.corpora.orrin import DEFAULT_SEED, TRAIN_SEED
from ragline.eval.answers import grade_question
from ragline.index.filters import acl_filter

sys.path.insert(0, str(Path(__file__).parent))
from common import log, print_result  # noqa: E402

OUTCOMES = ("correct", "wrong", "abstained")


def tally(outcomes: list[str]) -> dict[str, int]:
    counts = Counter(outcomes)
    return {o: counts.get(o, 0) for o in OUTCOMES}


def by_type(questions: list[Any], outcomes: list[str]) -> dict[str, dict[str, int]]:
    types = sorted({q.type for q in questions})
    return {t: tally([o for q, o in zip(questions, outcomes) if q.type == t]) for t in types}


def answer_all(
    pipelines: dict[str, RAGPipeline], questions: list[Any], match: str, every: int = 10
) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {name: [] for name in pipelines}
    for i, q in enumerate(questions, start=1):
        for name, pipeline in pipelines.items():
            answer, context = pipeline.answer(q.text, acl_filter(q.user_groups))
            out[name].append(grade_question(q, answer, context, match=match).outcome)  # type: ignore[arg-type]
        if i % every == 0 or i == len(questions):
            log(f"{i}/{len(questions)}: " + ", ".join(f"{n} {tally(o)}" for n, o in out.items()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", action="store_true", help="the Orrin training world (for choosing settings)")
    parser.add_argument("--llm", action="store_true", help="the local LLM on the questions whose context changed")
    parser.add_argument("--output", choices=["json", "pretty"], default="json")
    args = parser.parse_args()

    seed = TRAIN_SEED if args.train else DEFAULT_SEED
    index, corpus = orrin_index(seed=seed)
    guarded = load_config("default")
    if not guarded.guard.guard:
        raise SystemExit("pipelines/default.toml has no [guard]: nothing to measure")
    unguarded = guarded.with_overrides(guard={"guard": None})
    arms = {"without_guard": unguarded, "with_guard": guarded}
    retrieval = {name: RAGPipeline.from_config(c, index, reader=False) for name, c in arms.items()}
    questions = corpus.questions
    changed = []
    for q in questions:
        contexts = [[s.text for s in p.context(q.text, acl_filter(q.user_groups)).sources] for p in retrieval.values()]
        if contexts[0] != contexts[1]:
            changed.append(q)
    log(f"{len(changed)} of {len(questions)} contexts changed by the firewall")
    extractive = {n: RAGPipeline.from_config(c.with_overrides(read={"reader": "extractive"}), index)
                  for n, c in arms.items()}  # fmt: skip
    ext = answer_all(extractive, questions, "em")
    result: dict[str, Any] = {
        "world": "orrin training" if args.train else "orrin evaluation",
        "seed": seed,
        "questions": len(questions),
        "guard": guarded.guard.guard,
        "contexts_changed": {
            "n": len(changed),
            "by_type": dict(Counter(q.type for q in changed)),
            "ids": [q.id for q in changed],
        },  # fmt: skip
        "extractive": {n: {"all": tally(o), "by_type": by_type(questions, o)} for n, o in ext.items()},
    }
    if args.llm and changed:
        from ragline.models.llm import CachedLLM, load_llm

        llm = CachedLLM(load_llm(None))
        reader = build_reader(guarded.read.reader, llm=llm)
        readers = {n: RAGPipeline.from_config(c, index, reader=False) for n, c in arms.items()}
        for pipeline in readers.values():
            pipeline.reader = reader
        llm_out = answer_all(readers, changed, "contains", every=1)  # replies are cached: a rerun resumes
        result["llm_on_changed"] = {
            "reader": reader.config(),
            **{n: {"all": tally(o), "per_question": dict(zip([q.id for q in changed], o))} for n, o in llm_out.items()},
            "cache": {"hits": llm.hits, "misses": llm.misses},
        }
    print_result(result, args.output)


if __name__ == "__main__":
    main()
