"""The one interface every LLM backend implements: chat, stream, count tokens, and an identity.

Backends that can also report the next token's top log probabilities (llama.cpp's server and
OpenAI's, through ``logprobs``/``top_logprobs``) implement :meth:`LLM.top_logprobs`; a pointwise
LLM reranker reads P(yes) from it.

Constrained output: :meth:`LLM.generate_json` returns the parsed reply to ``messages`` constrained to a JSON
schema (``json_schema.py``: the schema subset, the parser and the check). A backend constrains decoding in
:meth:`LLM.chat_json`: llama.cpp's server compiles the schema into a grammar, OpenAI-compatible servers take it as
``response_format``; a backend that cannot raises :class:`StructuredOutputUnsupported`, and a caller falls back
to a plain-text prompt (``ragline.answer.prompt`` does).

Messages are OpenAI-style dicts, ``{"role": "system" | "user" | "assistant", "content": "..."}``. The
defaults make generation deterministic: ``temperature=0`` is greedy decoding (the seed then plays no part),
and a fixed ``seed`` makes sampling at ``temperature > 0`` repeatable on the same backend and weights.

:attr:`LLM.id` names the model exactly (name and weights hash where known), so that a response cache keyed
by (id, messages, parameters) is never stale (see ``cache.py``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragline.errors import ModelError

Message = dict[str, str]
TopLogprobs = list[tuple[str, float]]  # (token text, natural-log probability), likeliest first


@dataclass(frozen=True, slots=True)
class ScoredReply:
    """A greedy reply and the natural-log probability of each token the model generated for it.

    ``logprob`` (their sum) is log P(reply | prompt) as the model decoded it: what RAG-Sequence's fast
    decoding multiplies by a passage's retrieval probability (``ragline.eval.experiments.rag_sequence``).
    """

    text: str
    token_logprobs: tuple[float, ...]

    @property
    def logprob(self) -> float:
        return float(sum(self.token_logprobs))


ROLES = frozenset({"system", "user", "assistant", "tool"})
DEFAULT_MAX_TOKENS = 256
DEFAULT_TOP_LOGPROBS = 10  # what a yes/no reranker needs: both answers are nearly always among them
MAX_TOP_LOGPROBS = 20  # OpenAI's limit on top_logprobs
# Tokens a chat template adds around each message (ChatML: "<|im_start|>role\n" ... "<|im_end|>\n" is 5).
TEMPLATE_TOKENS_PER_MESSAGE = 8


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """The knobs of one generation; with the model id and the messages they determine the answer."""

    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    seed: int = 0
    stop: tuple[str, ...] = ()

    @classmethod
    def of(cls, max_tokens: int, temperature: float, seed: int, stop: str | Sequence[str] | None) -> GenerationParams:
        """Validated parameters; ``stop`` may be one string, a list, or None."""
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        if not 0.0 <= float(temperature) <= 2.0:
            raise ValueError(f"temperature must be in [0, 2], got {temperature!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        stops = (stop,) if isinstance(stop, str) else tuple(stop or ())
        if not all(isinstance(item, str) and item for item in stops):
            raise ValueError(f"stop must be non-empty strings, got {stop!r}")
        return cls(max_tokens, float(temperature), seed, stops)

    def to_body(self) -> dict[str, Any]:
        """The OpenAI request fields of these parameters."""
        body: dict[str, Any] = {"max_tokens": self.max_tokens, "temperature": self.temperature, "seed": self.seed}
        if self.stop:
            body["stop"] = list(self.stop)
        return body


def check_top(top: int) -> int:
    """``top`` as the number of log probabilities to ask for; ValueError outside 1..MAX_TOP_LOGPROBS."""
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP_LOGPROBS:
        raise ValueError(f"top must be an integer in 1..{MAX_TOP_LOGPROBS}, got {top!r}")
    return top


def check_messages(messages: Sequence[Message]) -> list[Message]:
    """``messages`` as a list of ``{"role", "content"}`` dicts with string values; ValueError/TypeError if not."""
    if isinstance(messages, (str, dict)):
        raise TypeError('pass a list of messages like [{"role": "user", "content": "..."}], not one string or dict')
    checked = list(messages)
    if not checked:
        raise ValueError("messages is empty: give at least one user message")
    for index, message in enumerate(checked):
        if not isinstance(message, dict):
            raise TypeError(f"messages[{index}] is a {type(message).__name__}, not a dict")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise ValueError(f"messages[{index}] has role {role!r}; expected one of {sorted(ROLES)}")
        if not isinstance(content, str):
            raise ValueError(f"messages[{index}] has no string content")
    return checked


class StructuredOutputUnsupported(ModelError):
    """The backend cannot constrain its reply to a JSON schema (no grammar, no ``response_format``)."""


class PromptTooLongError(ModelError):
    """The prompt and the reply's ``max_tokens`` do not fit in the model's context; found before any request."""

    def __init__(self, prompt_tokens: int, max_tokens: int, context_tokens: int) -> None:
        self.prompt_tokens = prompt_tokens
        self.max_tokens = max_tokens
        self.context_tokens = context_tokens
        self.excess = prompt_tokens + max_tokens - context_tokens
        super().__init__(
            f"the prompt is {prompt_tokens} tokens and the reply may take {max_tokens}; the model's context is "
            f"{context_tokens} tokens ({self.excess} too long): shorten the question, give fewer sources, "
            "or load the model with a larger context"
        )


def check_prompt_fits(llm: LLM, messages: Sequence[Message], max_tokens: int, context_tokens: int | None) -> int | None:
    """The prompt's tokens (None when not counted); :class:`PromptTooLongError` when it cannot fit.

    A token covers at least one byte, so a prompt whose bytes fit is not counted (no tokenizer call).
    """
    if not context_tokens:
        return None
    overhead = TEMPLATE_TOKENS_PER_MESSAGE * len(messages)
    if sum(len(m["content"].encode("utf-8")) for m in messages) + overhead + max_tokens <= context_tokens:
        return None
    tokens = sum(llm.count_tokens(m["content"]) for m in messages) + overhead
    if tokens + max_tokens > context_tokens:
        raise PromptTooLongError(tokens, max_tokens, context_tokens)
    return tokens


class LLM(ABC):
    """A chat model. Subclasses implement :meth:`chat`, :meth:`stream`, :meth:`count_tokens` and :attr:`id`.

    Backends hold resources (a server, a connection pool): call :meth:`close` or use ``with``.
    """

    @property
    @abstractmethod
    def id(self) -> str:
        """A stable name of what this model computes, e.g. ``smollm2-135m@sha256:b179…``."""

    @abstractmethod
    def chat(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> str:
        """The assistant's reply to ``messages``: at most ``max_tokens`` tokens, cut before any ``stop`` string."""

    @abstractmethod
    def stream(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> Iterator[str]:
        """The same reply as :meth:`chat`, in pieces as they are generated (joined, they equal the reply)."""

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """Number of tokens of ``text`` in this model's vocabulary (no special tokens added)."""

    def chat_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
    ) -> str:
        """The reply to ``messages``, decoding constrained to JSON text that ``schema`` accepts (greedy).

        Not abstract: a backend that cannot constrain its output raises :class:`StructuredOutputUnsupported`.
        """
        raise StructuredOutputUnsupported(f"{type(self).__name__} ({self.id}) cannot constrain its reply to a schema")

    def stream_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
    ) -> Iterator[str]:
        """:meth:`chat_json`'s reply in pieces as they are generated (default: all at once)."""
        yield self.chat_json(messages, schema, max_tokens, seed)

    def generate_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
    ) -> Any:
        """The reply to ``messages`` as the JSON value ``schema`` describes, parsed and checked.

        :class:`~ragline.models.llm.json_schema.JSONReplyError` when the reply is not such a value (cut by
        ``max_tokens``, or a backend that ignored the schema); :class:`StructuredOutputUnsupported` when the
        backend cannot constrain its output at all.
        """
        from ragline.models.llm.json_schema import parse_reply

        return parse_reply(self.chat_json(messages, schema, max_tokens, seed), schema, self.id)

    def chat_tools(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
    ) -> str:
        """The model's call of one of ``tools`` (OpenAI function definitions) through native function calling.

        Returns JSON text ``{"name": ..., "arguments": "...", "content": "..."}``: the called function's name (null
        when the model called none), its arguments as the model wrote them (JSON text, unparsed: a caller answers
        malformed arguments itself) and any text content. Not abstract: a backend without function calling raises
        :class:`StructuredOutputUnsupported` (a caller then constrains a JSON call with :meth:`chat_json`).
        """
        raise StructuredOutputUnsupported(f"{type(self).__name__} ({self.id}) has no native function calling")

    def top_logprobs(self, messages: Sequence[Message], top: int = DEFAULT_TOP_LOGPROBS, seed: int = 0) -> TopLogprobs:
        """The ``top`` likeliest first tokens of the reply to ``messages``, with their natural-log probabilities.

        Best first, as (token text, log probability) pairs. Not abstract: a backend that cannot report
        them raises :class:`~ragline.errors.ModelError` saying so.
        """
        raise ModelError(f"{type(self).__name__} ({self.id}) does not report token log probabilities")

    def chat_scored(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> ScoredReply:
        """The greedy reply to ``messages`` with each generated token's log probability.

        Not abstract: a backend that cannot report them raises :class:`~ragline.errors.ModelError` saying so.
        """
        raise ModelError(f"{type(self).__name__} ({self.id}) does not report the log probabilities of its reply")

    def close(self) -> None:
        """Release what the backend holds. Safe to call twice. (Not abstract: many backends hold nothing.)"""
        return None

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r})"
