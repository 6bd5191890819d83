"""``ragline doctor --quick``: every probe runs on a few questions and the JSON lists all nine, each with its
seconds and the reader it judged; the progress lines say which probes need the LLM and about how long."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from ragline.cli import main
from ragline.config import load_config
from ragline.doctor import lost_in_the_middle, recall_ceiling
from ragline.doctor.base import DoctorRun
from ragline.doctor.probefile import load_probe_file
from ragline.doctor.runner import all_probes, announce, run_doctor

from .test_stopping import BM25

NINE = {
    "recall ceiling",
    "stale index",
    "permission leakage",
    "lost in the middle",
    "distractors",
    "conflicting evidence",
    "error accumulation",
    "missing stopping rules",
    "prompt injection",
}


@pytest.mark.slow
def test_quick_json_lists_nine_probes_with_seconds_and_reader(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Planted fault checked: ``stopping``'s registration removed lists eight."""
    config = tmp_path / "bm25.toml"
    config.write_text(BM25.format(reader='"extractive"'))
    probes = tmp_path / "probes.toml"  # Orrin's questions; lost in the middle without its LLM order arm
    probes.write_text('corpus = "orrin"\norder_reader = "none"\n')
    code = main(["doctor", "--quick", "--config", str(config), "--probes", str(probes), "--output", "json"])
    out, err = capsys.readouterr()
    assert code == 0
    result = json.loads(out)
    assert result["quick"] is True and len(result["probes"]) == 9
    assert {p["name"] for p in result["probes"]} == NINE == {p.name for p in all_probes()}
    assert all(p["model"] and p["seconds"] >= 0 for p in result["probes"])
    assert "probe: missing stopping rules (no LLM)" in err


def test_the_progress_line_says_which_probes_need_the_llm_and_about_how_long() -> None:
    """Planted fault checked: ``announce`` ignoring a probe's own ``llm_calls`` says the order arm needs none."""
    probes = load_probe_file()  # order_reader: the local LLM
    run = DoctorRun(load_config("weak"), probes, index=object())  # rank order: the order arm is read
    line = announce(lost_in_the_middle.probe(), run)
    assert f"needs the LLM: up to {probes.order_questions * 2} calls" in line and "min" in line
    assert announce(recall_ceiling.probe(), run).endswith("(no LLM)")
    assert lost_in_the_middle.llm_calls(DoctorRun(load_config("weak"), probes.quick(), index=object())) == 8
    # ends order is the fix's: the arm is not read, so no LLM
    assert announce(lost_in_the_middle.probe(), DoctorRun(load_config("recommended"), probes, index=object())).endswith(
        "(no LLM)"
    )


def test_a_doctor_run_removes_the_folder_it_built_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probes' indexes (the whole probe corpus with its vectors) went to a temporary folder nobody removed:
    every run left one in /tmp. Planted fault checked: the folder made by ``mkdtemp`` without a cleanup stays."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    run = DoctorRun(load_config("weak"), load_probe_file(), index=object())
    assert run.folder.is_dir() and run.folder.parent == tmp_path
    (run.folder / "index").mkdir()
    run.close()
    assert not run.folder.exists()
    run_doctor(load_config("weak"), load_probe_file(), only=lambda name: False, store=object())
    assert not list(tmp_path.glob("ragline-doctor-*"))
    given = tmp_path / "mine"
    DoctorRun(load_config("weak"), load_probe_file(), index=object(), work=given).close()  # the caller's folder
    assert DoctorRun(load_config("weak"), load_probe_file(), index=object(), work=given).folder == given
