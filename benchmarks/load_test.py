"""Load test of `ragline serve` on loopback: N concurrent clients for a bounded time, search and ask.

Starts a server (uvicorn in a thread) over an index of the Orrin Grid corpus read by BM25 and the
extractive reader, one key per client, and prints JSON: per endpoint, requests, p50/p99 latency,
errors, and 429s counted apart. Usage: python benchmarks/load_test.py --clients 8 --seconds 60
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from ragline.server.app import ServerSettings  # noqa: E402
from ragline.server.keys import add_key  # noqa: E402
from server.conftest import make_server  # noqa: E402


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


def run(url: str, keys: list[str], path: str, bodies: list[dict], seconds: float) -> dict:
    latencies: list[float] = []
    counts = {"ok": 0, "errors": 0, "rate_limited": 0}
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(key: str, offset: int) -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
            i = offset
            while time.monotonic() < stop:
                started = time.perf_counter()
                try:
                    code = http.post(path, json=bodies[i % len(bodies)]).status_code
                except httpx.HTTPError:
                    code = 0
                elapsed = time.perf_counter() - started
                with lock:
                    if code == 200:
                        counts["ok"] += 1
                        latencies.append(elapsed)
                    elif code == 429:
                        counts["rate_limited"] += 1
                    else:
                        counts["errors"] += 1
                i += 1

    threads = [threading.Thread(target=client, args=(k, n)) for n, k in enumerate(keys)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        **counts,
        "requests": sum(counts.values()),
        "per_s": round(counts["ok"] / seconds, 1),
        "p50_ms": percentile(latencies, 0.5),
        "p99_ms": percentile(latencies, 0.99),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    if not 1 <= args.clients <= 64 or not 0 < args.seconds <= 600:
        parser.error("bounded: 1-64 clients, at most 600 s")
    tmp = Path(tempfile.mkdtemp(prefix="ragline-load-"))
    handle, server, thread = make_server(tmp, ServerSettings(rate_per_minute=6000))
    keys = [add_key(handle.keys_file, f"load{n}", ["all", "hr"]) for n in range(args.clients)]
    questions = [q.text for q in handle.corpus.questions][:50]
    try:
        result = {
            "clients": args.clients,
            "seconds": args.seconds,
            "search": run(handle.url, keys, "/v1/search", [{"query": q, "k": 10} for q in questions], args.seconds),
            "ask": run(
                handle.url, keys, "/v1/ask", [{"question": q, "stream": False} for q in questions], args.seconds
            ),
        }
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
