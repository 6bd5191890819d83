"""The LLM response cache: keyed by model, messages and parameters; persistent; streams stored only when done."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_fakes import FakeLLM
from ragline.models.llm import CachedLLM, LLMResponseCache

HELLO = [{"role": "user", "content": "Say hello."}]


def echo_llm(name: str = "echo") -> FakeLLM:
    """Answers with a description of the request (its last message and every generation parameter)."""
    return FakeLLM(
        lambda messages, max_tokens, temperature, seed, stop: (
            f"{messages[-1]['content']} / {max_tokens} {temperature} {seed} {stop}"
        ),
        model_id=f"{name}@sha256:0000",
    )


def test_repeated_requests_are_answered_from_the_cache(tmp_path: Path) -> None:
    echo = echo_llm()
    llm = CachedLLM(echo, LLMResponseCache(tmp_path))
    first = llm.chat(HELLO, max_tokens=8)
    assert llm.chat(HELLO, max_tokens=8) == first
    assert (len(echo.calls), llm.hits, llm.misses) == (1, 1, 1)
    # every parameter and the messages are part of the key
    llm.chat(HELLO, max_tokens=9)
    llm.chat(HELLO, max_tokens=8, temperature=0.5)
    llm.chat(HELLO, max_tokens=8, seed=1)
    llm.chat(HELLO, max_tokens=8, stop="\n")
    llm.chat([{"role": "system", "content": "Be brief."}, *HELLO], max_tokens=8)
    assert len(echo.calls) == 6
    assert llm.count_tokens("two words") == 2 and llm.id == echo.id


def test_the_cache_survives_the_process_and_separates_models(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    with CachedLLM(echo_llm(), LLMResponseCache(path)) as llm:
        answer = llm.chat(HELLO)
    echo = echo_llm()
    again = CachedLLM(echo, LLMResponseCache(path))
    assert again.chat(HELLO) == answer and len(echo.calls) == 0
    other = echo_llm("other-model")
    CachedLLM(other, LLMResponseCache(path)).chat(HELLO)
    assert len(other.calls) == 1
    assert again.cache.count() == 2 and again.cache.count(echo.id) == 1


def test_streams_are_cached_once_complete(tmp_path: Path) -> None:
    echo = echo_llm()
    llm = CachedLLM(echo, LLMResponseCache(tmp_path))
    pieces = llm.stream(HELLO, max_tokens=4)
    next(pieces)
    pieces.close()  # abandoned: nothing stored
    assert llm.cache.count() == 0
    streamed = "".join(llm.stream(HELLO, max_tokens=4))
    assert list(llm.stream(HELLO, max_tokens=4)) == [streamed]  # from the cache, in one piece
    assert llm.chat(HELLO, max_tokens=4) == streamed  # chat reads what the stream stored
    assert (len(echo.calls), llm.hits, llm.misses) == (2, 2, 2)


def test_bad_arguments_fail_before_the_cache(tmp_path: Path) -> None:
    llm = CachedLLM(echo_llm(), LLMResponseCache(tmp_path))
    with pytest.raises(TypeError):
        llm.chat("Say hello.")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_tokens"):
        llm.chat(HELLO, max_tokens=0)
    with pytest.raises(ValueError, match="role"):
        llm.chat([{"role": "robot", "content": "beep"}])


def test_a_schema_constrained_reply_is_cached_under_its_schema(tmp_path: Path) -> None:
    """Planted fault: a key without the schema serves a free-text reply (or another schema's) to a JSON request."""
    fake = FakeLLM(lambda messages, *rest: '{"a": 1}' if len(fake.schemas) == 1 else '{"b": 2}', structured=True)
    cached = CachedLLM(fake, LLMResponseCache(tmp_path))
    messages = [{"role": "user", "content": "x"}]
    first = {"type": "object", "properties": {"a": {"type": "integer"}}}
    second = {"type": "object", "properties": {"b": {"type": "integer"}}}
    assert cached.generate_json(messages, first) == {"a": 1}
    assert cached.generate_json(messages, first) == {"a": 1} and cached.hits == 1
    assert cached.generate_json(messages, second) == {"b": 2} and cached.misses == 2
