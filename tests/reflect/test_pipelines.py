"""The named reflection pipelines answer the issue's question on the built-in world through ``ragline ask``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main

PIPELINES = Path(__file__).resolve().parents[2] / "pipelines"
QUESTION = "Who leads the team that maintains substation SS-495?"


@pytest.mark.slow
@pytest.mark.models  # the built-in index's MiniLM vectors and the hybrid retriever's query encoder
@pytest.mark.parametrize("name", ["self-rag", "crag", "routed"])
def test_named_pipeline_answers_the_multi_hop_question(capsys, monkeypatch, name: str) -> None:
    """The answer is the team lead, cited from the team's page; the reader recorded its own route and cost.

    Planted fault checked: ``segments = false`` in self-rag.toml / crag.toml abstains (no passage holds both hops).
    """
    monkeypatch.delenv("RAGLINE_INDEX", raising=False)
    assert main(["ask", QUESTION, "--config", str(PIPELINES / f"{name}.toml"), "--output", "json"]) == 0
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert result["answer"] == "Jonas Petrov" and not result["abstained"]
    assert [c["doc_id"] for c in result["citations"]] == ["team-line-crew-east"]
    assert result["provenance"]["config"]["read"]["reader"]["name"] == name
