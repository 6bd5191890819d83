"""The local LLM's prefix cache: one saved state of the shared prompt prefix, restored before every request.

What must hold: an answer depends only on its own prompt (the same question asked first, after another
question and after ten others gives byte-identical text), and the server reads only what comes after the
shared prefix. The tests marked ``models`` load SmolLM2-135M and keep prompts and replies short.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from ragline.answer.prompt import SYSTEM_PROMPT
from ragline.errors import ConfigError, ModelError
from ragline.models.llm import LocalLLM, Message, load_llm
from ragline.models.llm.local import MAX_PREFIX_STATES


def rag_question(i: int) -> list[Message]:
    """A tiny RAG prompt: the reader's rules, one source, one question; only the last message differs by ``i``."""
    user = (
        f"Sources:\n<source id=1>Depot {i} keeps receipts above {10 * i + 5} euros for {i + 2} years.</source>\n\n"
        f"Question: How long does depot {i} keep receipts?"
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


@pytest.fixture
def cached() -> Iterator[LocalLLM]:
    llm = load_llm("local:smollm2-135m", n_ctx=1024, prefix_cache=True)
    assert isinstance(llm, LocalLLM)
    try:
        yield llm
    finally:
        llm.close()


def timings(llm: LocalLLM, messages: Sequence[Message]) -> dict[str, Any]:
    """The server's own account of one request: ``cache_n`` tokens reused, ``prompt_n`` read."""
    with llm._prompt_state(messages):
        body = {"messages": list(messages), "max_tokens": 4, "temperature": 0.0, "seed": 0, "cache_prompt": True}
        return llm._http._post_json("/chat/completions", body)["timings"]


def test_the_two_prompt_caches_exclude_each_other() -> None:
    with pytest.raises(ConfigError, match="prompt_cache and prefix_cache exclude each other"):
        LocalLLM("no-such-model.gguf", prompt_cache=True, prefix_cache=True)
    # Asking for the prompt cache alone turns the prefix cache off instead of failing: past the check, the
    # missing file is the error.
    with pytest.raises(ModelError, match="no GGUF model file"):
        LocalLLM("no-such-model.gguf", prompt_cache=True)


@pytest.mark.models
def test_an_answer_does_not_depend_on_the_questions_before_it(cached: LocalLLM) -> None:
    answers_do_not_depend_on_earlier_questions(cached)


@pytest.mark.models
@pytest.mark.slow
def test_the_default_reader_model_does_not_depend_on_earlier_questions() -> None:
    with load_llm("local:qwen2.5-coder-0.5b", n_ctx=1024) as qwen:  # the prefix cache is the default
        assert isinstance(qwen, LocalLLM) and qwen.prefix_cache
        answers_do_not_depend_on_earlier_questions(qwen)


def answers_do_not_depend_on_earlier_questions(cached: LocalLLM) -> None:
    target = rag_question(0)
    first = cached.chat(target, max_tokens=24)
    assert first
    cached.chat(rag_question(1), max_tokens=24)
    after_one = cached.chat(target, max_tokens=24)
    for i in range(2, 12):
        cached.chat(rag_question(i), max_tokens=24)
    after_ten = cached.chat(target, max_tokens=24)
    streamed = "".join(cached.stream(target, max_tokens=24))
    assert after_one == first
    assert after_ten == first
    assert streamed == first


@pytest.mark.models
def test_only_the_shared_prefix_is_reused(cached: LocalLLM) -> None:
    # The same count of reused tokens for a new question, another one and a repeat: a cache that kept the
    # previous request (llama.cpp's prompt cache) would reuse the whole repeated prompt instead.
    first = timings(cached, rag_question(0))
    other = timings(cached, rag_question(1))
    repeat = timings(cached, rag_question(0))
    shared = cached.count_tokens(SYSTEM_PROMPT)
    assert first["cache_n"] >= shared  # the rules and the template's header are not read again
    assert first["cache_n"] == other["cache_n"] == repeat["cache_n"]
    assert repeat["prompt_n"] == first["prompt_n"] > 0  # the source and the question are read every time


@pytest.mark.models
def test_each_system_prompt_gets_its_own_state_and_old_ones_are_dropped(cached: LocalLLM) -> None:
    def asked(system: str) -> list[Message]:
        return [{"role": "system", "content": system}, {"role": "user", "content": "Say yes."}]

    reference = cached.chat(asked("Answer in one word."), max_tokens=4)
    for i in range(MAX_PREFIX_STATES + 1):
        cached.chat(asked(f"Rule {i}: answer in one word."), max_tokens=4)
    assert cached._slot_dir is not None
    saved = list(Path(cached._slot_dir.name).iterdir())
    assert len(saved) == MAX_PREFIX_STATES
    assert cached.chat(asked("Answer in one word."), max_tokens=4) == reference  # rebuilt, the same answer


@pytest.mark.models
def test_close_removes_the_saved_states() -> None:
    llm = load_llm("local:smollm2-135m", n_ctx=512, prefix_cache=True)
    assert isinstance(llm, LocalLLM) and llm._slot_dir is not None
    folder = llm._slot_dir.name
    llm.chat(rag_question(0), max_tokens=2)
    llm.close()
    assert not os.path.exists(folder)
