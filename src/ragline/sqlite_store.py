"""A SQLite file that threads and processes share safely: the base of ragline's on-disk caches.

WAL journaling lets readers proceed while one process writes; the busy timeout makes a second writer
wait instead of failing; ``synchronous=NORMAL`` can lose the last entries on a power cut but never
consistency, and a lost cache entry is merely recomputed. One connection per process: a connection
must not cross a fork, so a child opens its own.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ragline.paths import cache_root


class SqliteStore:
    """Subclasses set ``FILENAME``, ``TABLE`` (with a ``model`` column) and ``SCHEMA``."""

    FILENAME = "store.sqlite"
    TABLE = ""
    SCHEMA = ""

    def __init__(self, path: str | Path | None = None, timeout_s: float = 60.0) -> None:
        """``path``: a directory (the file is ``FILENAME`` in it), a ``.sqlite`` / ``.db`` file, or None
        for the cache root (``$RAGLINE_CACHE``, else ``~/.cache/ragline``)."""
        path = Path(path).expanduser() if path is not None else cache_root()
        self.path = path if path.suffix in (".sqlite", ".db") else path / self.FILENAME
        self.timeout_s = timeout_s
        self._lock = threading.Lock()  # one connection, used by one thread at a time
        self._connection: sqlite3.Connection | None = None
        self._pid = 0

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: no implicit transactions; writers open theirs explicitly.
            connection = sqlite3.connect(
                self.path, timeout=self.timeout_s, isolation_level=None, check_same_thread=False
            )
            self._enable_wal(connection)
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(self.SCHEMA)
            self._connection, self._pid = connection, os.getpid()
        return self._connection

    def _enable_wal(self, connection: sqlite3.Connection) -> None:
        """Switch to WAL, retrying while another process holds the file.

        Changing the journal mode needs an exclusive lock, and SQLite can answer "database is locked" without
        waiting out its busy timeout (seen in a clean-clone test run: two processes opening a new cache
        together), so wait here, under the same timeout.
        """
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def count(self, model_id: str | None = None) -> int:
        """Number of entries, of one model or of all."""
        with self._lock:
            connection = self._connect()
            if model_id is None:
                return connection.execute(f"SELECT count(*) FROM {self.TABLE}").fetchone()[0]
            return connection.execute(f"SELECT count(*) FROM {self.TABLE} WHERE model = ?", [model_id]).fetchone()[0]

    def close(self) -> None:
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"
