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

    assert main(["doctor", "--only", "error accumulation", "--output", "json"]) == 2
    err = capsys.readouterr().err
    assert "no probe named 'error accumulation'" in err and "'error accumulation + stopping'" in err
