"""The lecture experiments on small corpora: each measures what it says, on real parts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragline.eval.experiments import Query, TypeScores, Workload, scorers
from ragline.index import BM25Params, Index, IndexSettings
from ragline.retrieve.fusion import min_max_normalize
from ragline.types import Document


def small_workload() -> Workload:
    docs = [
        Document("meal", "The meal limit for business travel is 50 euros per day."),
        Document("code", "Incident E-2952 was caused by a failed breaker at the substation."),
        Document("remote", "Employees may work remotely two days a week after probation."),
        Document("filler", "The cafeteria serves lunch from noon. Travel to the cafeteria is short."),
    ]
    index = Index.create(None, IndexSettings())
    index.add(docs)
    index.commit()
    queries = [
        Query("q1", "meal limit travel", "literal", frozenset({"meal"})),
        Query("q2", "incident E-2952 cause", "literal", frozenset({"code"})),
        Query("q3", "how often can staff work from home", "paraphrase", frozenset({"remote"})),
    ]
    return Workload("small", index, queries)


def test_type_scores_count_hit_mrr_and_recall_of_all_gold() -> None:
    scores = TypeScores()
    scores.add(Query("a", "", "multihop", frozenset({"x", "y"})), ["x", "z", "w"])
    scores.add(Query("b", "", "multihop", frozenset({"x", "y"})), ["z", "y", "x"])
    row = scores.means()["multihop"]
    # Hit@1 counts one of the two; recall needs both gold documents in the top 10.
    assert row == {"n": 2, "hit@1": 0.5, "mrr@10": 0.75, "recall@10": 0.5}


def test_a_dataset_query_typed_all_is_counted_once() -> None:
    scores = TypeScores()
    scores.add(Query("a", "", "all", frozenset({"x"})), ["x"])
    scores.add(Query("b", "", "all", frozenset({"x"})), ["y"])
    assert scores.means() == {"all": {"n": 2, "hit@1": 0.5, "mrr@10": 0.5, "recall@10": 0.5}}


def test_scorers_experiment_on_a_small_corpus() -> None:
    workload = small_workload()
    payload = scorers.run(workload, fine=False)
    json.dumps(payload)
    assert set(payload["by_scorer"]) >= {"overlap", "tfidf"}
    assert payload["by_scorer"]["tfidf"]["literal"]["hit@1"] == 1.0
    assert len(payload["lecture_grid"]) == 9
    # The stuffed chunks were removed again: the index holds what it held.
    assert len(payload["stuffing"]) > 2
    assert sorted(d.id for d in workload.index.documents()) == ["code", "filler", "meal", "remote"]


def test_stuffing_wins_under_linear_tf_but_not_under_bm25() -> None:
    workload = small_workload()
    probe = scorers.stuffing_probe(
        workload, {"linear": BM25Params("okapi", 1e6, 0.0), "bm25": BM25Params("okapi", 1.2, 0.75)}, n_queries=2
    )
    assert probe["linear"]["stuffed_rank_1"] == 1.0
    assert probe["bm25"]["stuffed_rank_1"] < probe["linear"]["stuffed_rank_1"]
    assert len(workload.index) == 4


def test_saturation_matches_the_lecture_numbers() -> None:
    curve = scorers.saturation()
    at = curve["tf"].index(10)
    assert curve["bm25 k1=1.2"][at] == 1.9643  # "10 occurrences give only ~1.96x" (k1 = 1.2)
    assert curve["linear tf"][at] == 10


def test_an_outlier_squeezes_min_max_scores() -> None:
    run = {"a": 9.0, "b": 6.0, "c": 3.0}
    squeezed = min_max_normalize({**run, "stuffed": 90.0})
    assert np.isclose(min_max_normalize(run)["b"], 0.5) and squeezed["b"] < 0.05


@pytest.mark.models  # embeds four passages with MiniLM
def test_the_outlier_arm_costs_score_fusion_its_top_hit_and_rrf_nothing() -> None:
    """The rrf-k experiment's outlier arm: a stuffed document at 10x the best BM25 score joins the BM25 run.
    Planted fault: the arm fusing the runs without the stuffed document (its rows then equal the plain ones)."""
    from ragline.eval.experiments import fusion

    small = small_workload()
    index = Index.create(None, IndexSettings(embedder="minilm", vector_index="flat"))
    index.add(list(small.index.documents()))
    index.commit()
    payload = fusion.run(Workload("small", index, small.queries))
    plain, stuffed = payload["by_fuser"], payload["outlier"]["by_fuser"]
    for k in fusion.RRF_KS:  # one rank for the outlier: the document both legs agree on stays first
        assert stuffed[f"rrf k={k}"]["hit@1"] == plain[f"rrf k={k}"]["all"]["hit@1"] == 1.0
    for name in ("min_max", "z_score"):  # the outlier squeezes every other normalized BM25 score
        assert stuffed[name]["hit@1"] < plain[name]["all"]["hit@1"]
