"""``ragline experiment reflection``'s arms on a small sample of the Orrin evaluation world (a stand-in LLM)."""

from __future__ import annotations

import pytest

from llm_fakes import FakeLLM
from ragline.corpora.closed_book import CLOSED_BOOK
from ragline.corpora.orrin import DEFAULT_SEED
from ragline.eval.experiments import reflection
from ragline.reflect.worlds import orrin_world

pytestmark = pytest.mark.slow  # every arm on 19 questions, the agent's own chunking indexed once (cached)


def test_self_rag_and_the_router_retrieve_less_on_closed_book_questions_and_lose_no_answer() -> None:
    """The issue's acceptance line on a sample: fewer retrievals on closed-book questions than always-retrieve,
    and no fewer correct answers. A stand-in LLM answers each closed-book question with its gold answer, so the
    count measures the routing, not a model.

    Planted fault checked: a Self-RAG ``retrieve_threshold`` of 0 (always retrieve) gives it 1.0 retrievals a
    closed-book question, as many as always-retrieve."""
    world = orrin_world(DEFAULT_SEED)
    gold = {q.text: q.answer for q in world.questions if q.type == CLOSED_BOOK}
    llm = FakeLLM(lambda messages, *_: gold.get(messages[-1]["content"], "no idea"))
    payload = reflection.run(world, llm=llm, per_type=1, seed=0)
    assert payload["questions"] == 7 + 12 and set(payload["arms"]) == set(reflection.ARMS)
    summary = {name: arm["summary"] for name, arm in payload["arms"].items()}
    always = summary["always-retrieve"][CLOSED_BOOK]
    assert always["retrievals"] == 1.0
    for name in ("self-rag", "routed"):
        closed = summary[name][CLOSED_BOOK]
        assert closed["retrievals"] < always["retrievals"], name
        assert closed["correct"] >= always["correct"] and closed["correct"] > 0, name
    assert summary["agent"]["all"]["retrievals"] > summary["routed"]["all"]["retrievals"]
    assert "self-rag vs always-retrieve" in payload["paired"] and "routed vs agent" in payload["paired"]
