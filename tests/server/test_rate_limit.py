"""The per-key rate limit under concurrency: of a burst of parallel requests exactly the limit pass."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ragline.server.limits import RateLimiter
from ragline.server.shapes import ServerSettings

from .conftest import make_server


def ticking(step: float = 0.1) -> Callable[[], float]:
    """A clock that advances ``step`` seconds at each reading (thread-safe: ``count`` is atomic): a burst of
    140 requests spans 14 s of it, time in which a refilling bucket regains tokens."""
    counter = itertools.count()
    return lambda: next(counter) * step


def test_exactly_the_limit_of_a_parallel_burst_passes_and_the_window_then_reopens() -> None:
    """Planted fault: the token bucket this replaced (refilled by the time the burst takes) lets all 140 through."""
    clock = ticking()
    limiter = RateLimiter(120, clock=clock)
    with ThreadPoolExecutor(16) as pool:
        waits = list(pool.map(lambda _: limiter.take("erin"), range(140)))
    assert sum(w is None for w in waits) == 120
    assert all(w is None or 0 < w <= 60 for w in waits)
    assert limiter.take("harper") is None  # another key has its own budget
    for _ in range(600):  # 60 s of the clock later the oldest requests have left the window
        clock()
    assert limiter.take("erin") is None


def test_a_rate_under_one_a_minute_lets_one_request_through_per_period() -> None:
    times = iter([0.0, 1.0, 119.0, 120.0])
    limiter = RateLimiter(0.5, clock=lambda: next(times))
    assert [limiter.take("k") is None for _ in range(4)] == [True, False, False, True]


def test_parallel_requests_with_one_key_pass_exactly_the_limit(tmp_path: Path) -> None:
    """140 parallel requests of one key against a 120-a-minute server: 120 answered, 20 refused with 429.

    Planted fault: the refilling token bucket over the same ticking clock lets all 140 through."""
    handle, server, thread = make_server(tmp_path, ServerSettings(rate_per_minute=120))
    try:
        handle.app.state.limiter = RateLimiter(120, clock=ticking())  # type: ignore[attr-defined]
        clients = [handle.client("employee") for _ in range(8)]
        with ThreadPoolExecutor(8) as pool:
            responses = list(pool.map(lambda i: clients[i % 8].get("/v1/status"), range(140)))
        codes = [r.status_code for r in responses]
        assert codes.count(200) == 120 and codes.count(429) == 20
        assert all(int(r.headers["retry-after"]) >= 1 for r in responses if r.status_code == 429)
        assert handle.client("hr").get("/v1/status").status_code == 200
    finally:
        server.should_exit = True
        thread.join(timeout=10)
