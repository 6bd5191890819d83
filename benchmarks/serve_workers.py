"""`ragline serve --store milvus://...` with one and with two worker processes, under the same loopback load.

A Milvus Lite server holds the Orrin Grid corpus (chunked as the default pipeline, BM25 only: no model in
the workers); for each worker count, `ragline serve --workers N --store URI --config extractive
--retriever bm25` runs as a subprocess and C clients (threads, one connection each) post searches and
non-streamed asks for S seconds, alternating an employee key (groups all) and an HR key (all, hr). Every
reply is checked: a hit or source from a document outside the key's groups is a leak, any status but 200
an error. Then each probe question is searched 20 times with each key (over several connections, so both
workers answer) and every repetition must return the same hits ("same ACL answers from either worker").
The rate limit is counted across workers: a key at L a minute gets L requests through in all (one check
with 2 workers). Requests/s follow the machine's load (the clients share its cores), so each run also counts
the CPU seconds the server's processes and the Milvus server spent under the load: requests per CPU-second
is the figure that holds from an idle machine to a busy one. Prints one JSON line; --results FILE writes it too.

Usage: python benchmarks/serve_workers.py --clients 8 --seconds 30 --results benchmarks/results/serve_workers.json
"""

from __future__ import annotations

import argparse
import itertools
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from common import ROOT, log, print_result, write_result
from load_test import percentile
from ragline.config import load_config
from ragline.corpora.orrin import build_orrin
from ragline.index.store import IndexSettings
from ragline.ingest.pipeline import IngestConfig, chunk_documents
from ragline.server.keys import add_key
from ragline.store import open_store
from scale_out import start_milvus


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fill_store(server: str) -> tuple[str, set[str], list[str]]:
    """The corpus chunked as the default pipeline into a fresh collection: (URI, hr-only documents, questions)."""
    corpus = build_orrin()
    config = load_config("default")
    ingest = IngestConfig(config.ingest.chunker, config.ingest.context)
    chunks, _ = chunk_documents(corpus.documents, ingest, None)
    uri = f"milvus://{server}/serve_workers_{int(time.time())}"
    with open_store(uri, IndexSettings(chunker=ingest.chunker, context=ingest.context, vector_index="flat")) as c:
        c.sync(chunks)
        c.commit()
    hr_only = {d.id for d in corpus.documents if "all" not in (d.metadata.get("acl") or [])}
    return uri, hr_only, [q.text for q in corpus.questions][:50]


def start_server(uri: str, keys: Path, workers: int, rate: float) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [sys.executable, "-m", "ragline", "serve", "--store", uri, "--keys", str(keys), "--config", "extractive",
               "--retriever", "bm25", "--workers", str(workers), "--port", str(port), "--rate-limit", str(rate),
               "--log-level", "warning"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            raise SystemExit(f"ragline serve --workers {workers} exited with {process.returncode}")
        time.sleep(0.5)
    raise SystemExit(f"ragline serve --workers {workers} did not answer /health")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and its children (a server and its worker processes)."""
    import psutil

    root = psutil.Process(pid)
    total = 0.0
    for process in [root, *root.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:  # a worker that exited meanwhile
            continue
        total += times.user + times.system
    return total


def hr_only_returned(reply: dict[str, Any], hr_only: set[str]) -> int:
    """Hits and sources of hr-only documents in a reply: a leak for the employee key, allowed for HR's."""
    ids = [h.get("doc_id") for h in reply.get("hits", [])] + [s.get("doc_id") for s in reply.get("sources", [])]
    return sum(1 for i in ids if i in hr_only)


def load(url: str, keys: dict[str, str], questions: list[str], hr_only: set[str], clients: int, seconds: float
         ) -> dict[str, Any]:  # fmt: skip
    """C clients for ``seconds``: each posts searches and asks in turn, keys alternating per client."""
    latencies: dict[str, list[float]] = {"search": [], "ask": []}
    counts = {"ok": 0, "errors": 0, "leaks": 0, "hr_only_to_hr": 0}  # the last: the check can see them
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(n: int) -> None:
        groups = "hr" if n % 2 else "employee"
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {keys[groups]}"}, timeout=120) as http:
            for i in itertools.count(n):
                if time.monotonic() >= stop:
                    return
                kind = "search" if i % 2 == 0 else "ask"
                q = questions[i % len(questions)]
                body = {"query": q, "k": 10} if kind == "search" else {"question": q, "stream": False}
                started = time.perf_counter()
                try:
                    reply = http.post(f"/v1/{kind}", json=body)
                    code, payload = reply.status_code, reply.json() if reply.status_code == 200 else {}
                except (httpx.HTTPError, ValueError):
                    code, payload = 0, {}
                elapsed = time.perf_counter() - started
                with lock:
                    if code == 200:
                        counts["ok"] += 1
                        latencies[kind].append(elapsed)
                        counts["leaks" if groups == "employee" else "hr_only_to_hr"] += hr_only_returned(
                            payload, hr_only
                        )
                    else:
                        counts["errors"] += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = latencies["search"] + latencies["ask"]
    return {
        **counts,
        "requests_per_s": round(counts["ok"] / seconds, 2),
        "p50_ms": percentile(every, 0.5),
        "p99_ms": percentile(every, 0.99),
        **{f"{kind}_p99_ms": percentile(values, 0.99) for kind, values in latencies.items()},
    }


def consistency(url: str, keys: dict[str, str], questions: list[str], repeats: int = 20) -> dict[str, Any]:
    """Each probe searched ``repeats`` times per key over fresh connections: do all replies agree?"""
    differing = 0
    for key in keys.values():
        for q in questions[:10]:
            seen = set()
            for _ in range(repeats):  # a new connection each time: the kernel spreads them over the workers
                with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
                    hits = http.post("/v1/search", json={"query": q, "k": 10}).json()["hits"]
                seen.add(tuple(h["chunk_id"] for h in hits))
            differing += len(seen) > 1
    return {"probes": 2 * len(questions[:10]), "repeats": repeats, "probes_with_differing_answers": differing}


def rate_limit_check(uri: str, keys_file: Path, key: str) -> dict[str, Any]:
    """Two workers, 30 a minute for the key: 60 requests over 8 connections get 30 through in all."""
    process, url = start_server(uri, keys_file, 2, 30)
    codes: list[int] = []
    lock = threading.Lock()

    def client() -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
            for _ in range(60 // 8 + 1):
                code = http.post("/v1/search", json={"query": "leave", "k": 1}).status_code
                with lock:
                    codes.append(code)

    try:
        threads = [threading.Thread(target=client) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        stop_server(process)
    return {"limit_per_minute": 30, "requests": len(codes), "passed": codes.count(200), "refused": codes.count(429)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--workers", default="1,2", help="worker counts to compare (1,2)")
    parser.add_argument("--results", type=Path, help="write the JSON result here too")
    args = parser.parse_args()
    if not 1 <= args.clients <= 32 or not 0 < args.seconds <= 300:
        parser.error("bounded: 1-32 clients, at most 300 s a run")
    tmp = Path(tempfile.mkdtemp(prefix="ragline-serve-workers-"))
    milvus, server = start_milvus(tmp)
    try:
        uri, hr_only, questions = fill_store(server)
        log(f"indexed into {uri}; {len(hr_only)} hr-only documents")
        keys_file = tmp / "keys.json"
        keys = {"employee": add_key(keys_file, "erin", ["all"]), "hr": add_key(keys_file, "harper", ["all", "hr"])}
        runs: dict[str, Any] = {}
        for workers in (int(w) for w in args.workers.split(",")):
            process, url = start_server(uri, keys_file, workers, 0)
            try:
                log(f"{workers} worker(s): {args.clients} clients for {args.seconds:g} s")
                cpu_before = cpu_seconds(process.pid), cpu_seconds(milvus.pid)
                loaded = load(url, keys, questions, hr_only, args.clients, args.seconds)
                server_cpu, store_cpu = (cpu_seconds(p) - b for p, b in zip((process.pid, milvus.pid), cpu_before))
                per_cpu = loaded["ok"] / max(server_cpu + store_cpu, 1e-9)
                loaded.update(server_cpu_s=round(server_cpu, 2), store_cpu_s=round(store_cpu, 2),
                              requests_per_cpu_s=round(per_cpu, 2))  # fmt: skip
                runs[str(workers)] = {**loaded, **consistency(url, keys, questions)}
            finally:
                stop_server(process)
        limited = rate_limit_check(uri, keys_file, add_key(keys_file, "limited", ["all"]))
    finally:
        milvus.terminate()
        milvus.wait(timeout=30)
    result = {"benchmark": "serve_workers", "clients": args.clients, "seconds": args.seconds,
              "cpus": os.cpu_count(), "store": "milvus-lite (loopback)", "workers": runs,
              "shared_rate_limit": limited}  # fmt: skip
    if args.results:
        write_result(args.results, result)
    print_result(result)


if __name__ == "__main__":
    main()
