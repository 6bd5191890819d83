"""A real Milvus Lite server on a free loopback port for the store tests (started once, stopped after)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``HOST:PORT`` of a running ``milvus-lite server``; if it cannot start, the test fails with its log."""
    data = tmp_path_factory.mktemp("milvus")
    log = data / "server.log"
    port = free_port()
    binary = shutil.which("milvus-lite") or str(Path(sys.executable).parent / "milvus-lite")
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [binary, "server", "--data-dir", str(data / "db"), "--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 120
    while b"listening" not in log.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"milvus-lite server did not start (exit {process.poll()}):\n{log.read_text(errors='replace')}")
        time.sleep(0.2)
    yield f"127.0.0.1:{port}"
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


_names = iter(range(10**6))


@pytest.fixture
def milvus_uri(milvus_server: str) -> str:
    """A fresh collection's URI on the session's server."""
    return f"milvus://{milvus_server}/t{next(_names)}_{int(time.time() * 1000) % 10**8}"


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PostgreSQL server (with pgvector) on a local socket, from the ``pgserver`` wheel's binaries; its URI
    without the collection (``postgresql://postgres@/postgres?host=SOCKET_DIR``)."""
    pgserver = pytest.importorskip("pgserver", reason="the postgres extra (pip install 'ragline[postgres]')")
    # Not under pytest's temporary folder: as root, pgserver runs the server as its own user, which must reach
    # the data folder (it opens up the folders above it), and pytest prunes and re-creates that tree.
    data = Path(tempfile.mkdtemp(prefix="ragline-postgres-"))
    server = pgserver.get_server(data, cleanup_mode="stop")
    yield server.get_uri()
    server.cleanup()
    shutil.rmtree(data, ignore_errors=True)
