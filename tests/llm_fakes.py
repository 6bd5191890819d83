"""One deterministic stand-in LLM for the tests of what sits around a model (caches, prompts, judges).

Replies come from ``reply``: a function of (messages, max_tokens, temperature, seed, stop), or a list
of replies used in order. Every request's messages are recorded in ``calls``; a schema-constrained request
(``chat_json``, with ``structured=True``) also records its schema in ``schemas`` and answers from ``reply``;
by default it raises ``StructuredOutputUnsupported``, as a server without grammars does.
Importable from any test module (pytest puts this folder on ``sys.path`` for the conftest beside it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ragline.models.llm import LLM, Message, StructuredOutputUnsupported

Reply = Callable[[Sequence[Message], int, float, int, "str | Sequence[str] | None"], str]


class FakeLLM(LLM):
    """Words are tokens; streams come in pieces of three characters; ``id`` is ``model_id``."""

    def __init__(
        self, reply: Reply | list[str], model_id: str = "fake-llm@1", n_ctx: int = 4096, structured: bool = False
    ) -> None:
        self.reply = list(reply) if isinstance(reply, list) else reply  # the caller's list stays whole
        self.model_id = model_id
        self.n_ctx = n_ctx
        self.structured = structured
        self.calls: list[list[Message]] = []
        self.schemas: list[Mapping[str, Any]] = []

    @property
    def id(self) -> str:
        return self.model_id

    def chat(
        self,
        messages: Sequence[Message],
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> str:
        self.calls.append(list(messages))
        if isinstance(self.reply, list):
            return self.reply.pop(0)
        return self.reply(messages, max_tokens, temperature, seed, stop)

    def chat_json(
        self, messages: Sequence[Message], schema: Mapping[str, Any], max_tokens: int = 256, seed: int = 0
    ) -> str:
        if not self.structured:
            raise StructuredOutputUnsupported(f"{self.model_id} takes no schema")
        self.schemas.append(schema)
        return self.chat(messages, max_tokens, 0.0, seed, None)

    def stream(
        self,
        messages: Sequence[Message],
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> Iterator[str]:
        text = self.chat(messages, max_tokens, temperature, seed, stop)
        yield from (text[start : start + 3] for start in range(0, len(text), 3))

    def count_tokens(self, text: str) -> int:
        return len(text.split())
