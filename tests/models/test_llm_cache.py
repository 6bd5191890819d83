"""The LLM response cache: keyed by model, messages and parameters; persistent; streams stored only when done."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ragline.models.llm import LLM, CachedLLM, LLMResponseCache
from ragline.models.llm.base import Message

HELLO = [{"role": "user", "content": "Say hello."}]


class EchoLLM(LLM):
    """Answers with a description of the request; counts the calls that reached it."""

    def __init__(self, name: str = "echo") -> None:
        self.name = name
        self.calls = 0

    @property
    def id(self) -> str:
        return f"{self.name}@sha256:0000"

    def chat(
        self,
        messages: Sequence[Message],
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> str:
        self.calls += 1
        return f"{messages[-1]['content']} / {max_tokens} {temperature} {seed} {stop}"

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


def test_repeated_requests_are_answered_from_the_cache(tmp_path: Path) -> None:
    echo = EchoLLM()
    llm = CachedLLM(echo, LLMResponseCache(tmp_path))
    first = llm.chat(HELLO, max_tokens=8)
    assert llm.chat(HELLO, max_tokens=8) == first
    assert (echo.calls, llm.hits, llm.misses) == (1, 1, 1)
    # every parameter and the messages are part of the key
    llm.chat(HELLO, max_tokens=9)
    llm.chat(HELLO, max_tokens=8, temperature=0.5)
    llm.chat(HELLO, max_tokens=8, seed=1)
    llm.chat(HELLO, max_tokens=8, stop="\n")
    llm.chat([{"role": "system", "content": "Be brief."}, *HELLO], max_tokens=8)
    assert echo.calls == 6
    assert llm.count_tokens("two words") == 2 and llm.id == echo.id


def test_the_cache_survives_the_process_and_separates_models(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    with CachedLLM(EchoLLM(), LLMResponseCache(path)) as llm:
        answer = llm.chat(HELLO)
    echo = EchoLLM()
    again = CachedLLM(echo, LLMResponseCache(path))
    assert again.chat(HELLO) == answer and echo.calls == 0
    other = EchoLLM("other-model")
    CachedLLM(other, LLMResponseCache(path)).chat(HELLO)
    assert other.calls == 1
    assert again.cache.count() == 2 and again.cache.count(echo.id) == 1


def test_streams_are_cached_once_complete(tmp_path: Path) -> None:
    echo = EchoLLM()
    llm = CachedLLM(echo, LLMResponseCache(tmp_path))
    pieces = llm.stream(HELLO, max_tokens=4)
    next(pieces)
    pieces.close()  # abandoned: nothing stored
    assert llm.cache.count() == 0
    streamed = "".join(llm.stream(HELLO, max_tokens=4))
    assert list(llm.stream(HELLO, max_tokens=4)) == [streamed]  # from the cache, in one piece
    assert llm.chat(HELLO, max_tokens=4) == streamed  # chat reads what the stream stored
    assert (echo.calls, llm.hits, llm.misses) == (2, 2, 2)


def test_bad_arguments_fail_before_the_cache(tmp_path: Path) -> None:
    llm = CachedLLM(EchoLLM(), LLMResponseCache(tmp_path))
    with pytest.raises(TypeError):
        llm.chat("Say hello.")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_tokens"):
        llm.chat(HELLO, max_tokens=0)
    with pytest.raises(ValueError, match="role"):
        llm.chat([{"role": "robot", "content": "beep"}])
