"""Eval runs started through the API: `ragline eval` on a dataset folder under the server's --eval-root.

A run is a child process (``python -m ragline eval DATASET --output json``), one at a time, bounded
in time; its JSON report is kept in memory with the run. Requests name a dataset folder and a shipped
pipeline by name only, never a path, so the API cannot reach files outside --eval-root.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import HTTPException

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass
class EvalRun:
    id: str
    dataset: str
    config: str | None
    split: str
    status: str = "running"  # running | done | failed
    started_at: float = field(default_factory=time.time)
    seconds: float | None = None
    result: dict[str, Any] | None = None
    error: str | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "dataset": self.dataset,
            "config": self.config,
            "split": self.split,
            "status": self.status,
            "started_at": self.started_at,
            "seconds": self.seconds,
        }

    def report(self) -> dict[str, Any]:
        return {**self.summary(), "result": self.result, "error": self.error}


class EvalRuns:
    def __init__(self, root: Path | None, timeout_s: float = 600.0) -> None:
        self.root = root
        self.timeout_s = timeout_s
        self._runs: dict[str, EvalRun] = {}
        self._lock = threading.Lock()

    def datasets(self) -> list[str]:
        if self.root is None or not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and _NAME.match(p.name))

    def runs(self) -> list[EvalRun]:
        return sorted(self._runs.values(), key=lambda r: r.started_at, reverse=True)

    def get(self, run_id: str) -> EvalRun | None:
        return self._runs.get(run_id)

    def start(self, dataset: str, config: str | None, split: str) -> EvalRun:
        if self.root is None:
            raise HTTPException(409, "eval runs are off on this server: start it with --eval-root DIR")
        if not _NAME.match(dataset) or dataset not in self.datasets():
            raise HTTPException(404, f"no dataset {dataset!r} under the eval root; there: {', '.join(self.datasets())}")
        if config is not None and not _NAME.match(config):
            raise HTTPException(422, f"config {config!r}: name a shipped pipeline (bm25, extractive, default, ...)")
        if not _NAME.match(split):
            raise HTTPException(422, f"split {split!r}: a qrels split name such as test or dev")
        with self._lock:
            if any(r.status == "running" for r in self._runs.values()):
                raise HTTPException(409, "an eval run is in progress; one runs at a time: poll GET /v1/evals")
            run = EvalRun(uuid.uuid4().hex[:12], dataset, config, split)
            self._runs[run.id] = run
        threading.Thread(target=self._run, args=(run,), daemon=True, name=f"ragline-eval-{run.id}").start()
        return run

    def _run(self, run: EvalRun) -> None:
        assert self.root is not None
        command = [
            sys.executable,
            "-m",
            "ragline",
            "eval",
            str(self.root / run.dataset),
            "--split",
            run.split,
            "--output",
            "json",
            *(["--config", run.config] if run.config else []),
        ]
        started = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=self.timeout_s, check=False)
            if done.returncode == 0:
                run.result, run.status = json.loads(done.stdout.strip().splitlines()[-1]), "done"
            else:
                run.error, run.status = done.stderr.strip()[-2000:] or f"exit status {done.returncode}", "failed"
        except subprocess.TimeoutExpired:
            run.error, run.status = f"no report within {self.timeout_s:g} s", "failed"
        except (OSError, ValueError, IndexError) as error:
            run.error, run.status = f"the eval report could not be read: {error}", "failed"
        run.seconds = round(time.perf_counter() - started, 2)
