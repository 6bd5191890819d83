"""The figure regressions (``benchmarks/regress.py``, ``benchmarks/regressions/*.toml``): the runner's checks,
its exit status, the files themselves, and BENCHMARKS.md's generated tables."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import regress  # noqa: E402


def _write(folder: Path, name: str, value: float, expected: float, tier: str = "ci", **check: object) -> None:
    band = "".join(f"{k} = {json.dumps(v)}\n" for k, v in (check or {"tolerance": 0.001}).items())
    command = f'python -c \'import json; print(json.dumps({{"m": {{"x": {value}}}}}))\''
    (folder / f"{name}.toml").write_text(
        f'title = "T {name}"\ntier = "{tier}"\ndataset = "none"\ncommand = {json.dumps(command)}\n\n'
        f'[[check]]\nfigure = "figure {name}"\npath = "m.x"\nexpected = {expected}\n{band}'
    )


def test_lookup_selects_list_elements_by_key_even_when_the_value_holds_separators():
    data = {"results": [{"retriever": "bm25", "m": {"ndcg@10": 0.5}},
                        {"retriever": "hybrid:fuser=rrf,k=60", "m": {"ndcg@10": 0.7}}],
            "rows": [{"a": "1", "b": "x", "v": 1}, {"a": "1", "b": "y", "v": 2}]}  # fmt: skip
    assert regress.lookup(data, "results[retriever=hybrid:fuser=rrf,k=60].m.ndcg@10") == 0.7
    assert regress.lookup(data, "results.0.m.ndcg@10") == 0.5
    assert regress.lookup(data, "rows[a=1&b=y].v") == 2
    with pytest.raises(KeyError, match="matched 2 elements"):
        regress.lookup(data, "rows[a=1].v")
    with pytest.raises(KeyError, match="no `recall`"):
        regress.lookup(data, "results[retriever=bm25].m.recall")


def test_bands():
    exact = regress.Check("f", "p", 14, tolerance=0)
    assert exact.ok(14) and not exact.ok(13)
    speed = regress.Check("f", "p", 2.0, ratio=(0.5, 2.0))
    assert speed.ok(1.0) and speed.ok(4.0) and not speed.ok(0.9) and not speed.ok(4.1)


def test_a_bad_file_is_named_with_its_field(tmp_path):
    (tmp_path / "broken.toml").write_text('title = "x"\ntier = "weekly"\ndataset = "d"\ncommand = "ragline info"\n')
    with pytest.raises(regress.RegressionError, match=r"broken.toml: field `tier` must be one of"):
        regress.load(tmp_path / "broken.toml")
    (tmp_path / "broken.toml").write_text(
        'title = "x"\ntier = "ci"\ndataset = "d"\ncommand = "ragline info"\n[[check]]\nfigure = "f"\npath = "p"\n'
        "expected = 1\n"
    )
    with pytest.raises(regress.RegressionError, match=r"broken.toml check 1: give exactly one of `tolerance`"):
        regress.load(tmp_path / "broken.toml")


@pytest.mark.slow  # runs two subprocesses
def test_the_runner_exits_0_when_every_figure_holds_and_1_naming_the_moved_figure_and_its_command(tmp_path, capsys):
    """Planted fault: a figure 0.5 away from its expected value; the run must fail and say which and how to rerun."""
    _write(tmp_path, "holds", 0.75, 0.75)
    _write(tmp_path, "nightly_only", 9.0, 1.0, tier="nightly")  # not in the ci tier
    assert regress.main(["--tier", "ci", "--regressions", str(tmp_path), "--results", str(tmp_path / "out")]) == 0
    saved = json.loads((tmp_path / "out" / "ci.json").read_text())
    assert saved["counts"]["pass"] == 1 and "ragline_version" in saved["provenance"]
    assert json.loads((tmp_path / "out" / "holds.json").read_text())["checks"][0]["value"] == 0.75

    _write(tmp_path, "moved", 0.25, 0.75)
    assert regress.main(["--tier", "ci", "--regressions", str(tmp_path), "--results", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert "FAIL    moved" in out and "figure moved: 0.25, expected 0.75" in out
    assert "reproduce: python -c" in out and "-0.5000" in out  # the drift


def test_the_repository_has_a_regression_per_figure_family_in_every_tier():
    regressions = regress.load_all(tier="all")
    assert len(regressions) >= 10
    tiers = {r.tier for r in regressions}
    assert tiers == set(regress.TIERS)
    ci = {r.name for r in regress.load_all(tier="ci")}
    assert {"scifact_bm25", "orrin_hybrid", "orrin_agent_multihop", "parity"} <= ci


def test_every_expected_value_matches_its_published_result():
    """A regression file and the JSON that BENCHMARKS.md quotes must agree (planted: scifact_bm25's expected
    nDCG@10 0.6804 -> 0.6814 fails here)."""
    outcomes = [regress.check_published(r) for r in regress.load_all(tier="all")]
    bad = [f"{o.regression.name}: {o.message}" for o in outcomes if o.status in ("fail", "error")]
    assert not bad
    assert sum(o.status == "pass" for o in outcomes) >= 10


def test_benchmarks_md_tables_are_generated_from_the_regression_files():
    """Planted fault: an edited expected value in a regression file (or a hand edit inside a block) fails this
    until ``benchmarks/regress.py --write-markdown BENCHMARKS.md`` regenerates the tables."""
    text = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    regressions = regress.load_all(tier="all")
    regenerated = regress.update_markdown(text, regressions)
    assert regenerated == text, "run benchmarks/regress.py --write-markdown BENCHMARKS.md"
    for reg in regressions:
        assert f"<!-- regress:begin {reg.name} -->" in text


def test_a_single_retriever_eval_is_read_like_a_multi_retriever_one():
    one = regress.last_json('progress\n{"retriever": "bm25", "metrics": {"ndcg@10": 0.68}}\n')
    assert regress.lookup(one, "results[retriever=bm25].metrics.ndcg@10") == 0.68
