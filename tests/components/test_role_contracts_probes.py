"""The ``probe`` role's contract (``ragline doctor``), over every registered probe (``names("probe")``).

A probe builds through the registry under its own name with a rank no other probe has; run on a tiny folder
corpus it gives one report row of its own name, ``pass`` or ``flag``, that JSON can carry; given a probe file
with none of the questions it needs it says so (a ``flag`` with its reason), never raises.

Planted faults, checked: permission leakage without its "no question" guard raised ZeroDivisionError on the probe file
without its questions; two probes registered with the same rank failed the ranks check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.components import build, names
from ragline.config import load_config
from ragline.doctor.base import DoctorRun
from ragline.doctor.probefile import load_probe_file
from tiny_pipeline import BAND4, LEAVE, tiny_config

QUESTIONS = "\n" + BAND4 + LEAVE + 'distractors = ["30 days"]\n'

DOCS = {
    "salary-bands.md": "---\nacl: [hr]\n---\n# Salary bands\n\nSalary band 4 pays 6,200 euros per month.\n",
    "leave.md": "---\nacl: [all]\n---\n# Annual leave\n\nEmployees get 25 days of annual leave per year.\n",
    "leave-old.md": "---\nacl: [all]\n---\n# Leave in 2019\n\nIn 2019 staff got 30 days of leave.\n",
}


def _run(tmp_path: Path, questions: str) -> DoctorRun:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    for name, text in DOCS.items():
        (docs / name).write_text(text)
    (tmp_path / "tiny.toml").write_text(tiny_config())
    probes = tmp_path / f"probes{len(questions)}.toml"
    probes.write_text(f'documents = "docs"\norder_reader = "none"\n{questions}')
    return DoctorRun(
        load_config(str(tmp_path / "tiny.toml")), load_probe_file(probes), work=tmp_path / f"work{len(questions)}"
    )


def test_every_probe_builds_under_its_name_with_a_rank_of_its_own() -> None:
    probes = [build("probe", {"name": name}) for name in names("probe")]
    assert [p.name for p in probes] == list(names("probe"))
    assert len({p.rank for p in probes}) == len(probes)
    assert all(isinstance(p.embedded_only, str) and isinstance(p.fix, str) for p in probes)


@pytest.mark.parametrize("name", names("probe"))
def test_probe_contract(name: str, tmp_path: Path) -> None:
    probe = build("probe", {"name": name})
    run = _run(tmp_path, QUESTIONS)
    row = probe.run(run)
    assert row.name == name and row.status in ("pass", "flag")
    json.dumps(row.to_dict())
    if probe.llm_calls is not None:
        assert probe.llm_calls(run) >= 0
    unrelated = '[[question]]\nid = "nothing"\ntext = "Is there a moon base?"\nexpected_abstain = true\ntype = "none"\n'
    empty = probe.run(_run(tmp_path, unrelated))  # none of the questions it needs (or too few to rank): said
    assert empty.name == name and empty.status in ("pass", "flag")
    json.dumps(empty.to_dict())
