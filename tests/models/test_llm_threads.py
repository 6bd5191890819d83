"""Prompt reading runs on every usable core, generation on one less; the answer does not depend on it."""

from __future__ import annotations

import os

import pytest

from ragline.models.llm import load_llm
from ragline.models.llm.local import default_batch_threads, default_threads

QUESTION = [{"role": "user", "content": "Name the largest planet of the solar system, then its colour."}]


def test_prompt_reading_uses_every_usable_core() -> None:
    cores = len(os.sched_getaffinity(0))
    assert default_batch_threads() == max(1, min(cores, 8))
    assert default_batch_threads() >= default_threads()


@pytest.mark.models
def test_the_answer_is_the_same_whatever_threads_read_the_prompt() -> None:
    answers = {}
    for batch_threads in (1, 2):
        llm = load_llm("local:smollm2-135m", n_ctx=1024, n_threads=1, n_batch_threads=batch_threads)
        try:
            assert llm.n_batch_threads == batch_threads
            answers[batch_threads] = llm.chat(QUESTION, max_tokens=24)
        finally:
            llm.close()
    assert answers[1] and answers[1] == answers[2]


def test_a_local_spec_carries_its_options_and_refuses_unknown_ones() -> None:
    from ragline.errors import ConfigError
    from ragline.models.llm.load import local_options

    assert local_options("qwen2.5-coder-0.5b") == ("qwen2.5-coder-0.5b", {})
    name, options = local_options("smollm2-135m?threads=1&batch_threads=2&context=1024&prefix_cache=false&timeout=30")
    assert name == "smollm2-135m"
    assert options == {"n_threads": 1, "n_batch_threads": 2, "n_ctx": 1024, "prefix_cache": False, "timeout_s": 30.0}
    with pytest.raises(ConfigError, match="unknown option 'colour'; known: threads"):
        local_options("smollm2-135m?colour=red")
    with pytest.raises(ConfigError, match="prefix_cache='maybe' is not a valid value"):
        local_options("smollm2-135m?prefix_cache=maybe")


@pytest.mark.models
def test_a_pipeline_names_the_threads_and_cache_of_its_local_model_in_the_spec() -> None:
    llm = load_llm("local:smollm2-135m?threads=1&batch_threads=1&context=1024&prefix_cache=0")
    try:
        assert (llm.n_threads, llm.n_batch_threads, llm.n_ctx, llm.prefix_cache) == (1, 1, 1024, False)
        assert llm.chat(QUESTION, max_tokens=8)
    finally:
        llm.close()
