"""The error accumulation probe on Orrin in weak's 20-word chunks (BM25 only, so no embedding is needed):
the agent of pipelines/agent.toml, whose hops are support-checked, is the fix that helps."""

from __future__ import annotations

from pathlib import Path

from ragline.config import load_config
from ragline.doctor import error_accumulation
from ragline.doctor.base import DoctorRun
from ragline.doctor.probefile import load_probe_file

WEAK_BM25 = """schema = 1
name = "weak-bm25"
[ingest]
chunker = "fixed:size=20,overlap=0"
context = "none"
[index]
embedder = "none"
[retrieve]
retriever = "bm25"
k = 5
[read]
reader = "{reader}"
"""


def _probe(tmp_path: Path, reader: str):  # type: ignore[no-untyped-def]
    config = tmp_path / "config.toml"
    config.write_text(WEAK_BM25.format(reader=reader))
    return error_accumulation.run(DoctorRun(load_config(str(config)), load_probe_file(), work=tmp_path / "work"))


def test_over_20_word_chunks_the_checked_agent_is_not_wrong_where_the_single_shot_reader_is(tmp_path: Path) -> None:
    # Before the hop check the fixed arm took half names ("Line Crew") and neighbouring records' teams
    # as bridges and answered 8 of 14 wrong, so the probe did not flag weak.
    result = _probe(tmp_path, "extractive:threshold=0,support=off")
    assert result.status == "flag", result.rule
    assert result.arms["fixed"]["wrong"] <= 1 / 14 and result.arms["fixed"]["correct"] >= 9 / 14, result.arms
    assert result.arms["unfixed"]["wrong"] > result.arms["fixed"]["wrong"], result.arms  # no check: errors compound
