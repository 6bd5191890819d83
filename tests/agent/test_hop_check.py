"""The hop check (``AgentSettings.hop_check``): a decomposed hop's bridge must be supported by its sentence."""

from __future__ import annotations

import pytest

from ragline.agent.loop import AgentSettings, MultiHopAgent
from ragline.corpora.orrin import TRAIN_SEED, build_orrin
from ragline.errors import ConfigError
from ragline.eval.answers import grade_question
from ragline.index import Index
from ragline.index.filters import acl_filter
from ragline.ingest.pipeline import IngestConfig, chunk_documents
from ragline.types import Document


def indexed(documents, chunker: str) -> Index:
    index = Index.create(None)
    chunks, _ = chunk_documents(documents, IngestConfig(chunker, "none"))
    index.add(chunks)
    index.commit()
    return index


@pytest.fixture(scope="module")
def fragments():
    """The Orrin training world in 20-word chunks: sentences, and team names, cut at chunk edges."""
    corpus = build_orrin(TRAIN_SEED)
    return corpus, indexed(corpus.documents, "fixed:size=20,overlap=0")


def outcomes(agent: MultiHopAgent, corpus) -> list[str]:
    return [grade_question(q, *agent.answer(q.text, acl_filter(q.user_groups))).outcome
            for q in corpus.questions_of_type("multihop")]  # fmt: skip


def test_over_20_word_chunks_the_checked_hops_answer_what_unchecked_hops_get_wrong(fragments) -> None:
    # Unchecked, hop 1 takes "Line Crew" from "... maintained by the Line Crew" (the chunk ends there) or a
    # decommissioned site's team, and hop 2 answers for that team: 1 correct and 9 wrong of 14.
    corpus, index = fragments
    checked = outcomes(MultiHopAgent(index, AgentSettings(ladder=("bm25",))), corpus)
    unchecked = outcomes(MultiHopAgent(index, AgentSettings(ladder=("bm25",), hop_check=False)), corpus)
    assert checked.count("correct") >= 13 and checked.count("wrong") == 0, checked
    assert unchecked.count("wrong") >= 5, unchecked


def test_the_bridge_is_the_whole_name_even_when_a_chunk_edge_cuts_it(fragments) -> None:
    corpus, index = fragments
    agent = MultiHopAgent(index, AgentSettings(ladder=("bm25",)))
    for q in corpus.questions_of_type("multihop"):
        steps = agent.answer(q.text, acl_filter(q.user_groups))[0].details["trace"]["steps"]
        checks = [s["observation"] for s in steps if s["kind"] == "check"]
        assert checks and checks[-1] == f"supported: {q.bridge}", (q.text, checks)
        assert any(s["kind"] == "follow" for s in steps)  # hop 2 still follows the titles hop 1 named


RETIRED = Document(
    "site-459",
    "# Site SS-459 (Willowmere), closed\n\nThe site closed in 2019. Until its closure, SS-459 was maintained by the "
    "Red Hill team.\n",
    "Site SS-459 (Willowmere), closed",
)
TEAM = Document("team-red-hill", "# Red Hill\n\nThe Red Hill team is led by Mara Quist.\n", "Red Hill")


def test_a_bridge_about_another_record_is_rejected_and_the_agent_abstains_instead_of_answering_on() -> None:
    # Nothing says who maintains SS-777; the closest sentence is about SS-459. Unchecked, its team fills
    # hop 2 and the agent answers with that team's lead; checked, it abstains and says why.
    index = indexed([RETIRED, TEAM], "fixed:size=100,overlap=0")
    question = "Who leads the team that maintains substation SS-777?"
    unchecked, _ = MultiHopAgent(index, AgentSettings(ladder=("bm25",), hop_check=False)).answer(question)
    assert not unchecked.abstained and "Mara Quist" in unchecked.text
    checked, _ = MultiHopAgent(index, AgentSettings(ladder=("bm25",))).answer(question)
    assert checked.abstained and "support" in checked.details["reason"], checked
    steps = checked.details["trace"]["steps"]
    assert any(s["kind"] == "check" and s["observation"].startswith("rejected: Red Hill") for s in steps)
    assert sum(s["kind"] in ("retrieve", "escalate") for s in steps) >= 2  # it re-retrieved before abstaining
    # The same record asked about its own code is supported.
    own, _ = MultiHopAgent(index, AgentSettings(ladder=("bm25",))).answer(
        "Who leads the team that maintained site SS-459?"
    )
    assert not own.abstained and "Mara Quist" in own.text, own.details.get("reason")


def test_hop_coverage_outside_zero_to_one_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="hop_coverage must be a number from 0 to 1"):
        AgentSettings.from_params({"hop_coverage": 1.5})


def test_unsupported_bridge_question_goes_on_from_the_whole_question_and_leaves_the_reader_to_decline() -> None:
    """``unsupported_bridge=question``: the failed hop check no longer ends the question; the agent reads on from
    the whole question, and the reader's own support check declines (SS-777 is in no passage). Planted fault:
    ignoring the setting abstains with the hop check's reason and no second retrieval from the question."""
    index = indexed([RETIRED, TEAM], "fixed:size=100,overlap=0")
    question = "Who leads the team that maintains substation SS-777?"
    agent = MultiHopAgent(index, AgentSettings(ladder=("bm25",), unsupported_bridge="question"))
    answer, context = agent.answer(question)
    steps = answer.details["trace"]["steps"]
    assert any(s["kind"] == "check" and s["observation"] == "continue from the whole question" for s in steps)
    assert steps[-1]["kind"] == "read" and "hop check" not in answer.details.get("reason", "")
    assert answer.abstained and "Mara Quist" not in answer.text  # the reader, not the loop, declined
    with pytest.raises(ConfigError, match="unsupported_bridge must be abstain or question"):
        AgentSettings.from_params({"unsupported_bridge": "guess"})
