"""``ragline experiment graph`` on the Orrin training world (retrieval only, no embedder)."""

from __future__ import annotations

import pytest

from ragline.eval.experiments import graph


@pytest.mark.slow
def test_graph_experiment_measures_every_retriever_per_type_and_the_cost():
    """Every retriever gets a row per question type, the aggregate types among them, and the graph's cost.
    Planted fault: the aggregate questions not added (with_aggregate dropped) fails the type assert."""
    result = graph.run(retrievers=("bm25", "graph-local"))
    assert [r["retriever"] for r in result["rows"]] == ["bm25", "graph-local"]
    assert {"comparison", "listing", "counting", "theme", "multihop"} <= set(result["rows"][0]["by_type"])
    assert "vs_first" in result["rows"][1]
    cost = result["cost"]
    assert cost["llm_calls"] == 0 and cost["chunks"] > 0 and cost["reports"] > 0 and cost["bytes_per_1000_chunks"] > 0
