"""``kill -9`` of the ``ragline index`` command at random moments, re-syncs with deletes included.

Each trial changes the folder (new, edited and removed files), starts ``python -m ragline index`` and
kills it after a random delay: before it loaded, while it chunks and syncs (the deletes are staged),
while it commits, or after. Every time the index must open, and hold exactly the documents of the last
generation it reported: the previous state when the kill came before the new manifest, the new folder
when it came after.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ragline
from ragline.index import Index

TRIALS = 24


def _cli(folder: Path, index: Path) -> list[str]:
    return [sys.executable, "-m", "ragline", "index", str(folder), "--index", str(index), "--embedder", "none",
            "--chunker", "none", "--output", "json"]  # fmt: skip


def _env() -> dict[str, str]:
    src = str(Path(ragline.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _change(folder: Path, rng: random.Random, trial: int) -> None:
    files = sorted(folder.glob("*.md"))
    for path in rng.sample(files, min(len(files), rng.randint(5, 40))):  # removed: the re-sync deletes them
        path.unlink()
    for path in rng.sample(sorted(folder.glob("*.md")), 10):  # edited
        path.write_text(f"# {path.stem}\n\nEdited in trial {trial}: {' '.join(rng.choices(WORDS, k=60))}\n")
    for n in range(rng.randint(10, 60)):  # added
        (folder / f"t{trial}-{n}.md").write_text(f"# t{trial}-{n}\n\n{' '.join(rng.choices(WORDS, k=80))}\n")


def _state(folder: Path) -> dict[str, str]:
    return {p.stem: p.read_text().strip() for p in folder.glob("*.md")}


WORDS = [f"w{i}" for i in range(300)]


@pytest.mark.slow
def test_kill_9_of_the_index_command_keeps_the_last_commit(tmp_path: Path) -> None:
    rng = random.Random(1313)
    folder, index_path = tmp_path / "docs", tmp_path / "idx"
    folder.mkdir()
    for n in range(300):
        (folder / f"base-{n}.md").write_text(f"# base-{n}\n\n{' '.join(rng.choices(WORDS, k=80))}\n")
    started = time.perf_counter()
    subprocess.run(_cli(folder, index_path), env=_env(), check=True, capture_output=True)
    full_run = time.perf_counter() - started
    committed, generation = _state(folder), Index.open(index_path).generation
    outcomes = {"old": 0, "new": 0}
    for trial in range(TRIALS):
        _change(folder, rng, trial)
        wanted = _state(folder)
        child = subprocess.Popen(_cli(folder, index_path), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.0, full_run * 1.2))
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        with Index.open(index_path) as index:
            held = {d.id: d.text.strip() for d in index.documents()}
            if index.generation == generation:
                assert held == committed, f"trial {trial}: generation {generation} changed its documents"
                outcomes["old"] += 1
            else:
                assert index.generation > generation
                assert held == wanted, f"trial {trial}: a new generation without the whole sync"
                committed, generation = wanted, index.generation
                outcomes["new"] += 1
    assert outcomes["old"] and outcomes["new"], outcomes  # kills landed both before and after a commit
    subprocess.run(_cli(folder, index_path), env=_env(), check=True, capture_output=True)  # and it recovers
    assert {d.id: d.text.strip() for d in Index.open(index_path).documents()} == _state(folder)
