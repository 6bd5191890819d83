"""``ragline serve --workers N``: N uvicorn worker processes serving one index or store, limits shared.

uvicorn starts each worker by importing :func:`app` (a factory): it reads the command's arguments from
``$RAGLINE_SERVE_ARGS`` (JSON, written by the parent) and builds the same engine and app as one process
would. The workers hold no state of their own that a request depends on: the index or store is read by
each (a Milvus collection, or the embedded index's committed manifest), keys come from the keys file
(reloaded when it changes, so a revocation reaches every worker), and the rate limit of each key is
counted in one SQLite file that every worker opens (:class:`SharedRateLimiter`), so N workers let
through what one would.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragline.errors import ConfigError
from ragline.server.limits import RateLimiter

ARGS_ENV = "RAGLINE_SERVE_ARGS"
LIMITS_ENV = "RAGLINE_SERVE_LIMITS"


class SharedRateLimiter(RateLimiter):
    """``RateLimiter``'s sliding log kept in a SQLite file, so every process that opens it counts alike.

    Each ``take`` is one immediate (write-locked) transaction: drop the key's entries older than the window,
    count the rest, and record this request when under the limit. The clock is the wall clock (processes
    share no monotonic clock).
    """

    def __init__(self, path: str | Path, per_minute: float, clock: Callable[[], float] = time.time) -> None:
        super().__init__(per_minute, clock)
        self.path = str(path)
        self._local = threading.local()
        with self._connection() as db:
            db.execute("CREATE TABLE IF NOT EXISTS passed (key TEXT NOT NULL, t REAL NOT NULL)")
            db.execute("CREATE INDEX IF NOT EXISTS passed_key ON passed (key, t)")

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:  # one connection per thread (sqlite3 connections are not shared across threads)
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            self._local.db = db
        return db  # type: ignore[no-any-return]

    def take(self, key: str) -> float | None:
        if self.per_minute <= 0:
            return None
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            now = self._clock()
            db.execute("DELETE FROM passed WHERE key = ? AND t <= ?", (key, now - self.window))
            count, first = db.execute("SELECT COUNT(*), MIN(t) FROM passed WHERE key = ?", (key,)).fetchone()
            if count < self.limit:
                db.execute("INSERT INTO passed (key, t) VALUES (?, ?)", (key, now))
                wait = None
            else:
                wait = self.window - (now - float(first))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return wait


def worker_environment(args: argparse.Namespace, limits: Path) -> dict[str, str]:
    """What the parent puts in the workers' environment: the command's arguments and the limits file."""
    values = {k: v for k, v in vars(args).items() if k != "func"}
    try:
        text = json.dumps(values)
    except TypeError as error:  # every serve flag is a string, a number or a list of strings
        raise ConfigError(f"ragline serve --workers: an argument does not pass to the workers: {error}") from None
    return {ARGS_ENV: text, LIMITS_ENV: str(limits)}


def app() -> Any:
    """The uvicorn factory each worker calls: the app of the parent's arguments, with the shared limiter."""
    from ragline.cli.serve import build_server

    if ARGS_ENV not in os.environ or LIMITS_ENV not in os.environ:
        raise ConfigError(f"ragline.server.workers:app runs under `ragline serve --workers N` (no ${ARGS_ENV})")
    args = argparse.Namespace(**json.loads(os.environ[ARGS_ENV]))
    served = build_server(args)
    served.state.limiter = SharedRateLimiter(os.environ[LIMITS_ENV], args.rate_limit)
    return served
