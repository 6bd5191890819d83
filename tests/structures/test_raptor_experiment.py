"""``ragline experiment raptor``: what it counts, and a run on a training world without a model."""

from __future__ import annotations

import pytest
from bag_embedder import BagEmbedder

from ragline.corpora.base import Question
from ragline.corpora.orrin import TRAIN_SEED
from ragline.eval.experiments import raptor as experiment


def test_complete_needs_every_evidence_sentence() -> None:
    """Planted fault checked: `any` instead of `all` in `_score` fails the second assertion."""
    q = Question("q", "How many?", "counting", "2", gold_doc_ids=["a", "b"],
                 evidence=[("a", "Alpha is based at Fenwick."), ("b", "Beta is based at Fenwick.")])  # fmt: skip
    both = experiment._score(q, ["Intro. Alpha is based at Fenwick.", "Beta is based at Fenwick. More."], ["a", "b"])
    one = experiment._score(q, ["Alpha is based at Fenwick.", "Something else."], ["a", "c"])
    assert both == {"complete": 1.0, "gold_recall": 1.0}
    assert one == {"complete": 0.0, "gold_recall": 0.5}


def test_a_listing_is_right_only_with_every_item() -> None:
    """Planted fault checked: `any` instead of `all` in `aggregate_correct` fails the second assertion."""
    q = Question("q", "Which teams are based at Fenwick?", "listing", "Line Crew North; Relay Services North")
    assert experiment.aggregate_correct(q, "Line Crew North and Relay Services North.")
    assert not experiment.aggregate_correct(q, "Line Crew North.")
    count = Question("c", "How many?", "counting", "2", aliases=["two"])
    assert experiment.aggregate_correct(count, "There are two.") and not experiment.aggregate_correct(count, "20")


@pytest.mark.slow
def test_runs_every_arm_on_the_same_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ragline.index.store.load_index_embedder", lambda *args: BagEmbedder())
    arms = {"hybrid": "hybrid", "raptor": "raptor", "raptor-traversal": "raptor:mode=traversal"}
    payload = experiment.run(TRAIN_SEED, arms, agent=False, reader="extractive", read_per_type=1)
    assert [r["arm"] for r in payload["rows"]] == list(arms)
    assert payload["rows"][0]["aggregate"]["n"] == 4  # one question of each aggregate type
    for row in payload["rows"]:
        assert row["all"]["n"] == payload["questions"] and 0 <= row["aggregate"]["complete"] <= row["aggregate"]["n"]
    assert "vs_hybrid_aggregate" in payload["rows"][1] and "answered_vs_hybrid" in payload["rows"][1]
    assert all(0 <= row["aggregate"]["answered"] <= row["aggregate"]["n"] for row in payload["rows"])
    # the two RAPTOR arms share one tree: built (and costed) once
    assert len(payload["costs"]) == 1 and payload["costs"][0]["nodes"] > payload["chunks"]
