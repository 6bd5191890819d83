"""``ragline experiment graph`` on the Orrin training world (retrieval only, no embedder)."""

from __future__ import annotations

import json

import pytest

from llm_fakes import FakeLLM
from ragline.eval.experiments import graph


@pytest.mark.slow
def test_graph_experiment_measures_every_retriever_per_type_and_the_cost(tmp_path, monkeypatch):
    """Every retriever gets a row per question type, the aggregate types among them, and the graph's cost.
    Planted fault: the aggregate questions not added (with_aggregate dropped) fails the type assert."""
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path))  # a cached reply would be no call

    def reply(messages, *_):
        facts = [line[2:] for line in messages[-1]["content"].splitlines() if line.startswith("- ")]
        return facts[0] if facts else json.dumps({"entities": ["Orrin Grid"], "relations": []})

    fake = FakeLLM(reply, structured=True)
    result = graph.run(retrievers=("bm25", "graph-local"), llm=fake, llm_chunks=2)
    assert [r["retriever"] for r in result["rows"]] == ["bm25", "graph-local"]
    assert {"comparison", "listing", "counting", "theme", "multihop"} <= set(result["rows"][0]["by_type"])
    assert "vs_first" in result["rows"][1]
    cost = result["cost"]
    assert cost["llm_calls"] == 0 and cost["chunks"] > 0 and cost["reports"] > 0 and cost["bytes_per_1000_chunks"] > 0
    llm = result["llm_cost"]  # the LLM extractor over the first 2 chunks, one call each
    assert llm["extractor"] == "llm" and llm["chunks"] == 2 and llm["llm_calls"] == 2
    assert llm["llm_calls_per_1000_chunks"] == 1000.0 and llm["tokens"] > 0
    written = result["llm_report_cost"]  # the rules extractor, the reports written by the model
    assert written["reporter"] == "llm" and written["report_llm_calls"] == written["llm_calls"] > 0
    assert llm["llm_calls"] + written["llm_calls"] == len(fake.calls)
