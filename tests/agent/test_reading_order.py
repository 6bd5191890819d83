"""What the agent hands its reader: every hop's passages ranked by their grade against the question read."""

from __future__ import annotations

from pathlib import Path

from ragline.agent.steps import _by_grade
from ragline.answer.context import document_id
from ragline.answer.pipeline import RAGPipeline
from ragline.config import load_config
from ragline.eval.answers import grade_question
from ragline.index.filters import acl_filter
from ragline.types import Hit

ROOT = Path(__file__).resolve().parents[2]


def test_passages_are_ranked_by_grade_and_ties_keep_their_order() -> None:
    """Planted fault checked: sorting by ascending grade (or ignoring the grades) fails this."""
    hits = [Hit(f"d{i}", 1.0, i, "", f"text {i}") for i in range(1, 5)]
    ranked = _by_grade(hits, [0.2, 0.9, 0.2, 0.5])
    assert [h.doc_id for h in ranked] == ["d2", "d4", "d1", "d3"]
    assert [h.rank for h in ranked] == [1, 2, 3, 4]


def test_a_single_hop_question_keeps_its_first_hops_evidence_in_front_of_the_reader(world) -> None:
    """A literal question ("What caused error E-...?") grades below the threshold at hop 1, so an interleaved hop
    follows; it skips the documents already read and brings other incidents only. Planted fault checked: handing
    the reader the last hop's passages first (the old order, ``_renumber`` alone) abstains on every one of them."""
    corpus, index = world
    agent = RAGPipeline.from_config(load_config(ROOT / "pipelines" / "agent.toml"), index).reader
    outcomes = []
    for q in corpus.questions_of_type("literal")[:6]:
        answer, context = agent.answer(q.text, acl_filter(q.user_groups))
        outcomes.append(grade_question(q, answer, context).outcome)
        assert document_id(context.sources[0].hit) in q.gold_doc_ids, q.text
    assert outcomes.count("correct") >= 5, outcomes
