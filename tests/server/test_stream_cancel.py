"""A client that disconnects from the SSE stream of ``/v1/ask`` stops its answer's generation."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from llm_fakes import FakeLLM
from ragline.answer.pipeline import LLMReader
from ragline.models.llm import Message
from ragline.server.shapes import ServerSettings

from .conftest import make_server


class EndlessLLM(FakeLLM):
    """Its first stream is long (``limit`` pieces, 5 ms apart: a model generating), later ones one short reply.

    ``ended`` is set when the long stream ends; ``how`` says whether it was closed early or ran out.
    """

    def __init__(self, limit: int = 4000) -> None:
        super().__init__(lambda *_: "Four days [1].")
        self.limit, self.sent, self.how = limit, 0, ""
        self.ended = threading.Event()
        self.long_done = False

    def stream(self, messages: Sequence[Message], max_tokens: int = 256, temperature: float = 0.0,
               seed: int = 0, stop: str | Sequence[str] | None = None) -> Iterator[str]:  # fmt: skip
        if self.long_done:
            yield from super().stream(messages, max_tokens, temperature, seed, stop)
            return
        self.long_done = True
        try:
            while self.sent < self.limit:
                yield "word "
                self.sent += 1
                time.sleep(0.005)  # pacing, as a model's tokens come: nothing is asserted on time
            self.how = "ran out"
        except GeneratorExit:
            self.how = "closed"
            raise
        finally:
            self.ended.set()


def test_a_client_that_closes_the_stream_stops_the_generation_and_the_next_ask_is_served(tmp_path: Path) -> None:
    """Planted fault: the worker thread of ``in_thread`` that keeps iterating after the consumer is gone (as
    before) runs the long stream out (``how == "ran out"``, all 4,000 pieces) while holding the reader lock."""
    handle, server, thread = make_server(tmp_path, ServerSettings(rate_per_minute=0))
    try:
        llm = EndlessLLM()
        engine = handle.app.state.engine  # type: ignore[attr-defined]
        engine.pipeline.reader = LLMReader(llm=llm)
        question = next(q for q in handle.corpus.questions if q.type == "literal").text
        with handle.client("hr") as client:
            with client.stream("POST", "/v1/ask", json={"question": question}) as response:
                for line in response.iter_lines():
                    if line.startswith("event: piece"):
                        break  # the answer has started: hang up
            assert llm.ended.wait(60), "the long stream neither ended nor was closed"  # a hang guard, not a timing
            assert llm.how == "closed" and llm.sent < llm.limit
            second = client.post("/v1/ask", json={"question": question, "stream": False})
        assert second.status_code == 200 and second.json()["answer"].startswith("Four days")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
