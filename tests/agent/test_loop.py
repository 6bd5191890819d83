"""The multi-hop agent on the training worlds: hops, bridges, grader, stopping rules, traces, registry."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragline.agent.decompose import BRIDGE, RuleDecomposer
from ragline.agent.grader import LexicalGrader
from ragline.agent.loop import AgentSettings, MultiHopAgent
from ragline.agent.trace import render
from ragline.answer.pipeline import RAGPipeline
from ragline.components import build
from ragline.config import load_config
from ragline.errors import ConfigError
from ragline.eval.answers import grade_question
from ragline.index import Index
from ragline.index.filters import acl_filter
from ragline.types import Hit

ROOT = Path(__file__).resolve().parents[2]


def bm25_agent(index: Index, **settings) -> MultiHopAgent:
    return MultiHopAgent(index, AgentSettings(**{"ladder": ("bm25",), **settings}))


def test_the_rule_decomposer_splits_clauses_of_any_domain() -> None:
    d = RuleDecomposer()
    assert [h.text for h in d.decompose("Which river flows through the city whose mayor is Anna Berg?")] == [
        "city whose mayor is Anna Berg", f"Which river flows through {BRIDGE}?"]  # fmt: skip
    assert [h.text for h in d.decompose("What is the main export of the country led by Kelek Telithun?")] == [
        "country led by Kelek Telithun", f"What is the main export of {BRIDGE}?"]  # fmt: skip
    nested = d.decompose("Who founded the label that signed the band that recorded Blue Train?")
    assert [h.text for h in nested] == ["band that recorded Blue Train", f"label that signed {BRIDGE}",
                                        f"Who founded {BRIDGE}?"]  # fmt: skip
    assert [h.text for h in d.decompose("When was Blue Train recorded?")] == ["When was Blue Train recorded?"]


def test_multihop_questions_are_answered_across_hops_with_citations_from_both(world) -> None:
    corpus, index = world
    agent = bm25_agent(index)
    outcomes = []
    for q in corpus.questions_of_type("multihop"):
        answer, context = agent.answer(q.text, acl_filter(q.user_groups))
        outcomes.append(grade_question(q, answer, context).outcome)
        assert set(q.gold_doc_ids) <= {s.doc_id for s in context.sources}, q.text  # evidence of both hops
        hops = [s for s in answer.details["trace"]["steps"] if s["kind"] == "retrieve"]
        assert len(hops) == 2 and q.bridge in hops[1]["query"]  # the second query carries the bridge
    assert outcomes.count("correct") >= 13, outcomes


def test_a_loop_that_never_finds_enough_stops_at_its_limit_and_abstains_saying_why(world) -> None:
    _, index = world
    agent = bm25_agent(index, threshold=1.01, retries=2, policy="abstain")  # no grade reaches 1.01
    answer, _ = agent.answer("Who leads the team that maintains the reactor that cools Vessel Nine?")
    assert answer.abstained and "threshold" in answer.details["reason"]
    trace = answer.details["trace"]
    attempts = [s for s in trace["steps"] if s["kind"] in ("retrieve", "escalate")]
    # the query and its rewrite; a one-rung ladder has nothing costlier, so the hop gives up there
    assert [s["kind"] for s in attempts] == ["retrieve", "escalate"] and trace["cost"]["retrievals"] == 2
    assert "threshold" in trace["stop_reason"]


def test_the_retrieval_cap_stops_the_loop(world) -> None:
    corpus, index = world
    q = corpus.questions_of_type("multihop")[0]
    answer, _ = bm25_agent(index, max_retrievals=1).answer(q.text, acl_filter(q.user_groups))
    trace = answer.details["trace"]
    assert trace["cost"]["retrievals"] == 1 and "retrieval cap of 1" in trace["stop_reason"]


def test_a_weak_grade_escalates_to_the_next_rung_of_the_ladder(world) -> None:
    _, index = world
    agent = MultiHopAgent(
        index, AgentSettings(ladder=("bm25", "bm25:k1=0.5,b=0.2"), threshold=1.01, retries=2, max_hops=1)
    )
    answer, _ = agent.answer("When was Blue Train recorded?")
    rungs = [s["retriever"] for s in answer.details["trace"]["steps"] if s["kind"] in ("retrieve", "escalate")]
    assert rungs == ["bm25", "bm25", "bm25:k1=0.5,b=0.2"]


def test_restricted_text_never_enters_the_trace_of_a_user_who_cannot_see_it(world) -> None:
    corpus, index = world
    agent = bm25_agent(index)
    for q in [q for q in corpus.questions if q.expected_abstain]:
        answer, context = agent.answer(q.text, acl_filter(q.user_groups))
        shown = json.dumps(answer.details["trace"])
        assert not any(doc in shown for doc in q.forbidden_doc_ids), q.text
        assert not set(q.forbidden_doc_ids) & {s.doc_id for s in context.sources}


def test_the_trace_is_jsonl_and_prints_readably(world) -> None:
    corpus, index = world
    q = corpus.questions_of_type("multihop")[0]
    answer, _ = bm25_agent(index).answer(q.text, acl_filter(q.user_groups))
    trace = answer.details["trace"]
    text = render(trace)
    assert "decompose" in text and "retrieve hop 2" in text and "stop:" in text
    for step in trace["steps"]:
        assert {"n", "kind"} <= set(step)
    json.dumps(trace)  # plain data, as --output json needs


def test_the_lexical_grader_prefers_the_hit_that_answers_the_subquestion() -> None:
    grader = LexicalGrader()
    good = Hit("a", 1.0, 1, text="The Blue Lake team is led by Ada Moss. It has 9 members.")
    bad = Hit("b", 1.0, 2, text="The canteen opens at noon. Parking is free.")
    high, low = grader.grade("Who leads the Blue Lake team?", [good, bad])
    assert high > 0.4 and low == 0.0


def test_the_agent_is_built_from_the_shipped_pipeline_config(world) -> None:
    corpus, index = world
    pipeline = RAGPipeline.from_config(load_config(ROOT / "pipelines" / "agent.toml"), index)
    reader = pipeline.reader
    assert getattr(reader, "retrieves", False) and reader.settings.hop_k == (5, 5)
    assert [r[0] for r in reader.rungs] == ["bm25"]  # hybrid needs embeddings this index lacks
    q = corpus.questions_of_type("multihop")[0]
    answer, context = reader.answer(q.text, acl_filter(q.user_groups))
    assert grade_question(q, answer, context).outcome == "correct"


def test_bad_settings_are_config_errors_that_name_the_setting(world) -> None:
    _, index = world
    with pytest.raises(ConfigError, match="unknown setting"):
        build("reader", "agent:hops=3", index=index)
    with pytest.raises(ConfigError, match="policy"):
        build("reader", "agent:policy=guess", index=index)
    with pytest.raises(ConfigError, match="embeddings"):
        build("reader", "agent:ladder=[dense]", index=index)


def test_the_agent_code_holds_no_vocabulary_of_a_test_corpus() -> None:
    vocabulary = re.compile(r"substation|\bss-|depot|crew|orrin|grid ops|korelir|capital is", re.IGNORECASE)
    for path in (ROOT / "src" / "ragline" / "agent").glob("*.py"):
        assert not vocabulary.findall(path.read_text(encoding="utf-8")), path.name


@pytest.mark.slow
def test_ask_with_the_agent_config_prints_its_trace_and_eval_grades_multihop(capsys, tmp_path) -> None:
    # The acceptance path: the Orrin export, the shipped agent pipeline, one question type.
    import json

    from ragline.cli import main

    out = tmp_path / "orrin"
    assert main(["corpus", "orrin", "--out", str(out), "--train"]) == 0
    capsys.readouterr()
    assert main(["eval", str(out), "--config", "agent", "--types", "multihop", "--output", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert set(summary["by_type"]) == {"multihop"} and summary["by_type"]["multihop"]["correct"] >= 11
    index = str(tmp_path / "idx")
    assert main(["index", str(out), "--index", index, "--config", "agent", "--output", "json"]) == 0
    capsys.readouterr()
    question = next(json.loads(line) for line in (out / "questions.jsonl").open() if '"multihop"' in line)
    assert main(["ask", question["question"], "--index", index, "--config", "agent", "--trace"]) == 0
    printed = capsys.readouterr().out
    assert "trace" in printed and "hop 2" in printed and "retrievals" in printed
    assert main(["ask", question["question"], "--index", index, "--config", "agent", "--output", "json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["trace"]["steps"] and answer["provenance"]["config"]["name"] == "agent"
