"""A real server on a free loopback port (uvicorn in a thread) over an index of the Orrin Grid corpus.

The index is chunked like the default pipeline and read by BM25 and the extractive reader (no model
to load). Three keys: an employee (groups all), an HR user (all, hr) and an admin.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import uvicorn  # noqa: E402

from ragline.config import load_config  # noqa: E402
from ragline.corpora.orrin import OrrinCorpus, build_orrin  # noqa: E402
from ragline.index import Index, IndexSettings  # noqa: E402
from ragline.ingest.pipeline import IngestConfig, chunk_documents  # noqa: E402
from ragline.server.app import create_app
from ragline.server.engine import Engine  # noqa: E402
from ragline.server.keys import KeyRing, add_key  # noqa: E402
from ragline.server.shapes import ServerSettings  # noqa: E402


@dataclass
class Server:
    url: str
    keys: dict[str, str]  # role -> key
    keys_file: Path
    index_path: Path
    corpus: OrrinCorpus
    app: object

    def client(self, role: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.keys[role]}"} if role else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_index(path: Path, corpus: OrrinCorpus) -> Index:
    config = load_config("default")
    ingest = IngestConfig(config.ingest.chunker, config.ingest.context)
    index = Index.create(path, IndexSettings(chunker=ingest.chunker, context=ingest.context))
    chunks, _ = chunk_documents(corpus.documents, ingest, None)
    index.add(chunks)
    index.commit()
    index.close()
    return Index.open(path)


def start(app: object, port: int) -> tuple[uvicorn.Server, threading.Thread]:
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False, lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(400):  # started: the socket accepts (bounded wait, not a timing assertion)
        if server.started:
            break
        time.sleep(0.025)
    else:
        raise RuntimeError("the test server did not start")
    return server, thread


def make_server(tmp: Path, settings: ServerSettings) -> tuple[Server, uvicorn.Server, threading.Thread]:
    corpus = build_orrin()
    index = build_index(tmp / "index", corpus)
    keys_file = tmp / "keys.json"
    keys = {
        "employee": add_key(keys_file, "erin", ["all"]),
        "hr": add_key(keys_file, "harper", ["all", "hr"]),
        "admin": add_key(keys_file, "ada", ["all", "hr"], admin=True),
    }
    config = load_config("extractive").with_overrides(retrieve={"retriever": "bm25"})
    app = create_app(Engine(index, config), KeyRing(keys_file), settings)
    port = free_port()
    server, thread = start(app, port)
    return Server(f"http://127.0.0.1:{port}", keys, keys_file, tmp / "index", corpus, app), server, thread


def facilities_workbook(folder: Path) -> Path:
    """A folder holding a two-sheet workbook (Notes, then Lockers: who keeps the lockers of each depot), for all."""
    openpyxl = pytest.importorskip("openpyxl")
    folder.mkdir()
    book = openpyxl.Workbook()
    book.active.title = "Notes"
    book.active.append(["Topic", "Note"])
    book.active.append(["Parking", "Badges open the garage"])
    lockers = book.create_sheet("Lockers")
    for row in (["Depot", "Lockers", "Keeper"], ["Quillon", 48, "Tamsin Reyes"], ["Harbour", 12, "Ode Lind"]):
        lockers.append(row)
    book.save(folder / "facilities.xlsx")
    (folder / "facilities.xlsx.meta.json").write_text('{"acl": ["all"]}')
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("server")
    handle, server, thread = make_server(tmp, ServerSettings(rate_per_minute=0, eval_root=tmp / "evals"))
    yield handle
    server.should_exit = True
    thread.join(timeout=10)
