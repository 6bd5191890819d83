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
