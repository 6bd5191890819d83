"""The equal-budget arms of ``benchmarks/agent_single_vs_iterative.py``: built, paired, and held to B passages."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ragline.answer.pipeline import build_reader
from ragline.config import load_config
from ragline.errors import ConfigError
from ragline.index.filters import acl_filter
from ragline.retrieve.registry import build_retriever

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from agent_single_vs_iterative import agent_for, build_arms, equal_budget_pairs, run_arm  # noqa: E402


def test_every_agent_arm_is_paired_with_single_shot_at_its_budget():
    arms = build_arms({10: (5, 5), 5: (3, 2)}, retrievers=("bm25", "hybrid"), single_ks=(5, 10, 20))
    pairs = {(s.name, i.name) for s, i in equal_budget_pairs(arms)}
    assert pairs == {("single-bm25-k10", "iter-bm25-B10"), ("single-bm25-k5", "iter-bm25-B5"),
                     ("single-hybrid-k10", "iter-hybrid-B10"), ("single-hybrid-k5", "iter-hybrid-B5")}  # fmt: skip
    assert {a.name for a in arms if not a.iterative} >= {"single-bm25-k20", "single-hybrid-k20"}


@pytest.mark.parametrize("splits", [{10: (5, 4)}, {5: (3, 3)}, {5: (5, 0)}, {10: ()}])
def test_a_split_that_does_not_spend_exactly_its_budget_is_refused(splits):
    with pytest.raises(ConfigError, match="sum to"):
        build_arms(splits, single_ks=(5, 10))


def test_a_budget_without_its_single_shot_partner_is_refused():
    with pytest.raises(ConfigError, match="no single-shot arm with k = 10"):
        build_arms({10: (6, 4)}, single_ks=(5, 20))


@pytest.mark.parametrize("budget,split", [(5, (3, 2)), (4, (2, 1, 1))])
def test_the_agent_hands_the_reader_at_most_its_budget_over_all_hops(world, budget, split):
    corpus, index = world
    base = {k: v for k, v in dict(load_config(ROOT / "pipelines" / "agent.toml").read.reader).items() if k != "name"}
    (arm,) = [a for a in build_arms({budget: split}, retrievers=("bm25",), single_ks=(budget,)) if a.iterative]
    agent = agent_for(arm, index, base, "extractive")
    reader = build_reader("extractive")
    retriever = build_retriever("bm25", index)
    hops_seen = set()
    for q in corpus.questions_of_type("multihop"):
        answer, context, cost = run_arm(arm, q.text, acl_filter(q.user_groups), retriever, agent, reader)
        assert len(context.sources) <= budget
        assert cost["retrievals"] >= 1
        hops_seen.add(len({s["hop"] for s in answer.details["trace"]["steps"] if s.get("hop")}))
    assert max(hops_seen) >= 2  # the budget was spread over hops, not spent by one retrieval
