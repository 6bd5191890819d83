"""Ingestion on a real local Ray head (object store bounded to 500 MB): the same chunks and vectors as local
ingestion, failed files reported by name, the embedding cache honoured, and a killed run repaired by a rerun."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ragline.index import Index
from ragline.index.store import IndexSettings
from ragline.ingest.distributed import load_on_ray, parse_workers, ray_connection
from ragline.ingest.loaders import load_path
from ragline.ingest.pipeline import IngestConfig, chunk_documents
from ragline.store.embedded import EmbeddedCollection

pytestmark = [pytest.mark.slow, pytest.mark.models]

SETTINGS = IndexSettings(embedder="minilm", chunker="fixed:size=40,overlap=10", context="breadcrumb")


@pytest.fixture(scope="module")
def worker_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedding cache the Ray workers see (fresh: their vectors are computed, not read from local runs)."""
    return tmp_path_factory.mktemp("ray-cache")


@pytest.fixture(scope="module")
def ray_head(worker_cache: Path) -> object:
    """A local Ray head with 2 CPUs, stopped (with its processes) after the module."""
    saved = os.environ.get("RAGLINE_CACHE")
    os.environ["RAGLINE_CACHE"] = str(worker_cache)  # handed to the workers' runtime environment
    try:
        with ray_connection("ray", num_cpus=2) as ray:
            yield ray
    finally:
        if saved is None:
            os.environ.pop("RAGLINE_CACHE", None)
        else:
            os.environ["RAGLINE_CACHE"] = saved


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "guides").mkdir(parents=True)
    for i in range(6):
        body = " ".join(f"Pump {i} needs valve {j} checked every {j + 2} weeks by the night shift." for j in range(12))
        (root / "guides" / f"pump{i}.md").write_text(f"# Pump {i}\n\n## Service\n\n{body}\n", encoding="utf-8")
    (root / "notes.txt").write_text("Filters are cleaned monthly.\n", encoding="utf-8")
    (root / "broken.txt").write_bytes(b"\x00\x01 not text")
    (root / "tight.md").write_text("---\nacl: [unclosed\n---\nsecret\n", encoding="utf-8")
    return root


def _local(folder: Path, path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> Index:
    monkeypatch.setenv("RAGLINE_CACHE", str(cache))
    loaded = load_path(folder)
    chunks, _ = chunk_documents(loaded.documents, IngestConfig(SETTINGS.chunker, SETTINGS.context))
    index = Index.create(path, SETTINGS)
    index.sync(chunks, keep=loaded.keep)
    index.commit()
    return index


def _vectors(index: Index) -> dict[str, np.ndarray]:
    return {i: seg.vectors[row] for seg in index.segments for row, i in enumerate(seg.ids)}


def _processes_of_session(driver: int) -> list[int]:
    """Processes of the Ray session a driver started (its session folder name ends with the driver's pid)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if entry.name.isdigit() and b"session_" in command and f"_{driver}/".encode() in command:
            found.append(int(entry.name))
    return found


def test_ray_ingestion_equals_local(
    ray_head: object, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = _local(folder, tmp_path / "local", tmp_path / "local-cache", monkeypatch)
    distributed = load_on_ray(folder, SETTINGS, "ray", workers=2)
    # Failed files are named as local ingestion names them; bad metadata is not kept (fail closed).
    assert sorted(str(e) for e in distributed.report.errors) == sorted(str(e) for e in load_path(folder).errors)
    assert any("broken.txt" in str(e) for e in distributed.report.errors)
    assert "broken" in distributed.report.keep and "tight" not in distributed.report.keep
    with EmbeddedCollection(Index.create(tmp_path / "ray", SETTINGS)) as collection:
        collection.sync(distributed.report.documents, keep=distributed.report.keep, vectors=distributed.vectors)
        collection.commit()
        ray_index = collection.index
        assert {d.id: d.hash for d in ray_index.documents()} == {d.id: d.hash for d in local.documents()}
        assert ray_index.embedding_counts() is None  # the driver embedded nothing: the vectors came from Ray
        ours, theirs = _vectors(ray_index), _vectors(local)
        assert ours.keys() == theirs.keys()
        cosines = [float(ours[i] @ theirs[i] / np.linalg.norm(ours[i]) / np.linalg.norm(theirs[i])) for i in ours]
        assert min(cosines) > 1 - 1e-5
    assert distributed.computed == len(ours) and distributed.cached == 0
    # A second run finds every passage in the workers' cache.
    again = load_on_ray(folder, SETTINGS, "ray", workers=1)
    assert (again.computed, again.cached) == (0, len(ours))
    assert [d.hash for d in again.report.documents] == [d.hash for d in distributed.report.documents]


def test_workers_spec_is_checked() -> None:
    assert parse_workers("ray://10.0.0.1:10001") == "ray://10.0.0.1:10001"
    with pytest.raises(Exception, match="ray://HOST:PORT"):
        parse_workers("4")


def test_killed_run_converges_on_rerun(
    ray_head: object, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL a ``ragline index --workers ray`` run (and the Ray head it started), rerun: the same index."""
    target = tmp_path / "index"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src"), "RAGLINE_CACHE": str(tmp_path / "c")}
    command = [sys.executable, "-m", "ragline", "index", str(folder), "--index", str(target), "--workers", "ray",
               "--ray-workers", "1", "--embedder", "minilm", "--chunker", SETTINGS.chunker]  # fmt: skip
    process = subprocess.Popen(command, env=env, start_new_session=True, stderr=subprocess.DEVNULL)
    time.sleep(12)  # inside the Ray run: the head is up, the worker is loading or embedding
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    # Its Ray processes (workers leave the process group) notice the dead head and exit: none may be left.
    deadline = time.monotonic() + 60
    while left := _processes_of_session(process.pid):
        if time.monotonic() > deadline:
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            pytest.fail(f"Ray processes {left} of the killed run outlived it")
        time.sleep(0.5)
    distributed = load_on_ray(folder, SETTINGS, "ray", workers=2)
    with EmbeddedCollection(Index.open_or_create(target, SETTINGS)) as collection:
        collection.sync(distributed.report.documents, keep=distributed.report.keep, vectors=distributed.vectors)
        collection.commit()
        rerun = {d.id: d.hash for d in collection.documents()}
    local = _local(folder, tmp_path / "local", tmp_path / "local-cache", monkeypatch)
    assert rerun == {d.id: d.hash for d in local.documents()}
