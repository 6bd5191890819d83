"""The first reply token's top log probabilities: the local backend (llama.cpp's OpenAI fields) and the cache."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from llm_fakes import FakeLLM
from ragline.errors import ModelError
from ragline.models.llm import CachedLLM, LLMResponseCache, load_llm
from ragline.models.llm.cache import acl_scope

QUESTION = [{"role": "user", "content": "Is Paris the capital of France? Answer yes or no."}]


@pytest.fixture(scope="module")
def smollm() -> Iterator[object]:
    llm = load_llm("local:smollm2-135m")
    yield llm
    llm.close()


@pytest.mark.models
def test_local_model_reports_the_first_tokens_alternatives_best_first(smollm, tmp_path) -> None:
    top = smollm.top_logprobs(QUESTION, top=5)
    assert len(top) == 5 and len({token for token, _ in top}) == 5
    logprobs = [lp for _, lp in top]
    assert logprobs == sorted(logprobs, reverse=True) and all(lp <= 0.0 for lp in logprobs)
    # Greedy decoding writes the likeliest token: the reply's first token is the top alternative.
    assert smollm.chat(QUESTION, max_tokens=1).strip() == top[0][0].strip()
    assert smollm.top_logprobs(QUESTION, top=5) == top  # deterministic

    cached = CachedLLM(smollm, LLMResponseCache(tmp_path))
    assert cached.top_logprobs(QUESTION, 5) == top and cached.misses == 1
    assert cached.top_logprobs(QUESTION, 5) == top and cached.hits == 1
    cached.cache.close()


def test_cache_keys_logprobs_apart_from_replies_and_by_scope(tmp_path) -> None:
    class Scored(FakeLLM):
        def top_logprobs(self, messages, top=10, seed=0):
            self.calls.append(list(messages))
            return [("Yes", -0.1), ("No", -2.5)][:top]

    model = Scored(["a reply"])
    cached = CachedLLM(model, LLMResponseCache(tmp_path))
    assert cached.chat(QUESTION) == "a reply"
    assert cached.top_logprobs(QUESTION, 2) == [("Yes", -0.1), ("No", -2.5)]  # not the chat reply's entry
    assert cached.top_logprobs(QUESTION, 1) == [("Yes", -0.1)]  # another top: another request
    hr, everyone = acl_scope([["hr"]]), acl_scope([["all"]])
    cached.top_logprobs(QUESTION, 2, scope=hr)
    cached.top_logprobs(QUESTION, 2, scope=everyone)
    cached.top_logprobs(QUESTION, 2, scope=hr)
    assert len(model.calls) == 5 and cached.hits == 1  # one model call per (top, scope); only the repeat is cached
    with pytest.raises(ValueError, match="top"):
        cached.top_logprobs(QUESTION, 0)
    cached.cache.close()


def test_a_backend_without_logprobs_says_so() -> None:
    with pytest.raises(ModelError, match="does not report token log probabilities"):
        FakeLLM(["x"]).top_logprobs(QUESTION)
