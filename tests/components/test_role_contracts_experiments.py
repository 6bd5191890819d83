"""The ``experiment`` role's contract (``ragline experiment``), over every registered experiment.

An experiment builds under its own name, says what it measures (the first paragraph of its factory's docstring,
which ``ragline experiment --help`` lists), and the command accepts its name; one that takes no pipeline configs
refuses ``--config`` before it runs anything (the run takes minutes). Running each one is its own tests' job
(tests/eval/test_experiments*.py, tests/reflect, tests/structures).

Planted faults, checked: the rrf-k factory without a docstring left its --help line empty; ``_lab_experiment``
without its ``configs`` check ran scorers with a --config it ignored.
"""

from __future__ import annotations

import inspect

import pytest

from ragline.cli import build_parser, main
from ragline.components import build, component, names


@pytest.mark.parametrize("name", names("experiment"))
def test_experiment_contract(name: str) -> None:
    experiment = build("experiment", {"name": name})
    assert experiment.name == name and len(inspect.signature(experiment.run).parameters) == 1
    assert component("experiment", name).description  # its line in --help
    assert experiment.tables is None or callable(experiment.tables)
    assert not (experiment.own_output and (experiment.tables or experiment.plot))  # it prints its own result
    assert build_parser(["experiment", name]).parse_args(["experiment", name]).name == name


def test_help_lists_every_experiment_and_what_it_measures(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["experiment", "--help"])
    listed = " ".join(capsys.readouterr().out.split())
    for name in names("experiment"):
        assert f"{name}: {component('experiment', name).description}" in listed


def test_an_experiment_without_configs_refuses_config_before_running(capsys: pytest.CaptureFixture) -> None:
    takes = {n for n in names("experiment") if build("experiment", {"name": n}).configs}
    assert takes == {"dense-transfer", "readers"}
    assert main(["experiment", "scorers", "--config", "extractive"]) == 2
    assert "takes no pipeline configs (dense-transfer, readers do)" in capsys.readouterr().err
