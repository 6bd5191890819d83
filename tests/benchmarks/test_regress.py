"""The figure regressions (``benchmarks/regress.py``, ``benchmarks/regressions/*.toml``): the runner's checks,
its exit status, the files themselves, and BENCHMARKS.md's generated tables."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


# README.md's headline figures, each with the regression that checks it: (the words README prints, the regression,
# how the words follow from its checks' expected values and references, by figure). make regress (nightly) and
# make regress TIER=manual run them all, so a headline cannot drift from a checked figure.
def _pct(value: float) -> str:
    return f"{100 * value:.2g}%"


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _of(name: str) -> Callable[[dict[str, Any]], Any]:
    return lambda c: next(v for k, v in c.items() if k.startswith(name))


HEADLINES: list[tuple[str, str, Callable[[dict[str, Any]], str]]] = [
    ("BM25 **{}**", "scifact_bm25", lambda c: f"{_of('nDCG@10')(c):.4f}"),
    ("(Pyserini {})", "scifact_bm25", lambda c: c["reference nDCG@10"].split()[3].rstrip(";")),
    ("MiniLM {},", "hybrid_scifact", lambda c: f"{_of('dense (MiniLM)')(c):.4f}"),
    ("hybrid **{}**", "hybrid_scifact", lambda c: f"{_of('hybrid (z-score)')(c):.4f}"),
    ("token vectors {}", "scifact_maxsim", lambda c: f"{_of('MaxSim')(c):.4f}"),
    ("(bge-small {})", "scifact_maxsim", lambda c: _of("reference MaxSim")(c).split()[-1]),
    ("cross-encoder trained here) **{}**", "scifact_best", lambda c: f"{c['nDCG@10']:.4f}"),
    ("RRF ({})", "scifact_best", lambda c: c["reference nDCG@10"].split(" RRF ")[1].split()[0]),
    ("Hit@1 {}/17 with MaxSim", "orrin_paraphrase_maxsim", lambda c: f"{17 * _of('MaxSim')(c):.0f}"),
    ("(hybrid {}/17)", "orrin_paraphrase_maxsim", lambda c: f"{17 * c['hybrid Hit@1']:.0f}"),
    ("BM25 search {} than bm25s one query at a time", "bm25_speed_scifact",
     lambda c: "faster" if _of("qps_ratio")(c) > 1 else "slower"),
    ("Orrin Grid Hit@1 {} with the chunking", "orrin_chunking", lambda c: f"{_of('Hit@1, default')(c):.3f}"),
    ("({} with the best chunking", "orrin_chunking", lambda c: f"{_of('Hit@1, best')(c):.2f}"),
    ("recall@10 {},", "ann_1m", lambda c: f"{_of('recall@10')(c):.3f}"),
    ("{}x exact search", "ann_1m", lambda c: f"{_of('queries/s one at a time at')(c) / _of('exact')(c):.0f}"),
    ("within {}x of calling faiss", "ann_1m", lambda c: f"{_of('overhead')(c):.2f}"),
    ("finds {}x more answers", "squad_readers",
     lambda c: f"{_of('answerable: correct')(c) / _of('answerable: correct')(_checks('squad_extractive')):.0f}"),
    ("but answers {} of the unanswerable", "squad_readers", lambda c: _pct(1 - _of("unanswerable")(c))),
    ("declines {} of the time", "squad_extractive", lambda c: _pct(_of("unanswerable")(c))),
    ("answerable F1 **{}** on SQuAD 2.0", "squad_span_reader_rounds", lambda c: f"{_of('answerable F1')(c):.2f}"),
    ("and declines {} of its unanswerable", "squad_span_reader_rounds", lambda c: _pct(_of("unanswerable")(c))),
    ("rose from {} to", "qa_support", lambda c: f"{_of('SQuAD articles 4-5 support precision, before')(c):.2f}"),
    ("to {} with the question-answering", "qa_support",
     lambda c: f"{_of('SQuAD articles 4-5 support precision, with')(c):.2f}"),
    ("at {} on Orrin Grid", "qa_support", lambda c: f"{_of('Orrin support precision')(c):.2f}"),
    ("{} of 68 times citing", "office_docs", lambda c: _n(_of("after: table questions")(c))),
    ("answers {} of 14 Orrin multi-hop", "orrin_agent_multihop", lambda c: _n(c["correct (of 14)"])),
    ("and {} of 40 on the countries world", "countries_agent_multihop", lambda c: _n(c["correct (of 40)"])),
    ("{} (extractive)", "injection_firewall", lambda c: _pct(_of("attack success with the firewall")(c))),
    ("{} (local LLM)", "injection_firewall_llm", lambda c: _pct(_of("attack success with the firewall")(c))),
    ("with {} benign passage quarantined", "injection_firewall",
     lambda c: "no" if c["benign passages quarantined"] == 0 else "some"),
    ("{} leaks over", "acl_fuzz", lambda c: _n(c["leaks (all arms)"])),
    ("over {} random principal/query pairs", "acl_fuzz", lambda c: _n(c["pairs (all arms)"])),
    ("answers {} searches/s", "load_test", lambda c: f"{_of('searches/s')(c):.0f}"),
    ("at p99 {} ms with 8 clients", "load_test", lambda c: f"{_of('search p99')(c):.0f}"),
    ("correctly {} of 47 times", "conversation_orrin", lambda c: _n(_of("follow-ups correct, history-aware")(c))),
    ("against {} of 47 read without", "conversation_orrin", lambda c: _n(_of("follow-ups correct, history-blind")(c))),
]  # fmt: skip


def _checks(name: str) -> dict[str, Any]:
    """A regression's expected values by figure, and its references as ``reference FIGURE``."""
    values: dict[str, Any] = {}
    for check in regress.load(ROOT / "benchmarks" / "regressions" / f"{name}.toml").checks:
        values[check.figure] = check.expected
        if check.reference:
            values[f"reference {check.figure}"] = check.reference
    return values


def test_every_headline_figure_of_the_readme_is_a_checked_figure():
    """Each number in README.md's headline paragraph follows from a regression's expected value, in the nightly
    or manual tier. Planted fault checked: scifact_bm25's expected nDCG@10 set to 0.6805 fails on "BM25 **0.6804**";
    it found the support precision quoted as 0.19 where its regression holds 0.1811."""
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split("Headlines:", 1)[1].split("##")[0].split())
    wrong = []
    for words, name, figure in HEADLINES:
        expected = words.format(figure(_checks(name)))
        if expected not in readme:
            wrong.append(f"{name}: README should say {expected!r}")
    assert not wrong, "\n".join(wrong)
