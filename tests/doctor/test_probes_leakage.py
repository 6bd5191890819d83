"""The permission-leakage probe on a tiny folder corpus: a restricted document that outranks the public one
leaks when the ACL filter runs after the top k, and never when it runs inside retrieval."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.config import load_config
from ragline.doctor import permission_leakage
from ragline.doctor.base import DoctorRun
from ragline.doctor.probefile import load_probe_file
from tiny_pipeline import BAND4, tiny_config

PROBES = 'documents = "docs"\n' + BAND4


@pytest.fixture
def probe_file(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "salary-bands.md").write_text(
        "---\nacl: [hr]\n---\n# Salary bands\n\nSalary band 4 pays 6,200 euros per month; band 5 pays 7,100 euros.\n"
    )
    (docs / "handbook.md").write_text(
        "---\nacl: [all]\n---\n# Handbook\n\nSalary questions go to your manager; bands are set each year.\n"
    )
    (tmp_path / "probes.toml").write_text(PROBES)
    return tmp_path / "probes.toml"


def _run(tmp_path: Path, probe_file: Path, placement: str) -> DoctorRun:
    config = tmp_path / f"{placement}.toml"
    config.write_text(tiny_config("extractive:threshold=0,support=off", k=1, retrieve=f'filter = "{placement}"'))
    return DoctorRun(load_config(str(config)), load_probe_file(probe_file), work=tmp_path / f"work-{placement}")


def test_permission_leakage_flags_the_filter_after_top_k_and_passes_it_inside(tmp_path: Path, probe_file: Path):
    """Planted fault: the probe's unfixed arm (``AfterTopK``) passing the filter to its first stage, so the arm
    that should leak does not and a config with the filter after top k passes."""
    inside = permission_leakage.run(_run(tmp_path, probe_file, "inside"))
    assert inside.status == "pass"
    assert inside.arms["configured"]["leak_rate"] == 0.0 and inside.arms["fixed"]["leak_rate"] == 0.0
    assert inside.arms["unfixed"]["leak_rate"] == 1.0  # the hr document is BM25's top 1 for this question
    after = permission_leakage.run(_run(tmp_path, probe_file, "after"))
    assert after.status == "flag" and after.arms["configured"]["leak_rate"] == 1.0
