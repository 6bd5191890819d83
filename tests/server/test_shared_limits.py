"""The rate limit counted in one SQLite file, so the worker processes of `ragline serve --workers N` share it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from ragline.server.workers import SharedRateLimiter


def test_two_limiters_on_one_file_count_every_request_once(tmp_path: Path) -> None:
    """Planted: a limiter keeping its log in memory (RateLimiter's) let 6 through here."""
    now = [1000.0]
    first, second = (SharedRateLimiter(tmp_path / "limits.sqlite", 3, clock=lambda: now[0]) for _ in range(2))
    passed = [limiter.take("alice") is None for limiter in (first, second, first, second, first, second)]
    assert passed == [True, True, True, False, False, False]
    assert second.take("bob") is None  # per key
    wait = first.take("alice")
    assert wait is not None and 59.0 < wait <= 60.0
    now[0] += 60.0  # the window has passed: each key may go on
    assert second.take("alice") is None


def test_worker_processes_let_through_what_one_would(tmp_path: Path) -> None:
    """Four processes taking 30 times each for one key at 50 a minute: exactly 50 pass in all."""
    path = tmp_path / "limits.sqlite"
    SharedRateLimiter(path, 50)  # the table exists before the processes race
    code = textwrap.dedent(f"""
        from ragline.server.workers import SharedRateLimiter
        limiter = SharedRateLimiter({str(path)!r}, 50)
        print(sum(limiter.take("k") is None for _ in range(30)))
    """)
    processes = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(4)]
    counts = [int(p.communicate(timeout=120)[0]) for p in processes]
    assert sum(counts) == 50 and all(p.returncode == 0 for p in processes)
