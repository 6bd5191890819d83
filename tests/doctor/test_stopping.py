"""The missing-stopping-rules probe on Orrin over BM25 (no embedding, no LLM): a reader that answers what the
visible collection cannot answer flags, an agent with only a safety cap flags for what it spends, and the agent
with pipelines/agent.toml's stopping limits passes, on the same questions."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.config import load_config
from ragline.doctor import stopping
from ragline.doctor.base import DoctorRun
from ragline.doctor.probefile import load_probe_file

from .test_error_accumulation import WEAK_BM25

pytestmark = pytest.mark.slow

# error accumulation's config over 100-word chunks, its reader an inline table or a quoted spec
BM25 = WEAK_BM25.replace("size=20,overlap=0", "size=100,overlap=30").replace('"{reader}"', "{reader}")
assert "size=100" in BM25 and '"{reader}"' not in BM25  # the template it is made from still has those lines


def _run(tmp_path: Path, name: str, reader: str) -> DoctorRun:
    config = tmp_path / f"{name}.toml"
    config.write_text(BM25.format(reader=reader))
    probes = load_probe_file().quick()
    return DoctorRun(load_config(str(config)), probes, work=tmp_path / f"work-{name}", quick=True)


def _inline(spec: dict) -> str:  # type: ignore[type-arg]
    import json

    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in spec.items()) + " }"


def test_hidden_gold_documents_never_reach_a_retrieval(tmp_path: Path) -> None:
    """Planted fault checked: ``hidden`` returning only the ACL filter lets the gold documents back in."""
    r = _run(tmp_path, "hidden", '"extractive"')
    asked = stopping.unanswerable(r, 12)
    assert {q.type for q, _ in asked} >= {"multihop", "permission"}  # both kinds, interleaved
    retriever = r.pipeline(reader=False)
    for question, where in asked:
        if question.gold_doc_ids:
            hits = retriever.retrieve(question.text, where)
            assert hits and not {h.document_id for h in hits} & set(question.gold_doc_ids), question.id


def test_a_reader_that_answers_the_unanswerable_flags_and_the_agent_with_limits_passes(tmp_path: Path) -> None:
    """Planted fault checked: ``failed`` not counting an answer as a failure makes the weak reader pass."""
    weak = stopping.run(_run(tmp_path, "weak", '"extractive:threshold=0,support=off"'))
    assert weak.status == "flag", weak.rule
    assert "answered" in weak.arms["configured"]["why"].values()
    limited = stopping.run(_run(tmp_path, "agent", _inline(stopping.agent_reader())))
    assert limited.status == "pass", (limited.rule, limited.arms["configured"])
    assert limited.arms["configured"]["abstained_with_reason"] == 1.0


def test_an_agent_with_only_a_safety_cap_flags_for_what_it_spends(tmp_path: Path) -> None:
    """Planted fault checked: ``failed`` ignoring the budget lets the capped-only agent pass (it abstains
    with a reason on most questions, after more retrievals than the fixed arm's limit)."""
    result = stopping.run(_run(tmp_path, "capped", _inline(stopping.unfixed_reader())))
    assert result.status == "flag", (result.rule, result.arms)
    assert any(why.startswith("past the") for why in result.arms["configured"]["why"].values()), result.arms
    assert result.arms["configured"]["max_retrievals_seen"] > result.arms["fixed"]["max_retrievals_seen"]
