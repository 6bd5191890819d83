"""An evaluation indexes vectors when any part of the pipeline searches them, the agent's ladder included."""

from __future__ import annotations

from dataclasses import replace

from ragline.config import load_config
from ragline.eval.harness import config_needs_embeddings


def test_the_agents_hybrid_ladder_makes_the_evaluation_index_vectors() -> None:
    """Planted fault: deciding from the main retriever alone (bm25 in agent.toml) builds no vectors, and the
    agent's hybrid rung silently drops out."""
    agent = load_config("agent")
    assert agent.retrieve.retriever == "bm25"
    assert config_needs_embeddings(agent)


def test_a_bm25_ladder_and_a_bm25_pipeline_need_no_vectors() -> None:
    """Planted fault: indexing vectors for every agent whatever its ladder."""
    agent = load_config("agent")
    bm25_ladder = replace(agent, read=replace(agent.read, reader={**agent.read.reader, "ladder": ["bm25"]}))
    assert not config_needs_embeddings(bm25_ladder)
    assert not config_needs_embeddings(load_config("bm25"))
