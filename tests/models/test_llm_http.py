"""The OpenAI-compatible HTTP backend: against a real llama.cpp server, and against a misbehaving stub.

The real server (xllamacpp with SmolLM2, marked ``models``) checks chat, streaming and token counts. A stub
(http.server in a thread) plays the failures a real server won't produce on demand: a hang past the
timeout, HTTP 500, 429, garbage JSON, a stream cut short. Everything listens on 127.0.0.1 only, every
server is shut down by its fixture, and every loop is bounded.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ragline.errors import ModelError
from ragline.models.gguf import packaged_gguf_path
from ragline.models.llm import HttpLLM, LLMConnectionError, LLMHTTPError
from ragline.models.llm.local import default_threads, import_xllamacpp

HELLO = [{"role": "user", "content": "Say hello."}]


def completion(text: str) -> bytes:
    return json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}).encode()


def sse(*events: Any) -> bytes:
    lines = [f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n" for event in events]
    return "".join(lines).encode()


def delta(text: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}}]}


@dataclass
class Stub:
    """What the stub server does (``respond``) and what it saw (``requests``: path, headers, JSON body)."""

    url: str = ""
    respond: Callable[[BaseHTTPRequestHandler, int], None] | None = None
    requests: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)  # set at teardown: hanging handlers return


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str = "application/json") -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@pytest.fixture
def stub() -> Iterator[Stub]:
    state = Stub()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state.requests.append((self.path, dict(self.headers), json.loads(raw or b"null")))
            assert state.respond is not None
            state.respond(self, len(state.requests))

        def log_message(self, *args: Any) -> None:  # keep the test output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def client(url: str, **options: Any) -> HttpLLM:
    settings: dict[str, Any] = {"timeout_s": 2.0, "total_timeout_s": 10.0, "retries": 2, "backoff_s": 0.01}
    return HttpLLM(url, "stub-model", **{**settings, **options})


def test_chat_sends_the_request_and_reads_the_reply(stub: Stub) -> None:
    stub.respond = lambda handler, n: send(handler, 200, completion("Hello!"))
    with client(stub.url, api_key="secret-key") as llm:
        assert llm.chat(HELLO, max_tokens=5, stop="\n") == "Hello!"
    path, headers, body = stub.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer secret-key"
    assert body == {
        "messages": HELLO,
        "max_tokens": 5,
        "temperature": 0.0,
        "seed": 0,
        "stop": ["\n"],
        "stream": False,
        "model": "stub-model",
    }


def test_timeout_is_retried_then_a_clear_error(stub: Stub) -> None:
    stub.respond = lambda handler, n: stub.release.wait(10)  # never answers (until teardown)
    llm = client(stub.url, timeout_s=0.3, retries=2)
    start = time.monotonic()
    with pytest.raises(LLMConnectionError, match=r"after 3 attempt\(s\), the last one timed out"):
        llm.chat(HELLO, max_tokens=5)
    assert time.monotonic() - start < 5
    assert len(stub.requests) == 3
    llm.close()


def test_http_500_is_retried_then_reports_status_and_body(stub: Stub) -> None:
    stub.respond = lambda handler, n: send(handler, 500, b"model crashed: out of memory", "text/plain")
    with pytest.raises(LLMHTTPError, match="HTTP 500: model crashed: out of memory") as caught:
        client(stub.url, retries=1).chat(HELLO)
    assert caught.value.status_code == 500
    assert len(stub.requests) == 2


def test_429_then_success(stub: Stub) -> None:
    def respond(handler: BaseHTTPRequestHandler, n: int) -> None:
        if n == 1:
            send(handler, 429, b'{"error": {"message": "slow down"}}')
        else:
            send(handler, 200, completion("finally"))

    stub.respond = respond
    assert client(stub.url).chat(HELLO) == "finally"
    assert len(stub.requests) == 2


def test_client_errors_are_not_retried(stub: Stub) -> None:
    stub.respond = lambda handler, n: send(handler, 400, b'{"error": {"message": "bad messages"}}')
    with pytest.raises(LLMHTTPError, match="HTTP 400.*bad messages") as caught:
        client(stub.url).chat(HELLO)
    assert caught.value.status_code == 400
    assert len(stub.requests) == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>not json", "malformed JSON"),
        (b'{"choices": []}', "without choices"),
        (b'{"error": {"message": "no slot available"}}', "no slot available"),
    ],
)
def test_garbage_replies_are_model_errors(stub: Stub, body: bytes, message: str) -> None:
    stub.respond = lambda handler, n: send(handler, 200, body)
    with pytest.raises(ModelError, match=message):
        client(stub.url).chat(HELLO)
    assert len(stub.requests) == 1  # a garbage answer is not retried: it would come again


def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as probe:  # a loopback port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(LLMConnectionError, match=r"after 2 attempt\(s\).*connection failed"):
        client(f"http://127.0.0.1:{port}/v1", retries=1).chat(HELLO)


def test_stream_parses_server_sent_events(stub: Stub) -> None:
    events = sse({"choices": [{"delta": {"role": "assistant", "content": None}}]}, delta("Hel"), delta("lo"), "[DONE]")
    events = b": keep-alive comment\n\n" + events.replace(b"\n", b"\r\n", 2)  # comments and CRLF are valid SSE
    stub.respond = lambda handler, n: send(handler, 200, events, "text/event-stream")
    assert list(client(stub.url).stream(HELLO)) == ["Hel", "lo"]
    assert stub.requests[0][2]["stream"] is True


@pytest.mark.parametrize(
    ("events", "message"),
    [
        (sse(delta("Hel"), "{not json"), "malformed JSON in the stream"),
        (sse(delta("Hel"), {"error": {"message": "context full"}}), "context full"),
        (sse(delta("Hel"), delta("lo")), "without 'data: \\[DONE\\]'"),
    ],
)
def test_broken_streams_are_model_errors(stub: Stub, events: bytes, message: str) -> None:
    stub.respond = lambda handler, n: send(handler, 200, events, "text/event-stream")
    pieces = []
    with pytest.raises(ModelError, match=message):
        for piece in client(stub.url).stream(HELLO):
            pieces.append(piece)
    assert pieces == ["Hel"] or pieces == ["Hel", "lo"]


def test_a_trickling_stream_stops_at_the_deadline(stub: Stub) -> None:
    def respond(handler: BaseHTTPRequestHandler, n: int) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()  # no length: the body ends when the connection closes
        for _ in range(100):  # 10 s at most, less once the client hung up or the test ended
            if stub.release.wait(0.1):
                return
            try:
                handler.wfile.write(sse(delta("x")))
                handler.wfile.flush()
            except OSError:
                return
        handler.close_connection = True

    stub.respond = respond
    start = time.monotonic()
    with pytest.raises(ModelError, match="deadline"):
        for _ in client(stub.url, total_timeout_s=0.5).stream(HELLO):
            pass
    assert time.monotonic() - start < 3


def test_count_tokens_falls_back_to_an_estimate_without_tokenize(stub: Stub) -> None:
    stub.respond = lambda handler, n: send(handler, 404, b'{"error": "not found"}')
    llm = client(stub.url)
    assert llm.count_tokens("twelve bytes") == 3
    assert llm.count_tokens("eight by") == 2
    assert [path for path, _, _ in stub.requests] == ["/tokenize"]  # asked once, then remembered


# -- against a real llama.cpp server -------------------------------------------------------------------------


@pytest.fixture
def llama_server() -> Iterator[str]:
    """A real llama.cpp server (xllamacpp) with SmolLM2 on 127.0.0.1, a free port; stopped at teardown."""
    xllamacpp = import_xllamacpp()  # sets OMP_WAIT_POLICY=PASSIVE first
    params = xllamacpp.CommonParams()
    params.model.path = str(packaged_gguf_path("smollm2-135m"))
    params.model_alias = {"smollm2"}
    params.n_ctx = 512
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = default_threads()
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.ui = False
    params.verbosity = 0
    server = xllamacpp.Server(params)
    try:
        yield server.listening_address
    finally:
        del server  # the destructor stops the server


@pytest.mark.models
def test_real_server_chat_stream_and_tokens(llama_server: str) -> None:
    # cache_prompt off: the second request must not reuse the first one's state, so both decode alike.
    with HttpLLM(f"{llama_server}/v1", "smollm2", extra_body={"cache_prompt": False}) as llm:
        question = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
        answer = llm.chat(question, max_tokens=12)
        assert "Paris" in answer
        pieces = list(llm.stream(question, max_tokens=12))
        assert len(pieces) > 1 and "".join(pieces) == answer
        assert llm.count_tokens("hello world") == 2  # exact, from the server's /tokenize
        with pytest.raises(LLMHTTPError, match="exceeds the available context size") as caught:
            llm.chat([{"role": "user", "content": "word " * 600}], max_tokens=4)
        assert caught.value.status_code == 400


def test_chat_json_sends_the_schema_as_response_format(stub: Stub) -> None:
    """Planted fault: a request without ``response_format`` leaves the server free to write anything."""
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    stub.respond = lambda handler, n: send(handler, 200, completion('{"answer": "hi"}'))
    with client(stub.url) as llm:
        assert llm.generate_json(HELLO, schema, max_tokens=9) == {"answer": "hi"}
    body = stub.requests[0][2]
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    assert body["max_tokens"] == 9 and body["temperature"] == 0.0


def test_a_server_that_refuses_response_format_says_it_takes_no_schema(stub: Stub) -> None:
    """Planted fault: passing the HTTP 400 on as LLMHTTPError, which a reader cannot tell from a bad request."""
    from ragline.models.llm import StructuredOutputUnsupported

    stub.respond = lambda handler, n: send(handler, 400, b'{"error": "unknown field response_format"}')
    with client(stub.url) as llm, pytest.raises(StructuredOutputUnsupported, match="response_format"):
        llm.chat_json(HELLO, {"type": "object"})


def test_chat_tools_sends_the_tools_and_reads_the_first_call(stub: Stub) -> None:
    """Planted fault checked: a request without ``tools`` (the server may answer in text)."""
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    call = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"query": "x"}'}}
    reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
    stub.respond = lambda handler, n: send(handler, 200, json.dumps(reply).encode())
    with client(stub.url) as llm:
        got = json.loads(llm.chat_tools(HELLO, tools, max_tokens=20))
    assert got == {"name": "search", "arguments": '{"query": "x"}', "content": ""}
    body = stub.requests[0][2]
    assert body["tools"] == tools and body["tool_choice"] == "required"


def test_a_server_that_refuses_tools_says_it_has_no_function_calling(stub: Stub) -> None:
    from ragline.models.llm import StructuredOutputUnsupported

    stub.respond = lambda handler, n: send(handler, 400, b'{"error": "tools are not supported"}')
    with client(stub.url) as llm, pytest.raises(StructuredOutputUnsupported, match="tools"):
        llm.chat_tools(HELLO, [], max_tokens=5)


def test_chat_scored_asks_for_logprobs_and_reads_every_tokens(stub: Stub) -> None:
    """``chat_scored`` sends ``logprobs: true`` and returns the reply with each token's log probability; a
    server that leaves them out is a ModelError, not a reply scored 0 (log 1). Planted fault checked: reading
    ``content[0]`` alone returns one value for the two tokens."""
    tokens = [{"token": "Par", "logprob": -0.25}, {"token": "is", "logprob": -0.5}]
    reply = {"choices": [{"message": {"content": "Paris"}, "logprobs": {"content": tokens}}]}
    stub.respond = lambda handler, n: send(handler, 200, json.dumps(reply).encode())
    llm = client(stub.url)
    scored = llm.chat_scored(HELLO, max_tokens=8, stop="\n")
    assert scored.text == "Paris" and scored.token_logprobs == (-0.25, -0.5) and scored.logprob == -0.75
    assert stub.requests[0][2]["logprobs"] is True and stub.requests[0][2]["stop"] == ["\n"]
    stub.respond = lambda handler, n: send(handler, 200, completion("Paris"))
    with pytest.raises(ModelError, match="logprob"):
        llm.chat_scored(HELLO)
    llm.close()
