"""LLM-written chunk context: Anthropic's Contextual Retrieval, on a local model.

Anthropic, "Introducing Contextual Retrieval" (2024): before a chunk is indexed, a model reads the whole
document and the chunk and writes "a short succinct context to situate this chunk within the overall
document" (50-100 tokens), which is prepended to the chunk for both BM25 and embeddings. Where the
breadcrumb of ``context.py`` says only *where* a chunk sits (``[Travel Policy > Receipts]``), the model
can also say *what* the surrounding document establishes (which policy, which product, which year).

:class:`LLMContextualizer` sets ``index_text = context + " " + text``; ``text`` is never changed, so the
reader still sees and cites only what the source says. Built by name in ``build_contextualizer``::

    llm                                  the default local model (Qwen2.5-Coder-0.5B)
    llm:model=local:smollm2-135m         any ``load_llm`` spec; also prompt=anthropic|small, max_tokens=,
                                         context_tokens=, prompt_cache=1 (see below), breadcrumb=1
                                         (``[Title > Section]`` before the model's sentences)

Design choices:

* **The document comes first, then the chunk** (one user message, as in Anthropic's prompt), so that all
  the chunks of a document share a prompt prefix that llama.cpp's prompt cache could reuse.
* **llama.cpp's prompt cache stays off by default.** With it on, a chunk's prompt reuses the document's
  KV entries computed for the previous chunk, in another batch split, which can flip a near-tie in greedy
  decoding: a chunk's context would then depend on which request ran before it (and a run resumed from
  the response cache would write different contexts than an uninterrupted one). The measured tables
  must be reproducible from scratch, so the default pays the full prompt for every chunk (on Orrin Grid,
  92 k prompt tokens instead of 51 k). ``prompt_cache=1`` trades that for speed.
* **Caching is the LLM response cache** (:class:`~ragline.models.llm.CachedLLM`), not a second cache.
  Its key is sha256(model id, messages, generation parameters), and the messages are the document (or
  its excerpt) and the chunk, so it is keyed by the document and chunk contents and the model, as a
  dedicated (document hash, chunk hash, model) cache would be, and in addition by the prompt wording,
  the excerpt and ``max_tokens``: changing any of those can never return a stale context. The key also
  holds the document's ACL (``acl_scope``), and each chunk keeps its document's ``acl``, so an LLM-written
  context is never served for, nor readable beyond, a document under another ACL. The raw answer
  is stored; the clean-up (:func:`tidy`) is applied after, so changing it needs no regeneration.
  A rerun still loads the model (a few seconds), because truncation counts tokens with its tokenizer.
* **A document too long for the model's context** is cut to an excerpt around the chunk (the title is
  kept, cuts are marked ``[…]``), sized with ``llm.count_tokens``; the chunk itself is always whole.
* **The prompt is Anthropic's, reworded for a small model** (``prompt=anthropic`` keeps it verbatim).

Measured on Orrin Grid (``ragline experiment chunking``, fixed:size=100,overlap=30, Qwen2.5-Coder-0.5B;
``benchmarks/results/chunking_llm_context*.json``), Hit@1 over all question types, bm25 / dense / hybrid:
none 0.69 / 0.72 / 0.86, breadcrumb 0.69 / 0.74 / 0.88; LLM context with Anthropic's wording 0.66 / 0.67
/ 0.73 (37% of the contexts echo the instruction, and an incident's summary draws the other incidents'
questions); with the ``small`` wording 0.79 / 0.64 / 0.88; ``small`` plus ``breadcrumb=1`` 0.82 / 0.75 /
0.90. So a 0.5B model's context helps BM25, not dense retrieval, and a free breadcrumb gets most of it.
Generating the 199 contexts took ~25-35 minutes on 2 busy CPU cores.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

from ragline.components import register
from ragline.errors import ConfigError
from ragline.ingest.context import PrefixContextualizer, breadcrumb
from ragline.models.llm import DEFAULT_LLM, LLM, CachedLLM, Message, load_llm
from ragline.models.llm.cache import acl_scope
from ragline.progress import track
from ragline.specs import parse_spec
from ragline.types import Document

DEFAULT_MAX_TOKENS = 64  # one or two sentences; every generated token costs ~50 ms on a CPU
DEFAULT_CONTEXT_TOKENS = 4096  # when the model does not say its context length (an HTTP server)
# Tokens the chat template adds around our text (role markers, a default system prompt like Qwen's).
TEMPLATE_MARGIN = 64

# The prompt is split so that the document part is a prefix shared by all of a document's chunks.
DOCUMENT_PROMPT = "<document>\n{document}\n</document>\n"
CHUNK_PROMPTS = {
    # Anthropic's wording, verbatim.
    "anthropic": (
        "Here is the chunk we want to situate within the whole document\n"
        "<chunk>\n{chunk}\n</chunk>\n"
        "Please give a short succinct context to situate this chunk within the overall document for the "
        "purposes of improving search retrieval of the chunk. Answer only with the succinct context and "
        "nothing else."
    ),
    # The default, for small models: Qwen2.5-0.5B answered Anthropic's wording with an echo of the
    # instruction ("This chunk sitsuate within the overall document for the purposes of ...") for 73 of
    # Orrin Grid's 199 chunks. Asking for the document's name and the chunk's subject, and forbidding the
    # echo, gave none (see "Measured" in the module docstring).
    "small": (
        "Here is a chunk of that document\n"
        "<chunk>\n{chunk}\n</chunk>\n"
        "In one or two sentences, say which document this chunk comes from and what it is about, so that "
        "the chunk can be found by search. Do not repeat these instructions."
    ),
}
DEFAULT_PROMPT = "small"
ELLIPSIS = "[…]"


class LLMContextualizer(PrefixContextualizer):
    """Prefixes each chunk with one or two sentences an LLM writes from the whole document.

    ``llm`` is a model object (wrapped in a :class:`CachedLLM` unless it is one); without it ``model``
    (a ``load_llm`` spec, default the local Qwen) is loaded on first use, so that building a pipeline
    loads nothing. ``context_tokens`` is the prompt + answer budget (default: the model's ``n_ctx``).
    """

    name: ClassVar[str] = "llm"

    def __init__(
        self,
        llm: LLM | None = None,
        *,
        model: str = DEFAULT_LLM,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        context_tokens: int | None = None,
        prompt_cache: bool = False,
        prompt: str = DEFAULT_PROMPT,
        breadcrumb: bool = False,
    ) -> None:
        if max_tokens < 1:
            raise ConfigError(f"llm context: max_tokens must be positive, got {max_tokens}")
        if prompt not in CHUNK_PROMPTS:
            raise ConfigError(f"llm context: unknown prompt {prompt!r}; choose one of {', '.join(CHUNK_PROMPTS)}")
        self._llm = None if llm is None else CachedLLM.wrap(llm)
        self.model = model
        self.max_tokens = max_tokens
        self.context_tokens = context_tokens
        self.prompt_cache = prompt_cache
        self.prompt = prompt
        self.breadcrumb = breadcrumb

    @classmethod
    def from_spec(cls, spec: str) -> LLMContextualizer:
        """``llm`` or ``llm:model=local:smollm2-135m,prompt=small,max_tokens=48,context_tokens=2048,prompt_cache=1``."""
        name, params = parse_spec(spec, "contextualizer")
        if name.lower() != cls.name:
            raise ConfigError(f"contextualizer {spec!r} is not an llm spec")
        return llm_contextualizer(**params)

    @property
    def llm(self) -> CachedLLM:
        if self._llm is None:
            # Only the local backend has a prompt cache to switch; an HTTP server decides for itself.
            options = {"prompt_cache": True} if self.prompt_cache else {}
            self._llm = CachedLLM(load_llm(self.model, **options))
        return self._llm

    def config(self) -> dict[str, Any]:
        model = self._llm.id if self._llm is not None else self.model
        return {
            "llm": model,
            "prompt": self.prompt,
            "max_tokens": self.max_tokens,
            "prompt_cache": self.prompt_cache,
            "breadcrumb": self.breadcrumb,
        }

    def contextualize(self, document: Document, chunks: list[Document]) -> tuple[list[Document], None]:
        # PrefixContextualizer's loop, under a progress bar: generation takes seconds a chunk on a CPU.
        out = []
        for chunk in track(chunks, f"llm context ({document.id})", total=len(chunks)):
            context = self.context_for(document, chunk)
            out.append(replace(chunk, index_text=f"{context} {chunk.text}" if context else chunk.text))
        return out, None

    def context_for(self, document: Document, chunk: Document) -> str:
        # Scoped by the document's ACL: the context is derived from it, so it is served only for a document
        # under the same ACL (the chunk, which carries the document's acl, inherits it in the index).
        scope = acl_scope([document.metadata.get("acl")])
        reply = self.llm.chat(self.messages(document, chunk), max_tokens=self.max_tokens, temperature=0.0, scope=scope)
        answer = tidy(reply)
        if not self.breadcrumb:
            return answer
        # The title and heading path as well: what a small model's answer may leave out (or echo instead).
        return " ".join(filter(None, (breadcrumb(document.title, chunk.metadata.get("section") or []), answer)))

    def messages(self, document: Document, chunk: Document) -> list[Message]:
        """The request for one chunk: the document (or an excerpt around the chunk), then the chunk."""
        question = CHUNK_PROMPTS[self.prompt].format(chunk=chunk.text)
        budget = self._budget() - self.llm.count_tokens(DOCUMENT_PROMPT.format(document="") + question)
        text = fit_document(document, chunk, self.llm, budget)
        return [{"role": "user", "content": DOCUMENT_PROMPT.format(document=text) + question}]

    def _budget(self) -> int:
        inner = self.llm.llm  # CachedLLM wraps the backend that knows its context length
        total = self.context_tokens or getattr(inner, "n_ctx", 0) or DEFAULT_CONTEXT_TOKENS
        return total - self.max_tokens - TEMPLATE_MARGIN

    def close(self) -> None:
        """Stop the model (a local server) if this contextualizer loaded or was given one."""
        if self._llm is not None:
            self._llm.close()
            self._llm = None

    def __repr__(self) -> str:
        return f"LLMContextualizer({self.model!r})" if self._llm is None else f"LLMContextualizer({self._llm!r})"


def tidy(answer: str) -> str:
    """One line (the prefix is joined to the chunk with a space), without a sentence cut off by max_tokens."""
    text = " ".join(answer.split())
    end = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
    if text and text[-1] not in ".!?" and end > 0:
        text = text[: end + 1]
    return text


def fit_document(document: Document, chunk: Document, llm: LLM, budget: int) -> str:
    """The document's text if it fits in ``budget`` tokens, else an excerpt centred on the chunk.

    The excerpt is the title, ``[…]``, a character window around the chunk cut at spaces, ``[…]``. Its
    size is first estimated from the document's characters per token, then shrunk by 10% until it fits.
    The chunk is never cut: if it alone is over the budget the excerpt is just the chunk.
    """
    text = document.text
    tokens = llm.count_tokens(text)
    if tokens <= budget:
        return text
    start, end = _span(text, chunk)
    chars = int(max(budget, 0) * len(text) / max(tokens, 1))
    for _ in range(20):
        excerpt = _excerpt(document, start, end, chars)
        if chars <= end - start or llm.count_tokens(excerpt) <= budget:
            return excerpt
        chars = int(chars * 0.9)
    return _excerpt(document, start, end, 0)


def _span(text: str, chunk: Document) -> tuple[int, int]:
    """Where the chunk lies in the document: its metadata offsets, else where its text is found."""
    start, end = chunk.metadata.get("start"), chunk.metadata.get("end")
    if isinstance(start, int) and isinstance(end, int) and text[start:end] == chunk.text:
        return start, end
    found = text.find(chunk.text)
    return (found, found + len(chunk.text)) if found >= 0 else (0, 0)


def _excerpt(document: Document, start: int, end: int, chars: int) -> str:
    """``chars`` characters of the document around ``[start, end)``, the chunk's span always included."""
    text = document.text
    room = max(chars - (end - start), 0)
    lo = max(0, start - room // 2)
    hi = min(len(text), end + room - (start - lo))  # what the start of the text cut off goes after the chunk
    lo = max(0, start - (room - (hi - end)))  # and what the end cut off goes before it
    if lo > 0:  # do not begin or end inside a word (but never inside the chunk either)
        space = text.find(" ", lo, start)
        lo = space + 1 if space >= 0 else start
    if hi < len(text):
        space = text.rfind(" ", end, hi)
        hi = space if space >= 0 else end
    body = text[lo:hi].strip()
    head = f"{document.title}\n{ELLIPSIS}\n" if lo > 0 else ""
    tail = f"\n{ELLIPSIS}" if hi < len(text) else ""
    return head + body + tail


@register("contextualizer", "llm")
def llm_contextualizer(**params: Any) -> LLMContextualizer:
    """A sentence of context per chunk written by the local LLM (Contextual Retrieval; see the module)."""
    known = {"model", "prompt", "max_tokens", "context_tokens", "prompt_cache", "breadcrumb"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ConfigError(f"contextualizer 'llm': unknown option(s) {', '.join(unknown)}; it takes {sorted(known)}")
    options: dict[str, Any] = {}
    for key in ("model", "prompt"):
        if key in params:
            options[key] = str(params[key])
    for key in ("max_tokens", "context_tokens"):
        if key in params:
            if not isinstance(params[key], int):
                raise ConfigError(f"contextualizer 'llm': {key} must be a whole number, got {params[key]!r}")
            options[key] = params[key]
    for key in ("prompt_cache", "breadcrumb"):
        if key in params:
            options[key] = str(params[key]).lower() in ("1", "true", "yes", "on")
    return LLMContextualizer(**options)
