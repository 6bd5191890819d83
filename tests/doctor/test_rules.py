"""The doctor's pass rules and the refusal of the unsafe filter placement outside ``doctor``."""

import pytest

from ragline.config import PipelineConfig, load_config, require_safe
from ragline.doctor.rules import paired_rule, rate_rule, wilson
from ragline.errors import ConfigError


def test_no_failure_passes_and_one_failure_flags():
    assert rate_rule(0, 12).status == "pass"
    assert rate_rule(1, 12).status == "flag"
    assert wilson(0, 12)[0] == 0.0


def test_paired_rule_flags_only_a_difference_beyond_noise():
    questions = [f"q{i}" for i in range(40)]
    fixed = dict.fromkeys(questions, 1.0)
    assert paired_rule(fixed, dict.fromkeys(questions, 0.0)).status == "flag"
    assert paired_rule(fixed, fixed).status == "pass"
    one_off = {**fixed, "q0": 0.0}  # one question of forty: within noise
    assert paired_rule(fixed, one_off).status == "pass"


def test_filter_after_top_k_is_refused_outside_doctor():
    weak = load_config("weak")
    assert weak.retrieve.filter == "after"
    with pytest.raises(ConfigError, match="filter"):
        require_safe(weak, "ask")
    assert require_safe(load_config("recommended"), "ask").retrieve.filter == "inside"


def test_unknown_filter_placement_is_a_config_error():
    with pytest.raises(ConfigError, match="filter must be one of"):
        PipelineConfig.from_dict({"retrieve": {"filter": "sometimes"}})


def test_ask_refuses_the_weak_config(capsys):
    from ragline.cli import main

    assert main(["ask", "What is the remote work allowance?", "--config", "weak"]) == 2
    assert "filter" in capsys.readouterr().err


def test_only_with_a_name_that_is_no_probe_is_an_error_listing_the_probes(capsys) -> None:
    from ragline.cli import main

    assert main(["doctor", "--only", "error accumulation + stopping", "--output", "json"]) == 2
    err = capsys.readouterr().err
    assert "no probe named 'error accumulation + stopping'" in err
    assert "'error accumulation'" in err and "'missing stopping rules'" in err  # two failure modes, two probes


def test_sampling_stops_only_once_the_remaining_questions_cannot_change_the_verdict():
    """Planted fault checked: ``curtailed`` answering the optimistic completion alone stops at 4 questions."""
    from ragline.doctor.rules import curtailed

    questions = [f"q{i}" for i in range(12)]
    same = dict.fromkeys(questions, 1.0)
    assert curtailed(same, same, remaining=12) is None  # 12 more wins for the fix would flag
    assert curtailed(dict.fromkeys(questions[:4], 1.0), dict.fromkeys(questions[:4], 1.0), remaining=14) is None
    assert curtailed(same, same, remaining=2) == "pass"  # two questions cannot move the interval above 0
    wins = dict.fromkeys(questions, 0.0)
    assert curtailed(same, wins, remaining=2) == "flag"  # 12 of 12 for the fix: two losses cannot undo it
    assert curtailed(same, same, remaining=0) == paired_rule(same, same).status


def test_settled_stops_when_the_questions_to_come_are_unlikely_to_change_the_verdict():
    """Planted fault checked: ``settled`` returning the current verdict without drawing stops on a split sample."""
    from ragline.doctor.rules import settled

    seen = [f"q{i}" for i in range(8)]
    same = dict.fromkeys(seen, 1.0)
    assert settled(same, same, remaining=10) == "pass"  # every draw repeats a difference of 0
    two = {q: float(i >= 2) for i, q in enumerate(seen)}  # the fix won 2 of 8: a pass, but 10 more like these flag
    assert paired_rule(same, two).status == "pass" and settled(same, two, remaining=10) is None
    assert settled(same, two, remaining=1) == "pass"  # one more question seldom moves it
