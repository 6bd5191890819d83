"""The first reply token's top log probabilities: the local backend (llama.cpp's OpenAI fields) and the cache."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from llm_fakes import FakeLLM
from ragline.errors import ModelError
from ragline.models.llm import CachedLLM, LLMResponseCache, ScoredReply, load_llm
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


@pytest.mark.models
def test_local_model_scores_its_whole_reply_token_by_token(smollm, tmp_path) -> None:
    """``chat_scored``: the greedy reply (the same text ``chat`` gives) and one log probability per generated
    token, each <= 0, the first one the top first-token alternative's. Planted fault checked: reading only the
    first token's log probability (as ``top_logprobs`` does) gives one value for a reply of several tokens."""
    scored = smollm.chat_scored(QUESTION, max_tokens=12)
    assert scored.text == smollm.chat(QUESTION, max_tokens=12)
    assert len(scored.token_logprobs) == smollm.count_tokens(scored.text) > 1
    assert all(lp <= 0.0 for lp in scored.token_logprobs) and scored.logprob == sum(scored.token_logprobs)
    assert scored.token_logprobs[0] == pytest.approx(smollm.top_logprobs(QUESTION, top=1)[0][1], abs=1e-3)
    cached = CachedLLM(smollm, LLMResponseCache(tmp_path))
    assert cached.chat_scored(QUESTION, max_tokens=12) == scored and cached.misses == 1
    assert cached.chat_scored(QUESTION, max_tokens=12) == scored and cached.hits == 1
    cached.cache.close()


def test_cache_keys_scored_replies_apart_from_plain_ones(tmp_path) -> None:
    """A scored reply is stored as text and log probabilities under its own key: the plain reply to the same
    messages is not served for it, nor the other way round. Planted fault checked: keying ``chat_scored`` like
    ``chat`` serves the stored plain text, which is no JSON."""

    class Scored(FakeLLM):
        def chat_scored(self, messages, max_tokens=256, seed=0, stop=None):
            self.calls.append(list(messages))
            return ScoredReply("Yes.", (-0.25, -0.5))

    model = Scored(["a reply"])
    cached = CachedLLM(model, LLMResponseCache(tmp_path))
    assert cached.chat(QUESTION, max_tokens=8) == "a reply"
    assert cached.chat_scored(QUESTION, max_tokens=8) == ScoredReply("Yes.", (-0.25, -0.5))
    assert cached.chat_scored(QUESTION, max_tokens=8).logprob == -0.75 and len(model.calls) == 2
    assert cached.chat(QUESTION, max_tokens=8) == "a reply" and cached.hits == 2
    with pytest.raises(ModelError, match="log probabilities"):
        FakeLLM(["x"]).chat_scored(QUESTION)
    cached.cache.close()
