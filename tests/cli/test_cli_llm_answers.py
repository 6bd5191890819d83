"""`ragline ask` with an LLM reader behind the real HTTP client: a question too long for the model's context is
refused before any request, and an answer that cites nothing is flagged.

The server is a small OpenAI-compatible stub (http.server in a thread, 127.0.0.1 only): ``/tokenize`` counts
words, ``/v1/chat/completions`` streams a fixed reply. Every request it sees is recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from rich.console import Console

from llm_fakes import FakeLLM
from ragline.answer.pipeline import RAGPipeline, build_reader
from ragline.cli.ask import print_answer, read_answer
from ragline.errors import ModelError
from ragline.index import Index, IndexSettings
from ragline.models.llm import HttpLLM, LLMContextExceededError, PromptTooLongError, check_prompt_fits
from ragline.types import Document


class StubServer:
    def __init__(self, reply: str, status: int = 200) -> None:
        self.reply, self.status, self.paths = reply, status, []
        state = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
                state.paths.append(self.path)
                if self.path == "/tokenize":
                    self._send(200, json.dumps({"tokens": [0] * len(body["content"].split())}).encode())
                elif state.status != 200:
                    self._send(state.status, state.reply.encode())
                else:
                    events = [{"choices": [{"index": 0, "delta": {"content": state.reply}}]}, "[DONE]"]
                    data = "".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events)
                    self._send(200, data.encode(), "text/event-stream")

            def _send(self, status: int, data: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> StubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def index() -> Iterator[Index]:
    docs = [
        Document("salary", "Band 4 pays a salary of $84,000 a year.", "Salary bands"),
        Document("vpn", "The remote access gateway needs a hardware token.", "VPN"),
    ]
    index = Index.create(None, IndexSettings())
    index.add(docs)
    index.commit()
    yield index


def pipeline_on(server: StubServer, index: Index, context_tokens: int | None = None) -> RAGPipeline:
    llm = HttpLLM(server.url, "stub", retries=0, timeout_s=5.0, context_tokens=context_tokens)
    return RAGPipeline(index, build_reader("llm:max_tokens=32", llm=llm), retriever="bm25", k=2)


def test_a_question_too_long_for_the_context_is_refused_before_any_request(index: Index) -> None:
    question = "How much does band 4 pay? " + "word " * 20_000  # about 100 KB
    with StubServer("Band 4 pays $84,000 [1].") as server:
        pipeline = pipeline_on(server, index, context_tokens=512)
        with pytest.raises(ModelError) as error:
            read_answer(pipeline, question, None, None)
    assert "the question is 20006 tokens; the model's context is 512 tokens" in str(error.value)
    assert "shorten the question" in str(error.value)
    assert "/v1/chat/completions" not in server.paths  # nothing was sent to be refused by the server


def test_a_server_that_refuses_a_long_prompt_is_reported_as_too_long(index: Index) -> None:
    refusal = json.dumps({"error": {"code": 400, "message": "the request exceeds the available context size, "
                                    "try increasing it", "type": "exceed_context_size_error"}})  # fmt: skip
    with StubServer(refusal, status=400) as server:
        pipeline = pipeline_on(server, index)  # context unknown: the server's answer is translated
        with pytest.raises(LLMContextExceededError, match="the prompt is longer than the model's context"):
            read_answer(pipeline, "How much does band 4 pay?", None, None)


def test_an_answer_without_citations_is_flagged(index: Index) -> None:
    question = "How much does band 4 pay?"
    with StubServer("Bananas are yellow.") as server:
        pipeline = pipeline_on(server, index, context_tokens=4096)
        answer, context = read_answer(pipeline, question, None, None)
    assert not answer.abstained and answer.citations == []
    console = Console(width=200, record=True)
    print_answer(console, answer, context, index.settings.analyzer, question)
    assert "no citation: this answer is not backed by the sources" in console.export_text()
    with StubServer("Band 4 pays $84,000 [1].") as server:
        pipeline = pipeline_on(server, index, context_tokens=4096)
        cited, context = read_answer(pipeline, question, None, None)
    console = Console(width=200, record=True)
    print_answer(console, cited, context, index.settings.analyzer, question)
    assert cited.citations and "no citation" not in console.export_text()


def test_check_prompt_fits_counts_only_when_the_bytes_could_overflow() -> None:
    llm = FakeLLM(["unused"])  # counts words as tokens
    short = [{"role": "user", "content": "word " * 10}]
    assert check_prompt_fits(llm, short, max_tokens=32, context_tokens=512) is None  # 50 bytes: cannot overflow
    assert check_prompt_fits(llm, short, max_tokens=32, context_tokens=None) is None
    long = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "word " * 600}]
    with pytest.raises(PromptTooLongError) as error:
        check_prompt_fits(llm, long, max_tokens=32, context_tokens=512)
    assert (error.value.prompt_tokens, error.value.excess) == (602 + 16, 602 + 16 + 32 - 512)
    assert "the model's context is 512 tokens (138 too long)" in str(error.value)
    assert check_prompt_fits(llm, long, max_tokens=32, context_tokens=1024) == 618
