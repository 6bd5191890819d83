"""``ragline doctor --store URI``: the probes that mean something on a store run against its collection (Milvus Lite
and ``file://``) and give the figures they give on an index built from the same folder; the others are listed as
not run, with the reason, and ``--only`` naming one of them is refused on a store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragline.cli import main
from tiny_pipeline import BAND4, LEAVE, STIPEND, tiny_config

PROBES = 'documents = "docs"\norder_reader = "none"\n' + BAND4 + STIPEND + LEAVE

DOCS = {
    "salary-bands.md": "---\nacl: [hr]\n---\n# Salary bands\n\nSalary band 4 pays 6,200 euros per month; band 5 pays "
    "7,100 euros.\n",
    "handbook.md": "---\nacl: [all]\n---\n# Handbook\n\nSalary questions go to your manager; bands are set "
    "each year.\n",
    "remote-2024.md": "---\nacl: [all]\nsuperseded_by: remote-2026\n---\n# Remote work policy 2024\n\n"
    "Each remote worker may claim $400 once, as a home office stipend, with receipts.\n",
    "remote-2026.md": "---\nacl: [all]\nsupersedes: remote-2024\n---\n# Remote work policy 2026\n\n"
    "The one-off home office stipend is $650 for every remote worker.\n",
    "leave.md": "---\nacl: [all]\n---\n# Annual leave\n\nEmployees get 25 days of annual leave per year.\n",
}
ON_STORE = "recall ceiling,permission leakage,conflicting evidence"


@pytest.fixture
def probe_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text)
    (tmp_path / "probes.toml").write_text(PROBES)
    (tmp_path / "tiny.toml").write_text(tiny_config("extractive:threshold=0,support=off", retrieve='versions = "all"'))
    return docs, tmp_path / "probes.toml", tmp_path / "tiny.toml"


def _doctor(capsys: pytest.CaptureFixture, *args: str) -> dict:
    assert main(["doctor", *args, "--output", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _figures(result: dict) -> dict:
    return {p["name"]: (p["status"], p["arms"]) for p in result["probes"]}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["milvus", "file"])
def test_doctor_on_a_store_runs_its_probes_against_the_collection(
    kind: str, probe_files: tuple[Path, Path, Path], tmp_path: Path, request: pytest.FixtureRequest, capsys
) -> None:
    """The store's figures are the built index's; the probes that mean nothing there are listed, not run.

    Planted faults, checked: ``run_doctor`` ignoring ``store`` (the probes ran on an index built from the probe
    file's folder: the store synced without leave.md still scored Hit 1.0, and nothing was listed as not run);
    ``embedded_only`` ignored (stale index and lost in the middle ran on Milvus)."""
    docs, probes, config = probe_files
    uri = request.getfixturevalue("milvus_uri") if kind == "milvus" else f"file://{tmp_path / 'index'}"
    where = ["--store", uri] if kind == "milvus" else ["--index", str(tmp_path / "index")]
    assert main(["index", str(docs), *where, "--chunker", "none", "--embedder", "none", "--output", "json"]) == 0
    capsys.readouterr()
    common = ["--config", str(config), "--probes", str(probes)]
    built = _doctor(capsys, *common, "--only", ON_STORE)
    on_store = _doctor(capsys, *common, "--only", ON_STORE, "--store", uri)
    assert on_store["store"] and _figures(on_store) == _figures(built)
    leakage = _figures(built)["permission leakage"][1]
    assert leakage["fixed"]["leak_rate"] == 0.0 and leakage["unfixed"]["leak_rate"] == 1.0
    assert _figures(built)["conflicting evidence"][0] == "flag"  # versions = "all": the superseded value is read
    everything = _doctor(capsys, *common, "--store", uri)
    ran = {p["name"] for p in everything["probes"]}
    if kind == "milvus":
        assert set(everything["not_run"]) == {"stale index", "lost in the middle"} and not ran & {"stale index"}
        assert main(["doctor", *common, "--store", uri, "--only", "stale index"]) == 2
        assert "cannot run on" in capsys.readouterr().err
    else:  # the embedded index behind file://: every probe runs
        assert everything["not_run"] == {} and len(ran) == 9
    fewer = tmp_path / "fewer"  # the store synced to a copy without leave.md: the probes must see it gone
    shutil.copytree(docs, fewer)
    (fewer / "leave.md").unlink()
    again = ["index", str(fewer), *where, "--chunker", "none", "--embedder", "none", "--allow-mass-delete"]
    assert main([*again, "--output", "json"]) == 0
    capsys.readouterr()
    synced = _doctor(capsys, *common, "--only", "recall ceiling", "--store", uri)
    hit = next(iter(_figures(built)["recall ceiling"][1]["configured"]))
    assert _figures(built)["recall ceiling"][1]["configured"][hit] == 1.0
    assert _figures(synced)["recall ceiling"][1]["configured"][hit] == 0.5
    elsewhere = tmp_path / "elsewhere.toml"  # gold documents the store does not hold: said, not probed
    elsewhere.write_text(PROBES.replace('gold = ["leave"]', 'gold = ["absent"]').replace("remote-2026", "absent"))
    assert main(["doctor", "--config", str(config), "--probes", str(elsewhere), "--store", uri]) == 2
    assert "holds none of the probe file's 1 gold documents" in capsys.readouterr().err
