"""LLMs behind one small interface: a local GGUF model (llama.cpp via xllamacpp) or an OpenAI-compatible server.

>>> from ragline.models.llm import CachedLLM, load_llm
>>> llm = CachedLLM(load_llm("local:smollm2-135m"))  # answers cached in $RAGLINE_CACHE or ~/.cache/ragline
>>> llm.chat([{"role": "user", "content": "Name a prime number."}], max_tokens=16)  # greedy: deterministic
>>> llm.close()

Modules: ``base`` (the :class:`LLM` interface), ``local`` (in-process llama.cpp server), ``http`` (any
OpenAI-compatible server, retries and timeouts), ``cache`` (responses on disk), ``load`` (specs),
``json_schema`` (replies constrained to a schema).
The packaged weights are located and verified by :mod:`ragline.models.gguf`. httpx and xllamacpp are the
``llm`` extra; they are imported only when a backend is built.
"""

from __future__ import annotations

from ragline.models.llm.base import (
    LLM,
    GenerationParams,
    Message,
    PromptTooLongError,
    ScoredReply,
    StructuredOutputUnsupported,
    TopLogprobs,
    check_messages,
    check_prompt_fits,
)
from ragline.models.llm.cache import CachedLLM, LLMResponseCache, default_llm_cache_path
from ragline.models.llm.http import HttpLLM, LLMConnectionError, LLMContextExceededError, LLMHTTPError
from ragline.models.llm.json_schema import JSONReplyError, parse_reply
from ragline.models.llm.load import DEFAULT_LLM, SPEC_FORMS, load_llm, shared_llm
from ragline.models.llm.local import LocalLLM

__all__ = [
    "DEFAULT_LLM",
    "LLM",
    "SPEC_FORMS",
    "CachedLLM",
    "GenerationParams",
    "HttpLLM",
    "JSONReplyError",
    "LLMConnectionError",
    "LLMContextExceededError",
    "LLMHTTPError",
    "LLMResponseCache",
    "LocalLLM",
    "Message",
    "PromptTooLongError",
    "ScoredReply",
    "StructuredOutputUnsupported",
    "TopLogprobs",
    "check_messages",
    "check_prompt_fits",
    "default_llm_cache_path",
    "load_llm",
    "parse_reply",
    "shared_llm",
]
