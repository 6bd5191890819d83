"""Which LLM a spec string means, and :func:`load_llm` to build it.

Specs:

* ``local:qwen2.5-coder-0.5b`` (the default): Qwen2.5-Coder-0.5B-Instruct Q4_K_M, packaged (see ``gguf.py``).
* ``local:smollm2-135m``: SmolLM2-135M-Instruct Q4_1, packaged; fast and weak, for smoke tests.
* ``local:/path/to/model.gguf``: any GGUF chat model on disk (``~`` is expanded).
* A local spec takes options as a query: ``local:qwen2.5-coder-0.5b?threads=2&prefix_cache=false``, with
  ``threads`` (generation), ``batch_threads`` (prompt reading), ``context`` (tokens), ``prefix_cache`` and
  ``timeout`` (seconds a request may take), so a pipeline file or ``--llm`` can set them.
* ``openai:http://127.0.0.1:8080/v1?model=NAME``: an OpenAI-compatible server; the API key is read
  from ``$OPENAI_API_KEY`` when set. Optional query fields: ``timeout`` (seconds a read may take),
  ``retries`` and ``context`` (the model's context in tokens: a prompt too long for it fails before sending).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

from ragline.errors import ConfigError, ModelError
from ragline.models.gguf import PACKAGED_GGUF, packaged_gguf_path
from ragline.models.llm.base import LLM

DEFAULT_LLM = "local:qwen2.5-coder-0.5b"
SPEC_FORMS = (
    "local:qwen2.5-coder-0.5b (the default)",
    "local:smollm2-135m",
    "local:/path/to/model.gguf",
    "openai:http://HOST:PORT/v1?model=NAME",
)


def load_llm(spec: str | None = None, **options: Any) -> LLM:
    """The LLM a spec names (see the module's docstring); None or ``""`` means :data:`DEFAULT_LLM`.

    ``options`` go to the backend's constructor: :class:`~ragline.models.llm.local.LocalLLM` (``n_ctx``,
    ``n_threads``, ``prompt_cache``, ``timeout_s``, ...; packaged models also take ``models_dir``, where
    a joined model is kept) or :class:`~ragline.models.llm.http.HttpLLM` (``timeout_s``, ``retries``, ...).
    Each call starts its own local server: keep the object, and ``close()`` it when done.
    """
    spec = (spec or DEFAULT_LLM).strip()
    scheme, _, rest = spec.partition(":")
    scheme = scheme.lower()
    if scheme == "local" and rest:
        return _local(rest, options)
    if scheme == "openai" and rest:
        return _openai(rest, options)
    raise ConfigError(f"unknown LLM spec {spec!r}; use one of: {', '.join(SPEC_FORMS)}")


_shared: dict[str, Any] = {}
_shared_lock = threading.Lock()


def shared_llm(spec: str | None = None) -> Any:
    """One :class:`~ragline.models.llm.CachedLLM` per spec in this process, loaded on first use.

    For components built from specs (an LLM query transform, an LLM reranker) that are given no model:
    several of them in one pipeline share the loaded weights and the reply cache instead of each
    starting a server. It lives until the process ends.
    """
    from ragline.models.llm.cache import CachedLLM

    key = (spec or DEFAULT_LLM).strip()
    with _shared_lock:
        if key not in _shared:
            _shared[key] = CachedLLM(load_llm(key))
        return _shared[key]


# A local spec's query fields: name -> (LocalLLM's argument, how the text is read).
LOCAL_OPTIONS: dict[str, tuple[str, Any]] = {
    "threads": ("n_threads", int),
    "batch_threads": ("n_batch_threads", int),
    "context": ("n_ctx", int),
    "prefix_cache": ("prefix_cache", lambda text: {"1": True, "true": True, "0": False, "false": False}[text.lower()]),
    "timeout": ("timeout_s", float),
}


def local_options(name: str) -> tuple[str, dict[str, Any]]:
    """(model name or path, LocalLLM arguments) of a local spec's ``NAME?key=value&...``."""
    if "?" not in name or Path(name).expanduser().is_file():
        return name, {}
    name, _, query = name.partition("?")
    options: dict[str, Any] = {}
    for key, values in parse_qs(query, keep_blank_values=True).items():
        if key not in LOCAL_OPTIONS:
            raise ConfigError(f"local:{name}: unknown option {key!r}; known: {', '.join(LOCAL_OPTIONS)}")
        argument, read = LOCAL_OPTIONS[key]
        try:
            options[argument] = read(values[-1])
        except (KeyError, ValueError):
            raise ConfigError(f"local:{name}: {key}={values[-1]!r} is not a valid value") from None
    return name, options


def _local(name: str, options: dict[str, Any]) -> LLM:
    from ragline.models.llm.local import LocalLLM  # imports nothing heavy until a local model is asked for

    name, given = local_options(name)
    options = {**given, **options}  # arguments passed in code win over the spec's
    models_dir = options.pop("models_dir", None)  # only packaged models are joined into a folder
    packaged = PACKAGED_GGUF.get(name.lower())
    if packaged is not None:
        path = packaged_gguf_path(packaged.name, models_dir)
        return LocalLLM(path, name=packaged.name, expected_sha256=packaged.sha256, **options)
    path = Path(name).expanduser()
    if path.is_file():
        return LocalLLM(path, **options)
    if path.suffix.lower() == ".gguf" or "/" in name:
        raise ModelError(f"no GGUF model file at {path}")
    raise ModelError(
        f"unknown local LLM {name!r}: the packaged ones are {', '.join(PACKAGED_GGUF)}; or give a .gguf path"
    )


def _openai(url: str, options: dict[str, Any]) -> LLM:
    from ragline.models.llm.http import HttpLLM

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"openai:{url}: expected a URL like http://127.0.0.1:8080/v1?model=NAME")
    query = {key: values[-1] for key, values in parse_qs(parts.query, keep_blank_values=True).items()}
    model = query.pop("model", None) or None
    try:
        if "timeout" in query:
            options.setdefault("timeout_s", float(query.pop("timeout")))
        if "retries" in query:
            options.setdefault("retries", int(query.pop("retries")))
        if "context" in query:
            options.setdefault("context_tokens", int(query.pop("context")))
    except ValueError as exc:
        raise ConfigError(f"openai:{url}: {exc}") from None
    if query:
        unknown = ", ".join(sorted(query))
        raise ConfigError(f"openai:{url}: unknown field(s) {unknown}; known: model, timeout, retries, context")
    base_url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    options.setdefault("api_key", os.environ.get("OPENAI_API_KEY") or None)
    return HttpLLM(base_url, model, **options)
