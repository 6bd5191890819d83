"""Readers against a re-syncing writer: searches through the CLI and the API while `ragline index` commits.

Usage::

    .venv/bin/python benchmarks/concurrent_readers.py                     # 200 CLI + 2,000 API searches, 20 re-syncs
    .venv/bin/python benchmarks/concurrent_readers.py --resyncs 5 --cli-searches 20 --api-searches 300

What runs, all on one index in a temporary folder:

- The writer: a folder of ``--docs`` text files is indexed with ``python -m ragline index DIR --index IDX
  --embedder none``, then the index is brought to ``max_segments`` segments (small in-process commits), so
  that every later commit also triggers the automatic merge. Then ``--resyncs`` times: some files are
  edited, one is deleted and one added (the number of documents stays the same), and the same CLI command
  re-syncs the index. Every re-sync thus commits a segment and delete sets and merges, and each commit
  removes files of the commit before it.
- CLI readers (``--cli-readers`` threads, each running ``python -m ragline search WORD -k K --index IDX
  --output json`` one after another) and API readers (``--api-readers`` threads; each search is a fresh
  ``Index.open`` + ``search``, except one thread that keeps one handle and calls ``refresh()`` before each
  search). A word every document holds is searched for with k above the document count, so every search
  must return exactly ``--docs`` hits: a search that raises, exits non-zero or returns another count (a
  commit seen half) is a failure.
- Pacing: the searches are shared out evenly over the re-syncs; API searches are spread over the time the
  last re-sync took, so they keep opening the index while the writer commits. The writer starts the next
  re-sync when the readers have done their share of this one. ``--time-cap`` stops everything.

Prints one JSON line: ``cli_searches``, ``api_searches`` (done), ``resyncs`` (done), ``generations``
(distinct commits the readers saw), ``merges`` (re-syncs whose commit was followed by a merge), ``failed``
(searches), ``writer_failed`` (re-syncs), ``errors`` (the first few messages), ``seconds``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import ragline
from common import print_result
from ragline.index.store import Index

# Whole documents, BM25 only: one document per file, so every search can check the count exactly.
INDEX_FLAGS = ("--embedder", "none", "--chunker", "none")

SHARED_WORD = "harbour"  # in every document: a search for it counts the live documents
_KEPT_ERRORS = 10


def _cli_env() -> dict[str, str]:
    """The environment of CLI subprocesses: they import the same ragline as this process."""
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    source_root = str(Path(ragline.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source_root, env.get("PYTHONPATH")) if p)
    return env


def _ragline(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragline", *args], capture_output=True, text=True, env=_cli_env(), timeout=300
    )


class Corpus:
    """The source folder the writer mirrors: ``n`` files of random words, each holding ``SHARED_WORD``."""

    def __init__(self, folder: Path, n: int, rng: random.Random) -> None:
        self.folder, self.rng, self.next_id = folder, rng, n
        self.vocabulary = [f"w{i}" for i in range(400)]
        folder.mkdir(parents=True)
        for i in range(n):
            self._write(f"doc{i:05d}")

    def _write(self, name: str) -> None:
        words = self.rng.choices(self.vocabulary, k=self.rng.randrange(40, 120))
        (self.folder / f"{name}.txt").write_text(f"{name}\n\n{SHARED_WORD} {' '.join(words)}\n", "utf-8")

    def edit(self, n: int) -> None:
        """Rewrite ``n`` files with new words."""
        for file in self.rng.sample(sorted(self.folder.glob("*.txt")), n):
            self._write(file.stem)

    def change(self, edits: int) -> None:
        """Edit ``edits`` files, delete one and add one: the next sync updates, deletes and adds."""
        self.edit(edits)
        self.rng.choice(sorted(self.folder.glob("*.txt"))).unlink()
        self._write(f"doc{self.next_id:05d}")
        self.next_id += 1


class Run:
    """Shared counters and the pacing between the writer and the readers."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.deadline = time.monotonic() + args.time_cap
        self.cond = threading.Condition()
        self.started = 0  # re-syncs begun
        self.finished = False
        self.done = {"cli": 0, "api": 0}
        self.claimed = {"cli": 0, "api": 0}
        self.total = {"cli": args.cli_searches, "api": args.api_searches}
        self.failed = 0
        self.writer_failed = 0
        self.merges = 0
        self.errors: list[str] = []
        self.generations: set[int] = set()
        self.resync_seconds = 1.0

    def share(self, kind: str, resyncs: int) -> int:
        """Searches of ``kind`` due once ``resyncs`` re-syncs have begun."""
        return self.total[kind] * min(resyncs, self.args.resyncs) // self.args.resyncs

    def claim(self, kind: str) -> bool:
        """Wait until one more search of ``kind`` is due; False when the run is over."""
        with self.cond:
            while True:
                if time.monotonic() > self.deadline or self.claimed[kind] >= self.total[kind]:
                    return False
                if self.claimed[kind] < self.share(kind, self.started) or self.finished:
                    self.claimed[kind] += 1
                    return True
                self.cond.wait(timeout=0.5)

    def record(self, kind: str, generation: int | None, error: str | None) -> None:
        with self.cond:
            self.done[kind] += 1
            if generation is not None:
                self.generations.add(generation)
            if error is not None:
                self.failed += 1
                if len(self.errors) < _KEPT_ERRORS:
                    self.errors.append(f"{kind}: {error}")
            self.cond.notify_all()

    def wait_for_readers(self) -> None:
        with self.cond:
            while time.monotonic() < self.deadline and any(
                self.done[kind] < self.share(kind, self.started) for kind in self.done
            ):
                self.cond.wait(timeout=0.5)


def writer(run: Run, corpus: Corpus, index: Path) -> None:
    generation = Index.open(index).generation
    try:
        for _ in range(run.args.resyncs):
            run.wait_for_readers()
            if time.monotonic() > run.deadline:
                break
            corpus.change(run.args.edits)
            with run.cond:
                run.started += 1
                run.cond.notify_all()
            began = time.monotonic()
            done = _ragline("index", str(corpus.folder), "--index", str(index), *INDEX_FLAGS, "--output", "json")
            run.resync_seconds = time.monotonic() - began
            if done.returncode != 0:
                with run.cond:
                    run.writer_failed += 1
                    if len(run.errors) < _KEPT_ERRORS:
                        run.errors.append(f"writer: {done.stderr.strip()[-500:]}")
                continue
            before, generation = generation, json.loads(done.stdout)["generation"]
            run.merges += generation > before + 1
        run.wait_for_readers()
    finally:
        with run.cond:
            run.finished = True
            run.cond.notify_all()


def cli_reader(run: Run, index: Path) -> None:
    while run.claim("cli"):
        done = _ragline("search", SHARED_WORD, "-k", str(2 * run.args.docs), "--index", str(index), "--output", "json")
        if done.returncode != 0:
            run.record("cli", None, f"exit {done.returncode}: {done.stderr.strip()[-500:]}")
            continue
        result = json.loads(done.stdout)
        hits, generation = len(result["hits"]), result["provenance"]["generation"]
        error = None if hits == run.args.docs else f"generation {generation}: {hits} hits, not {run.args.docs}"
        run.record("cli", generation, error)


def api_reader(run: Run, index: Path, refreshing: bool) -> None:
    handle = Index.open(index) if refreshing else None
    while run.claim("api"):
        began = time.monotonic()
        try:
            if handle is not None:
                handle.refresh()
                searched = handle
            else:
                searched = Index.open(index)
            hits, live = len(searched.search(SHARED_WORD, k=10)), len(searched)
        except Exception as error:  # noqa: BLE001 - every failure is counted and reported
            run.record("api", None, f"{type(error).__name__}: {error}")
            continue
        ok = hits == 10 and live == run.args.docs
        run.record("api", searched.generation, None if ok else f"generation {searched.generation}: {live} documents")
        # This thread's share of a re-sync's searches, spread over the time the last re-sync took, so that
        # opens keep overlapping the writer's commits.
        interval = run.resync_seconds * run.args.api_readers * run.args.resyncs / run.args.api_searches
        time.sleep(max(0.0, interval - (time.monotonic() - began)))


def seed_segments(corpus: Corpus, index: Path) -> None:
    """Re-sync after single-file edits until the index has ``max_segments`` segments: later commits then merge.

    These syncs run the CLI in this process: the same code as ``ragline index``, without a start-up each.
    """
    from ragline.cli import main as ragline_main

    while len((handle := Index.open(index)).segments) < handle.settings.max_segments:
        corpus.edit(1)
        with contextlib.redirect_stdout(io.StringIO()):
            ragline_main(["index", str(corpus.folder), "--index", str(index), *INDEX_FLAGS, "--output", "json"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resyncs", type=int, default=20, help="re-syncs by the writer (20)")
    parser.add_argument("--cli-searches", type=int, default=200, help="searches through `ragline search` (200)")
    parser.add_argument("--api-searches", type=int, default=2000, help="searches through Index.open (2000)")
    parser.add_argument("--cli-readers", type=int, default=2, help="threads running CLI searches (2)")
    parser.add_argument("--api-readers", type=int, default=2, help="threads searching in this process (2)")
    parser.add_argument("--docs", type=int, default=150, help="documents in the index (150)")
    parser.add_argument("--edits", type=int, default=5, help="files edited before each re-sync (5)")
    parser.add_argument("--time-cap", type=float, default=600.0, help="stop after this many seconds (600)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.resyncs < 1 or args.docs < 2:
        parser.error("--resyncs must be at least 1 and --docs at least 2")
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="ragline-concurrent-"))
    try:
        corpus, index = Corpus(work / "source", args.docs, random.Random(args.seed)), work / "index"
        began = time.monotonic()
        first = _ragline("index", str(corpus.folder), "--index", str(index), *INDEX_FLAGS)
        if first.returncode != 0:
            raise SystemExit(f"the first `ragline index` failed: {first.stderr}")
        run = Run(args)
        run.resync_seconds = time.monotonic() - began
        seed_segments(corpus, index)
        threads = [threading.Thread(target=writer, args=(run, corpus, index))]
        threads += [threading.Thread(target=cli_reader, args=(run, index)) for _ in range(args.cli_readers)]
        threads += [threading.Thread(target=api_reader, args=(run, index, i == 0)) for i in range(args.api_readers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "cli_searches": run.done["cli"],
        "api_searches": run.done["api"],
        "resyncs": run.started,
        "generations": len(run.generations),
        "merges": run.merges,
        "failed": run.failed,
        "writer_failed": run.writer_failed,
        "errors": run.errors,
        "seconds": round(time.perf_counter() - started, 1),
    }
    print_result(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
