"""Smoke runs of the benchmark scripts behind BENCHMARKS.md on tiny inputs: each runs as its command does
(a subprocess from the repository root) and its JSON states the fact the script exists to measure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(script: str, *args: str, bench: Path | None = None, cache: Path | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    if cache is not None:
        env["RAGLINE_CACHE"] = str(cache)
    if bench is not None:
        env["RAGLINE_BENCH"] = str(bench)
    done = subprocess.run([sys.executable, f"benchmarks/{script}.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout[done.stdout.index("{") :])


@pytest.mark.slow
def test_agent_error_accumulation_the_self_check_keeps_chains_alive(tmp_path: Path) -> None:
    """Planted fault: ``chain_succeeds`` ignoring its ``self_check`` argument (both columns then follow
    (1 - e)^n and the check's gain disappears)."""
    report = _run("agent_error_accumulation", "--chains", "100", "--out", str(tmp_path / "r.json"),
                  "--plot", str(tmp_path / "r.png"))  # fmt: skip
    rows = report["rows"]
    assert rows and all(r["theory"] == round((1 - r["e"]) ** r["n"], 4) for r in rows)
    assert report["right_answers_rejected_by_check"] == 0.0 and report["wrong_runner_ups_rejected_by_check"] > 0.5
    gain = sum(r["with_check"] - r["without_check"] for r in rows) / len(rows)
    assert gain > 0.05
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_agent_equal_budget_never_hands_on_more_than_the_budget(bench: Path) -> None:
    """Three held-out HotpotQA questions, BM25. Planted fault: the B = 10 arm run with hop_k 6 + 5 (a split that
    overspends its budget)."""
    report = _run("agent_equal_budget", str(bench / "hotpotqa_train_hipporag_100"), "--first", "97", bench=bench)
    assert report["questions"] == 3 and report["split"] == "held out"
    assert set(report["budgets"]) == {"10", "5"}
    for budget, row in report["budgets"].items():
        assert sum(row["split"]) == int(budget)
        assert 0.0 <= row["iterative_all_gold"] <= 1.0 and 0.0 <= row["single_all_gold"] <= 1.0
        assert row["delta"] == pytest.approx(row["iterative_all_gold"] - row["single_all_gold"])


@pytest.mark.slow
def test_ppr_equal_budget_compares_each_spec_with_the_baseline(bench: Path) -> None:
    """Three held-out HotpotQA questions, BM25 baseline and BM25-seeded ppr (no embedder). Planted fault: the
    delta taken against the wrong arm (baseline minus ppr) fails the last assert."""
    report = _run("ppr_equal_budget", str(bench / "hotpotqa_train_hipporag_100"), "--first", "97", "--baseline",
                  "bm25", "--ppr", "ppr:first=bm25", "--budget", "5", bench=bench)  # fmt: skip
    assert report["questions"] == 3 and report["split"] == "held out" and set(report["budgets"]) == {"5"}
    row = report["budgets"]["5"]
    arm = row["ppr"]["ppr:first=bm25"]
    assert 0.0 <= arm["all_gold"] <= 1.0 and 0.0 <= row["baseline_all_gold"] <= 1.0
    assert arm["delta"] == pytest.approx(arm["all_gold"] - row["baseline_all_gold"])


@pytest.mark.slow
def test_injection_firewall_flags_hostile_dev_passages_and_keeps_benign_ones() -> None:
    """The dev split (the test split is reported once). Planted fault: the detector's threshold above every score
    (nothing flagged)."""
    report = _run("injection_firewall", "--split", "dev")
    assert report["split"] == "dev" and report["hostile"] > 0 and report["benign"] > 0
    assert report["hostile_flagged"] >= 0.9 and report["benign_quarantined"] == 0.0
    ext = report["extractive"]
    assert ext["with_firewall"]["attack_success"] <= ext["without_firewall"]["attack_success"]


@pytest.mark.slow  # about 15 s of CPU: four indexes of the two training worlds
def test_agent_hop_check_keeps_every_right_bridge_and_rejects_more_wrong_ones_as_the_threshold_rises() -> None:
    """The table the shipped ``hop_coverage`` was chosen from. Planted fault: the support check built without
    the threshold (``SupportCheck(min_coverage=t)`` dropped): every threshold then rejects the same candidates."""
    from ragline.agent.settings import HOP_COVERAGE

    report = _run("agent_hop_check")
    total = {float(t): row for t, row in report["total"].items()}
    assert report["columns"] == ["right kept", "right total", "wrong rejected", "wrong total"]
    thresholds = sorted(total)
    assert all(total[t][0] == total[t][1] > 0 for t in thresholds if t <= HOP_COVERAGE)  # no right bridge lost
    rejected = [total[t][2] for t in thresholds]
    assert rejected == sorted(rejected) and rejected[-1] > rejected[0]
    assert total[max(t for t in thresholds if t <= HOP_COVERAGE)][2] > total[thresholds[0]][3] / 2


@pytest.mark.slow  # about 10 s of CPU: the shipped agent at 11 thresholds x 2 policies on two training worlds
def test_agent_threshold_sweep_moves_the_agent_from_answering_to_abstaining(tmp_path: Path) -> None:
    """Planted fault: the sweep's threshold not handed to the agent (every row then the shipped agent's)."""
    report = _run("agent_threshold_sweep", "--out", str(tmp_path / "s.json"), "--plot", str(tmp_path / "s.png"))
    assert set(report["worlds"]) == {"orrin_train", "countries_train"}
    for rows in report["worlds"].values():
        assert len(rows) == 22 and {r["policy"] for r in rows} == {"read", "abstain"}
        for r in rows:
            assert r["correct"] + r["wrong"] + r["abstained"] == pytest.approx(1.0, abs=1e-3)
        at = {(r["policy"], r["threshold"]): r for r in rows}
        assert at[("abstain", 1.0)]["abstained"] == 1.0  # no passage passes a grader threshold of 1
        assert at[("abstain", 0.0)]["abstained"] < 1.0
    orrin = {(r["policy"], r["threshold"]): r for r in report["worlds"]["orrin_train"]}
    assert orrin[("read", 0.5)]["correct"] == 1.0  # the shipped threshold: 14 / 14 on the Orrin training world
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
@pytest.mark.models  # trains a tiny cross-encoder (two steps) and reranks with it
def test_rerank_depth_weight_zero_is_the_first_stage_and_every_depth_and_weight_gets_a_row(
    tiny_reranker: tuple[Path, Path], tmp_path: Path
) -> None:
    """A tiny BEIR set, BM25 first stage, a two-step cross-encoder. Planted fault: the script's interpolation
    ignoring ``--weights`` (weight 1 for every row): the weight-0 rows then take the cross-encoder's order and
    no longer equal the first stage's nDCG@10."""
    folder, cache = tiny_reranker
    out = tmp_path / "depth.json"
    report = _run("rerank_depth", "--dataset", str(folder), "--first", "bm25", "--embedder", "none",
                  "--model", "trained:tiny", "--max-length", "48", "--depths", "2,5", "--weights", "0.0,1.0",
                  "--latency-queries", "1", "--out", str(out), cache=cache)  # fmt: skip
    assert json.loads(out.read_text()) == report and out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
    assert {(r["depth"], r["interpolate"]) for r in report["rows"]} == {(2, 0.0), (2, 1.0), (5, 0.0), (5, 1.0)}
    first = report["first_stage_metrics"]
    assert first["recall@2"] <= first["recall@5"]
    for row in report["rows"]:
        assert row["first_stage_recall"] == first[f"recall@{row['depth']}"]
        if row["interpolate"] == 0.0:
            assert row["ndcg@10"] == pytest.approx(first["ndcg@10"])
    moved = [r for r in report["rows"] if r["interpolate"] == 1.0 and r["ndcg@10"] != pytest.approx(first["ndcg@10"])]
    assert moved  # the cross-encoder's own order differs from BM25's somewhere


@pytest.mark.slow
@pytest.mark.models  # MiniLM: the hybrid's dense leg and the thesaurus's vocabulary (about a minute uncached)
def test_orrin_paraphrase_runs_the_training_worlds_choice_once_on_the_evaluation_world(tmp_path: Path) -> None:
    """One thesaurus setting. Planted fault: the evaluation world's synonyms arm reusing the thesaurus built from
    the training world's corpus (``thesaurus_arms(train_world, ...)``): its file then names the training world."""
    out = tmp_path / "para.json"
    report = _run("orrin_paraphrase", "--thresholds", "0.7", "--min-dfs", "2", "--out", str(out))
    assert json.loads(out.read_text()) == report
    train, evaluation = report["training_world"], report["evaluation_world"]
    assert [r["arm"] for r in train] == ["hybrid", "synonyms"] and [r["arm"] for r in evaluation] == [
        "hybrid",
        "synonyms",
    ]
    assert evaluation[1]["setting"] == train[1]["setting"] == {"min_df": 2, "threshold": 0.7, "weight": 0.5}
    assert "orrin-eval-" in evaluation[1]["retriever"] and "orrin-train-" in train[1]["retriever"]
    for rows in (train, evaluation):
        assert rows[0]["queries"] == rows[1]["queries"] > 0
        delta = rows[1]["vs_hybrid"]["hit@1"]["delta"]
        assert delta == pytest.approx(rows[1]["hit@1"] - rows[0]["hit@1"], abs=1e-3)


@pytest.fixture
def tiny_reranker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A tiny BEIR set and a cross-encoder trained on it for two steps (``trained:tiny`` under the cache returned)."""
    pytest.importorskip("sentence_transformers")
    from ragline.train.reranker import RerankerTraining, train_reranker
    from train.tiny_beir import write_tiny_beir

    folder = write_tiny_beir(tmp_path / "tiny")
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))
    settings = RerankerTraining(negatives=2, mine_depth=5, dev_fraction=0.25, dev_depth=3, max_steps=2, max_length=48)
    train_reranker(folder, "tiny", settings, progress=False)
    return folder, tmp_path / "cache"


@pytest.mark.slow
@pytest.mark.models  # MiniLM for the dense stages, a two-step cross-encoder for the rerank stage
def test_staged_retrieval_reports_each_stage_and_a_weight_zero_rerank_keeps_the_hybrid(
    tiny_reranker: tuple[Path, Path], tmp_path: Path
) -> None:
    """Planted fault: the rerank stage ignoring ``--weights`` (the cross-encoder's score alone for every
    weight): the w=0 row then is the cross-encoder's order, not the hybrid's."""
    folder, cache = tiny_reranker
    out = tmp_path / "staged.json"
    report = _run("staged_retrieval", "--corpus", "scifact", "--dataset", str(folder), "--model", "trained:tiny",
                  "--max-length", "48", "--depth", "10", "--weights", "0.0,1.0", "--cutoff", "5", "--out", str(out),
                  cache=cache)  # fmt: skip
    assert json.loads(out.read_text()) == report
    stages = [r["stage"] for r in report["rows"]]
    assert stages == ["dense, plain", "dense, title", "hybrid (+ BM25), title", "+ rerank top 10, w=0.0",
                      "+ rerank top 10, w=1.0"]  # fmt: skip
    rows = {r["stage"]: r for r in report["rows"]}
    hybrid, w0, w1 = rows[stages[2]], rows[stages[3]], rows[stages[4]]
    assert report["indexes"]["plain"] == report["indexes"]["title"] == report["documents"] > 0
    for m in ("recall@5", "recall@20"):
        assert w0[m] == pytest.approx(hybrid[m]) and w0["failure_rate@" + m[7:]] == pytest.approx(1 - w0[m])
    assert w1["recall@20"] == pytest.approx(hybrid["recall@20"])  # reordering the top 10 keeps Recall@20
    assert w1["recall@5"] != pytest.approx(hybrid["recall@5"])  # the cross-encoder's order differs at 5


@pytest.mark.slow
@pytest.mark.models  # MiniLM for the dense leg (24 short abstracts)
def test_scifact_fusion_scores_every_leg_fusion_and_bm25_setting_against_the_default_hybrid(tmp_path: Path) -> None:
    """A tiny BEIR set, every train query (no trained model: ``--dev-model none``). Planted fault: each row paired
    the wrong way round against the default hybrid (``compare(ndcg, first)``): the dense row's delta then has the
    wrong sign."""
    from train.tiny_beir import write_tiny_beir

    folder = write_tiny_beir(tmp_path / "tiny")
    out = tmp_path / "fusion.json"
    report = _run("scifact_fusion", "--dataset", str(folder), "--queries", "train", "--dev-model", "none",
                  "--embedders", "minilm", "--depth", "10", "--bm25-grid", "--out", str(out))  # fmt: skip
    assert json.loads(out.read_text()) == report and report["queries"] == "train (8 train queries)"
    rows = {r["name"]: r for r in report["rows"]}
    assert report["rows"][0]["name"] == "hybrid bm25 + minilm (z_score)" and {"bm25", "dense minilm"} <= set(rows)
    assert len([n for n in rows if n.startswith("bm25 k1=")]) == 16 and len([n for n in rows if "title=" in n]) == 3
    assert all("vs_first_row" in r for r in report["rows"][1:]) and "vs_first_row" not in report["rows"][0]
    assert all(0.0 <= r["ndcg@10"] <= 1.0 and r["recall@20"] <= r["recall@100"] + 1e-12 for r in report["rows"])
    first = report["rows"][0]["ndcg@10"]
    assert all(r["vs_first_row"]["delta"] == pytest.approx(r["ndcg@10"] - first) for r in report["rows"][1:])
    assert rows["dense minilm"]["ndcg@10"] < first  # the tiny set's near misses fool the dense leg once
    same = rows["bm25 k1=0.9 b=0.4"]
    assert {m: same[m] for m in ("ndcg@10", "mrr@10")} == {m: rows["bm25"][m] for m in ("ndcg@10", "mrr@10")}


@pytest.mark.slow
@pytest.mark.models
def test_reader_dev_slice_reads_other_paragraphs_of_the_article_that_lack_the_answer() -> None:
    """A question's distractors: its article's other paragraphs, never one holding its answer text, another
    article's, or its own; a made no-answer example keeps its question's answer out too. Planted faults: drawing
    from every article, or not looking up a no-answer example's question, each fails an assert here."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ragline.train.reader_data import QA
    from reader_dev_slice import same_article_distractors

    own, holds, other_a, other_b = "The code is K7.", "K7 again here.", "Birds sang.", "A river runs."
    dev = [QA("q1", "What is the code?", own, (12, 14), ("K7",), "A"),
           QA("q2", "Who sang?", holds, (0, 2), ("K7",), "A"),
           QA("q3", "What sang?", other_a, (0, 5), ("Birds",), "A"),
           QA("q4", "What runs?", other_b, (2, 7), ("river",), "A"),
           QA("q5", "Which lake?", "Lake Lyn is deep.", (0, 8), ("Lake Lyn",), "B"),
           QA("q1-no-removed", "What is the code?", "Nothing here.", None, (), "A")]  # fmt: skip
    chosen = same_article_distractors(dev, 5, seed=0)
    assert sorted(chosen[0]) == sorted([other_a, other_b])
    assert sorted(chosen[5]) == sorted([other_a, other_b])  # not the paragraphs holding "K7"
    assert chosen[4] == [] and sorted(chosen[2]) == sorted([own, holds, other_b])  # never its own
    assert all(len(c) <= 1 for c in same_article_distractors(dev, 1, seed=0))


def test_reader_dev_slice_reports_both_calibrations_per_model_and_window(tmp_path: Path) -> None:
    """The packaged MiniLM with a new head on a tiny SQuAD-layout file, two window lengths. Planted fault: the
    ``balanced`` row calibrated without ``balanced=True`` (its F1 is then the mean over examples, and the
    dev slice holds half as many no-answer examples as answerable ones) fails the last assert."""
    sys.path.insert(0, str(ROOT / "tests"))
    from train.tiny_squad import write_tiny_squad

    data = write_tiny_squad(tmp_path / "tiny.jsonl.gz", articles=8, per_article=6)
    report = _run("reader_dev_slice", "--data", str(data), "--model", "minilm", "--max-length", "48",
                  "--max-length", "64", "--stride", "16", "--dev-questions", "12", "--no-answer", "removed",
                  "--passages", "2", "--select", "score", "--select", "margin", cache=tmp_path / "cache")  # fmt: skip
    assert [(row["max_length"], row["select"]) for row in report["rows"]] == [
        (48, "score"), (48, "margin"), (64, "score"), (64, "margin")
    ]  # fmt: skip
    for row in report["rows"]:
        assert row["passages"] == 2
        assert row["answerable"] == report["dev_questions"] and row["no_answer"] == report["dev_no_answer"] > 0
        assert 0.0 <= row["margin_auc"] <= 1.0
        # one way made every no-answer example: its own AUC is the whole AUC
        assert row["margin_auc_by_way"] == {"removed": {"n": row["no_answer"], "auc": row["margin_auc"]}}
        balanced = row["balanced"]
        assert balanced["f1"] == pytest.approx(0.5 * balanced["hasans_f1"] + 0.5 * balanced["noans_declined"], abs=2e-4)
