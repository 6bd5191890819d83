"""A local GGUF model run by llama.cpp on the CPU, through the ``xllamacpp`` wheel.

How: :class:`LocalLLM` starts an ``xllamacpp.Server`` inside this process. That object loads the model
and serves llama.cpp's OpenAI-compatible API on ``127.0.0.1`` (a free port, chosen by the server), and
:class:`~ragline.models.llm.http.HttpLLM` talks to it. Why a server rather than calling the model
directly: llama.cpp's server already does the chat template, greedy/seeded sampling, stop strings,
streaming, tokenizing and request queueing, and going through HTTP means the local and the remote backend
share one client, one parser and one set of tests; the loopback round trip costs about a millisecond
against seconds of generation. Why in the process rather than as a child process: nothing to spawn, find
or kill; dropping the object (``close()``) stops the server. The port is guarded by a random API key, so
that other processes on the machine can't use the model.

Determinism: one request is decoded at a time (``n_parallel=1``), decoding is greedy at temperature 0,
and llama.cpp's prompt cache is off by default (``prompt_cache=False``). With the cache on, a prompt that
shares a prefix with the previous one skips recomputing it, and the logits then come from another batch
shape, which can flip a near-tie: an answer would depend on which question ran before it.

The prefix cache (``prefix_cache=True``, the default unless ``prompt_cache`` is on) saves prompt reading
without that dependence. The part of a chat prompt that comes before the last message's text (the system
message and the chat template's header; for a RAG reader, the rules that every question shares) is
evaluated once, alone and from an empty context, and llama.cpp's slot state after it is saved to a file
(the server's slot save/restore). Before every request that state is restored, so each request starts
from the same KV entries, whatever ran before it, and the server reads only the tokens after the shared
prefix. The answer can still differ from an uncached run in a near-tie (the rest of the prompt is read in
other batches), but it is the same every time the same prompt is asked.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragline.errors import ConfigError, ModelError
from ragline.models.gguf import verify_file
from ragline.models.llm.base import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TOP_LOGPROBS,
    LLM,
    Message,
    ScoredReply,
    TopLogprobs,
    check_messages,
)
from ragline.models.llm.http import HttpLLM, require_httpx
from ragline.models.weights import sha256_file

DEFAULT_CONTEXT = 8192  # tokens; a RAG prompt with 10 passages needs 2-4 k
MAX_PREFIX_STATES = 8  # saved prompt prefixes kept per model (~12 KB per token each for Qwen2.5-0.5B)


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may use (containers, taskset)
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def default_threads() -> int:
    """One core less than the usable ones (at least 1, at most 8).

    Measured here (2 shared cores, other work running, OMP_WAIT_POLICY=PASSIVE), Qwen2.5-0.5B generated
    ~19 tokens/s with 1 thread and with 2, and read prompts at ~45 vs ~50-70 tokens/s; but with 2 threads
    generation swung from 7 to 21 tokens/s, since llama.cpp's threads meet at a barrier after every
    operation and one preempted thread stalls the others. Leaving a core free costs little and keeps the
    rest of the pipeline (retrieval, the server's HTTP threads, other users) responsive. Beyond 8 threads
    a model this size is bound by memory bandwidth.
    """
    return max(1, min(_cpu_count() - 1, 8))


def default_batch_threads() -> int:
    """Threads that read the prompt: every usable core (at most 8).

    Reading a prompt is one large matrix product per layer, not a token-by-token loop, so a preempted
    thread costs it a share of the work rather than a stall at every step; on 2 shared cores a
    1,089-token Orrin prompt took ~11 s before the first token with 1 thread and 7.4-9.9 s with 2.
    Generation keeps :func:`default_threads`.
    """
    return max(1, min(_cpu_count(), 8))


def import_xllamacpp() -> Any:
    """The xllamacpp module, imported with OMP_WAIT_POLICY=PASSIVE unless the environment says otherwise."""
    # The wheel's llama.cpp uses OpenMP, whose threads spin while they wait by default: on 2 shared cores
    # that burnt the time the other thread needed (Qwen fell from ~19 to 3-8 tokens/s). The runtime reads
    # the variable when the library loads, so it is set before the first import.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import xllamacpp
    except ImportError:
        raise ModelError("the local LLM backend needs xllamacpp: pip install 'ragline[llm]'") from None
    return xllamacpp


class LocalLLM(LLM):
    """A GGUF chat model served by an in-process llama.cpp server on loopback.

    ``expected_sha256`` (when given) is checked before loading. ``n_ctx`` is the context in tokens
    (prompt and reply together; 0 = the model's own). ``n_threads`` (generation) defaults to
    :func:`default_threads`, ``n_batch_threads`` (prompt reading) to :func:`default_batch_threads`.
    ``prefix_cache`` restores one saved state of the prompt before the last message's text for every
    request (see the module's docstring); ``prompt_cache`` instead lets llama.cpp reuse whatever the
    previous request left (faster, but answers depend on the order). At most one of the two; the prefix
    cache is on unless ``prompt_cache`` is (None: ``not prompt_cache``).
    ``timeout_s`` / ``total_timeout_s`` bound one read / one call, as in :class:`HttpLLM`.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        name: str | None = None,
        expected_sha256: str | None = None,
        n_ctx: int = DEFAULT_CONTEXT,
        n_threads: int | None = None,
        n_batch_threads: int | None = None,
        prompt_cache: bool = False,
        prefix_cache: bool | None = None,
        timeout_s: float = 300.0,
        total_timeout_s: float = 900.0,
        startup_timeout_s: float = 120.0,
    ) -> None:
        if prefix_cache is None:
            prefix_cache = not prompt_cache
        if prompt_cache and prefix_cache:
            raise ConfigError(
                "LocalLLM: prompt_cache and prefix_cache exclude each other (the first reuses what the previous "
                "request left, the second restores one saved prefix before each request): turn one off"
            )
        path = Path(model_path).expanduser().resolve()
        if expected_sha256:
            verify_file(path, expected_sha256)
            self.weights_sha256 = expected_sha256.lower()
        elif path.is_file():
            self.weights_sha256 = sha256_file(path)
        else:
            raise ModelError(f"no GGUF model file at {path}")
        self.path = path
        self.name = name or path.stem
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.n_batch_threads = n_batch_threads or default_batch_threads()
        self.prefix_cache = prefix_cache
        # A restored prefix must stay in the slot until its request ran. Reentrant: a caller that asks the
        # model again while reading a stream queues behind the stream at the server, as without the cache.
        self._slot_lock = threading.RLock()
        self._prefix_files: OrderedDict[str, str] = OrderedDict()  # prefix digest -> its state's file name
        self._slot_dir = tempfile.TemporaryDirectory(prefix="ragline-llm-prefix-") if prefix_cache else None

        xllamacpp = import_xllamacpp()
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.model_alias = {self.name}  # what the server reports as the model name
        params.n_ctx = n_ctx
        params.n_parallel = 1  # one sequence at a time: concurrent callers queue, outputs stay reproducible
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_batch_threads
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # a free port, picked by the server
        key = secrets.token_urlsafe(24)
        params.api_keys = [key]
        params.ui = False
        params.verbosity = 0  # llama.cpp logs every request on stderr otherwise
        if self._slot_dir is not None:
            params.slot_save_path = self._slot_dir.name + os.sep  # the server appends the file name as it is
            # The server's RAM prompt cache keeps the states of earlier requests for reuse: exactly what the
            # prefix cache must never be handed. Reuse of it was not seen with this build (the tests check that
            # only the prefix is reused), but it is not needed here and would hold up to 8 GiB.
            params.cache_ram_mib = 0
        try:
            self._server: Any = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise ModelError(
                f"llama.cpp could not load {path} ({exc}): is it a GGUF chat model, and does a context of "
                f"{n_ctx} tokens fit in memory?"
            ) from None
        address = self._server.listening_address
        self._wait_ready(address, startup_timeout_s)
        self._http = HttpLLM(
            f"{address}/v1",
            self.name,
            api_key=key,
            timeout_s=timeout_s,
            total_timeout_s=total_timeout_s,
            retries=1,  # a local server that fails twice is broken, not busy
            # with the prefix cache, the server reuses the restored prefix (and only it: see _prompt_state)
            extra_body={"cache_prompt": prompt_cache or prefix_cache},
            model_id=self.id,
            context_tokens=n_ctx or None,  # 0: the model's own, unknown here (the server then says so)
        )

    def _wait_ready(self, address: str, timeout_s: float) -> None:
        # The constructor loads the model before it returns, so this is normally one request; the loop guards
        # against a server that is still warming up (503), bounded in time.
        httpx = require_httpx()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if httpx.get(f"{address}/health", timeout=5.0, trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.close()
                raise ModelError(f"the llama.cpp server for {self.path} was not ready after {timeout_s:g} s")
            time.sleep(0.1)

    @property
    def id(self) -> str:
        return f"{self.name}@sha256:{self.weights_sha256}"

    @property
    def address(self) -> str:
        """The server's ``http://127.0.0.1:PORT`` (requests need the API key, which only this object has)."""
        return self._server.listening_address if self._server is not None else ""

    def chat(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> str:
        client = self._client()
        with self._prompt_state(messages):
            return client.chat(messages, max_tokens, temperature, seed, stop)

    def stream(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> Iterator[str]:
        pieces = self._client().stream(messages, max_tokens, temperature, seed, stop)  # checked now, sent at next()
        return self._streamed(messages, pieces) if self.prefix_cache else pieces

    def _streamed(self, messages: Sequence[Message], pieces: Iterator[str]) -> Iterator[str]:
        # A generator, so the prefix is restored when the request is sent and the slot stays locked until the
        # stream ends or is closed (a caller that stops reading closes it, which releases the lock).
        with self._prompt_state(messages):
            yield from pieces

    def chat_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
    ) -> str:
        """The reply decoded under the grammar llama.cpp's server compiles from ``schema`` (``response_format``)."""
        client = self._client()
        with self._prompt_state(messages):
            return client.chat_json(messages, schema, max_tokens, seed)

    def stream_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
    ) -> Iterator[str]:
        pieces = self._client().stream_json(messages, schema, max_tokens, seed)
        return self._streamed(messages, pieces) if self.prefix_cache else pieces

    def top_logprobs(self, messages: Sequence[Message], top: int = DEFAULT_TOP_LOGPROBS, seed: int = 0) -> TopLogprobs:
        client = self._client()
        with self._prompt_state(messages):
            return client.top_logprobs(messages, top, seed)

    def chat_scored(
        self,
        messages: Sequence[Message],
        max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0,
        stop: str | Sequence[str] | None = None,
    ) -> ScoredReply:
        client = self._client()
        with self._prompt_state(messages):
            return client.chat_scored(messages, max_tokens, seed, stop)

    def count_tokens(self, text: str) -> int:
        return self._client().count_tokens(text)

    @contextmanager
    def _prompt_state(self, messages: Sequence[Message]) -> Iterator[None]:
        """Hold the slot, with the saved state of ``messages``' shared prefix restored into it (prefix cache)."""
        if not self.prefix_cache:
            yield
            return
        check_messages(messages)  # a malformed request fails here as without the cache, before any prefix is read
        with self._slot_lock:
            self._slot_action("restore", self._prefix_state(messages))
            yield

    def _prefix_state(self, messages: Sequence[Message]) -> str:
        """The file name of the saved state of the prompt up to the last message's text (built on first use).

        The prefix is rendered by the server's own chat template from the same messages with the last one's
        text left empty, so no template is assumed here; the server reuses only the tokens that the real prompt
        shares with it (the empty message's closing tokens are read again). It is evaluated from an erased slot,
        never on top of another request's state, so the saved entries depend only on the prefix.
        """
        prefix = [*messages[:-1], {**messages[-1], "content": ""}]
        digest = hashlib.sha256(json.dumps(prefix, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
        name = self._prefix_files.get(digest)
        if name is not None:
            self._prefix_files.move_to_end(digest)
            return name
        name = f"prefix-{digest[:32]}.bin"
        self._slot_action("erase")
        self._http.chat(prefix, max_tokens=1)
        self._slot_action("save", name)
        self._prefix_files[digest] = name
        if len(self._prefix_files) > MAX_PREFIX_STATES:
            _, oldest = self._prefix_files.popitem(last=False)
            if self._slot_dir is not None:
                Path(self._slot_dir.name, oldest).unlink(missing_ok=True)
        return name

    def _slot_action(self, action: str, filename: str | None = None) -> None:
        """llama.cpp's ``POST /slots/0?action=save|restore|erase`` (the only slot: ``n_parallel=1``)."""
        body = {"filename": filename} if filename else {}
        self._http._post_json(f"/slots/0?action={action}", body, base=self.address, retries=0)

    def _client(self) -> HttpLLM:
        if self._server is None:
            raise ModelError(f"{self.name} was closed; load it again")
        return self._http

    def close(self) -> None:
        """Stop the server and free the model. Safe to call twice."""
        http = getattr(self, "_http", None)
        if http is not None:
            http.close()
        # Dropping the last reference runs the server's destructor: it stops listening and frees the model.
        self._server = None
        slot_dir = getattr(self, "_slot_dir", None)
        if slot_dir is not None:
            slot_dir.cleanup()
