"""The stale-index and conflicting-evidence probes on a tiny folder corpus: each flags with its fix off
and passes with it on, over the same questions."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.config import load_config
from ragline.doctor import conflicting_evidence, stale_index
from ragline.doctor.base import DoctorRun
from ragline.doctor.probefile import load_probe_file
from tiny_pipeline import LEAVE, STIPEND, tiny_config

PROBES = 'documents = "docs"\n' + STIPEND + LEAVE


@pytest.fixture
def probe_file(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "remote-2024.md").write_text(
        "---\nacl: [all]\nsuperseded_by: remote-2026\n---\n# Remote work policy 2024\n\n"
        "Each remote worker may claim $400 once, as a home office stipend, with receipts.\n"
    )
    (docs / "remote-2026.md").write_text(
        "---\nacl: [all]\nsupersedes: remote-2024\n---\n# Remote work policy 2026\n\n"
        "The one-off home office stipend is $650 for every remote worker.\n"
    )
    (docs / "leave.md").write_text("# Annual leave\n\nEmployees get 25 days of annual leave per year.\n")
    (tmp_path / "probes.toml").write_text(PROBES)
    return tmp_path / "probes.toml"


# The two versions word the stipend differently, so no sentence pair is lined up as a conflict: the
# reader is handed both values and nothing tells the user.
def _run(tmp_path: Path, probe_file: Path, name: str, versions: str = "all", freshness: str = "off") -> DoctorRun:
    config = tmp_path / f"{name}.toml"
    config.write_text(
        tiny_config(
            "extractive:threshold=0,support=off", retrieve=f'versions = "{versions}"\nfreshness = "{freshness}"'
        )
    )
    return DoctorRun(load_config(str(config)), load_probe_file(probe_file), work=tmp_path / f"work-{name}")


def test_conflicting_evidence_flags_an_unflagged_superseded_value_and_passes_with_current_versions(
    tmp_path: Path, probe_file: Path
) -> None:
    weak = conflicting_evidence.run(_run(tmp_path, probe_file, "weak", versions="all"))
    fixed = conflicting_evidence.run(_run(tmp_path, probe_file, "fixed", versions="current"))
    assert weak.status == "flag" and weak.arms["configured"]["failures"] == 1
    assert fixed.status == "pass" and fixed.arms["configured"]["failures"] == 0
    assert weak.arms["fixed"]["failures"] == 0  # the same question, version handling on


def test_stale_index_counts_the_old_value_stated_without_a_warning(tmp_path: Path, probe_file: Path) -> None:
    off = stale_index.run(_run(tmp_path, probe_file, "off", freshness="off"))
    check = stale_index.run(_run(tmp_path, probe_file, "check", freshness="check"))
    assert off.status == "flag" and off.arms["unfixed"]["silent_stale"] > 0
    assert check.status == "pass" and check.arms["fixed"]["silent_stale"] == 0
