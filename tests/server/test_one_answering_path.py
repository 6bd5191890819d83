"""One answering path: ``ragline ask``, the server's ``/v1/ask`` and ``RAGPipeline.answer`` give the same answer.

The question is asked three ways over a pair of files that contradict each other and tie in retrieval
(an RGB-style counterfactual twin: "released in June 2020" / "... June 2010"), in both file orders.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from ragline.answer.pipeline import RAGPipeline, build_reader
from ragline.cli import main
from ragline.config import load_config
from ragline.index import Index
from ragline.server.app import create_app
from ragline.server.engine import Engine
from ragline.server.keys import KeyRing, add_key
from ragline.server.shapes import ServerSettings

from .conftest import free_port, start

QUESTION = "When was GPT-3 released?"
TRUE, TWIN = "GPT-3 was released in June 2020 by OpenAI.", "GPT-3 was released in June 2010 by OpenAI."


def twin_index(tmp: Path, first: str, second: str) -> Path:
    """Two files holding ``first`` and ``second`` (named, so indexed, in that order), BM25 only."""
    folder = tmp / "docs"
    folder.mkdir()
    for name, text in (("release_a", first), ("release_b", second)):
        (folder / f"{name}.md").write_text(f"---\nacl: [all]\n---\n{text}\n")  # the server's key reads "all"
    index = tmp / "idx"
    assert main(["index", str(folder), "--index", str(index), "--embedder", "none", "--output", "json"]) == 0
    return index


def ask_cli(capsys: pytest.CaptureFixture[str], index: Path) -> dict:
    capsys.readouterr()
    argv = ["ask", QUESTION, "--index", str(index), "--reader", "extractive", "--retriever", "bm25"]
    assert main([*argv, "--output", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def ask_server(tmp: Path, index: Path) -> dict:
    keys_file = tmp / "keys.json"
    key = add_key(keys_file, "erin", ["all"])
    config = load_config("extractive").with_overrides(retrieve={"retriever": "bm25"})
    app = create_app(Engine(Index.open(index), config), KeyRing(keys_file), ServerSettings(rate_per_minute=0))
    port = free_port()
    server, thread = start(app, port)
    headers = {"Authorization": f"Bearer {key}"}
    try:
        with (
            httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers) as client,
            client.stream("POST", "/v1/ask", json={"question": QUESTION}) as response,
        ):
            events = response.read().decode().strip().split("\n\n")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    parsed = [dict(line.split(": ", 1) for line in block.splitlines()) for block in events]
    pieces = "".join(json.loads(e["data"])["text"] for e in parsed if e["event"] == "piece")
    answer = next(json.loads(e["data"]) for e in parsed if e["event"] == "answer")
    assert pieces == answer["answer"]  # the streamed pieces make the answer's text, note and all
    return answer


def ask_python(index: Path) -> dict:
    pipeline = RAGPipeline(Index.open(index), build_reader("extractive"), retriever="bm25", k=5)
    answer, _ = pipeline.answer(QUESTION)
    return {"answer": answer.text, "citations": [c.to_dict() for c in answer.citations],
            "conflicts": answer.details.get("conflicts", [])}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("order", ["true first", "twin first"])
def test_a_tied_contradiction_is_reported_by_cli_server_and_python_alike_in_either_file_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, order: str
) -> None:
    """Planted faults: the CLI (or the server) reading with ``reader.stream`` beside the pipeline, as before,
    gives ``conflicts: []`` and "June 2020" or "June 2010" by file order; a tie settled by the first source
    (``tied_conflict_answer`` returning None) answers one side, flipped by the order, with a note under it."""
    first, second = (TRUE, TWIN) if order == "true first" else (TWIN, TRUE)
    index = twin_index(tmp_path, first, second)
    answers = {"cli": ask_cli(capsys, index), "server": ask_server(tmp_path, index), "python": ask_python(index)}
    for how, got in answers.items():
        assert got["conflicts"], f"{how}: the contradiction is not reported"
        said = got["answer"].split("\n\n")[0]  # the answer before any note under it
        assert "2020" in said and "2010" in said, f"{how} takes one side: {got['answer']!r}"
        assert {c["doc_id"] for c in got["citations"]} == {"release_a", "release_b"}, how
    assert answers["cli"]["answer"] == answers["server"]["answer"] == answers["python"]["answer"]
    assert answers["cli"]["conflicts"] == answers["python"]["conflicts"]
