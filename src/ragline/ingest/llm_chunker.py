"""Chunker ``llm``: the LLM decides where chunks begin, between whole sentences.

The document's sentences (``ragline.text.sentences``, the project's one splitter) are numbered and shown to
the model a window at a time; its reply is constrained to JSON (``LLM.generate_json``: a grammar in
llama.cpp, ``response_format`` on an OpenAI-compatible server), ``{"starts": [sentence numbers]}``, the
sentences that begin a new topic. Boundaries therefore always fall between sentences, wherever the model
puts them. Rules around the model:

* **at most one start per ``spacing`` sentences** of a window (the schema's ``maxItems``): unbounded, the local
  0.5B model listed nearly every sentence (82% of the possible starts on the Orrin training sample, and 7 of 25
  replies counted 1, 2, 3, ... until the token limit cut them), which is sentence-per-chunk, not a decision;
* **a heading never ends a chunk:** a start proposed right after a heading moves up to the heading;
* **a chunk is at most ``max_words`` units** (words, or MiniLM word pieces with ``unit=tokens``): a chunk
  the model left longer is cut again by sentence packing (``sentence-pack``'s packing at that budget);
* **fallback:** a reply that is not such JSON (cut by the token limit, a backend that ignored the schema)
  or a backend that takes no schema at all: that window is sentence-packed instead, and counted;
* **long documents** are read ``window`` sentences at a time; the next window starts at the last start the
  model proposed in this one (so a topic running past the window is judged again), or after the window
  when it proposed none;
* **cost** is counted on the chunker (:attr:`LLMChunker.cost`): model calls and cached ones, prompt and
  reply tokens (the model's tokenizer), seconds, fallbacks. The chunking experiment shows it per row.

Replies go through the LLM response cache (:class:`~ragline.models.llm.CachedLLM`), keyed by the numbered
sentences, the model, the prompt and the document's ACL (``acl_scope``), so a rerun costs no generation.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ragline.components import register
from ragline.errors import ConfigError, ModelError
from ragline.ingest.chunkers import Chunker, Span
from ragline.ingest.markdown import Section, is_heading_line
from ragline.ingest.sentence_pack import SentencePackChunker
from ragline.models.llm import DEFAULT_LLM, LLM, CachedLLM, Message, load_llm
from ragline.text.sentences import split_sentences

SYSTEM_PROMPT = (
    "You split a document into chunks for search. Each chunk should hold one topic: a section, one event, "
    "one rule with its details. You are given the document's sentences, numbered. Reply with JSON "
    '{"starts": [numbers]}: the numbers of the few sentences where a new topic begins (not 1: it always begins '
    "one), in increasing order. A heading begins a chunk; a sentence that continues the topic before it does not."
)
SENTENCE_CHARS = 400  # a sentence longer than this is shown cut (the model judges topics, not details)
DEFAULT_WINDOW = 40  # sentences per request: ~1-2 k prompt tokens for English prose


@dataclass
class ChunkingCost:
    """What the model cost a chunker so far (all documents)."""

    llm_calls: int = 0  # answered by the model
    cached_calls: int = 0  # answered by the response cache
    prompt_tokens: int = 0  # of the calls the model answered
    reply_tokens: int = 0
    seconds: float = 0.0  # wall time inside the model calls (cached ones included)
    fallbacks: int = 0  # windows sentence-packed because the reply was unusable

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "seconds": round(self.seconds, 2)}


@register("chunker", "llm")
class LLMChunker(Chunker):
    """Chunks that begin where the LLM says a new topic begins (see the module), at most ``max_words`` units.

    ``llm`` is a model object (wrapped in a :class:`CachedLLM` unless it is one); without it ``model`` (a
    ``load_llm`` spec, default the local Qwen) is loaded at the first document, so building loads nothing.
    """

    name: ClassVar[str] = "llm"

    def __init__(
        self,
        llm: LLM | None = None,
        *,
        model: str = DEFAULT_LLM,
        max_words: int = 200,
        window: int = DEFAULT_WINDOW,
        max_tokens: int = 96,
        spacing: int = 3,
        unit: str = "words",
    ) -> None:
        super().__init__(unit)
        if max_words < 3 or window < 2 or max_tokens < 8 or spacing < 1:
            raise ConfigError(
                f"chunker 'llm': need max_words >= 3, window >= 2, max_tokens >= 8 and spacing >= 1, got "
                f"{max_words=}, {window=}, {max_tokens=}, {spacing=}"
            )
        self.spacing = spacing
        self._llm = None if llm is None else CachedLLM.wrap(llm)
        self.model, self.max_words, self.window, self.max_tokens = model, max_words, window, max_tokens
        # packing counts MiniLM's [CLS] and [SEP] in its budget: give it room for them
        extra = SentencePackChunker.SPECIALS if unit == "tokens" else 0
        self._packer = SentencePackChunker(tokens=max_words + extra, overlap=0, unit=unit)
        self.cost = ChunkingCost()
        self._scope: str | None = None  # the ACL scope of the document being chunked (see chunk)

    @property
    def llm(self) -> CachedLLM:
        if self._llm is None:
            self._llm = CachedLLM(load_llm(self.model))
        return self._llm

    def config(self) -> dict[str, Any]:
        model = self._llm.id if self._llm is not None else self.model
        return {
            "model": model,
            "max_words": self.max_words,
            "window": self.window,
            "max_tokens": self.max_tokens,
            "spacing": self.spacing,
            **super().config(),
        }

    @property
    def spec(self) -> str:
        params = {
            "max_words": self.max_words,
            "window": self.window,
            "max_tokens": self.max_tokens,
            "spacing": self.spacing,
            "unit": self.unit,
        }
        shown = [f"{k}={v}" for k, v in params.items() if not (k == "unit" and v == "words")]
        return f"{self.name}:model={self.model}," + ",".join(shown)

    # --- spans --------------------------------------------------------------------------------------------

    def spans(self, text: str, sections: list[Section]) -> list[Span]:
        return [span for span, _ in self.marked_spans(text, sections)]

    def marked_spans(self, text: str, sections: list[Section]) -> list[tuple[Span, dict[str, Any]]]:
        sentences = split_sentences(text)
        if not sentences:
            return []
        # a heading never ends a chunk: a start the model put right after one moves up to it
        starts = sorted(
            {
                s - 1 if s > 0 and is_heading_line(text[slice(*sentences[s - 1])]) else s
                for s in self.starts(text, sentences)
            }
        )
        bounds = [*starts, len(sentences)]
        out: list[tuple[Span, dict[str, Any]]] = []
        for first, after in zip(bounds, bounds[1:], strict=False):
            out.extend(self._capped(text, sentences[first][0], sentences[after - 1][1]))
        return out

    def starts(self, text: str, sentences: list[Span]) -> list[int]:
        """Indexes of the sentences that begin a chunk (0 always), window by window."""
        starts = [0]
        first = 0
        while True:
            last = min(first + self.window, len(sentences))
            proposed = self._ask(text, sentences[first:last])
            if proposed is None:  # unusable reply: this window is packed by size alone
                self.cost.fallbacks += 1
                proposed = self._packed_starts(text, sentences[first:last])
            chosen = [first + s for s in proposed if 0 < s < last - first]
            starts.extend(chosen)
            if last == len(sentences):
                break
            # The topic the window ends in may go on past it: the next window starts at the last start
            # proposed, so that chunk is judged again with what follows; with none, right after this window.
            first = chosen[-1] if chosen else last
            starts.append(first)
        return sorted(set(starts))

    def _packed_starts(self, text: str, window: list[Span]) -> list[int]:
        """The sentence-packing boundaries of ``window``, as indexes of its sentences."""
        begin = {start: i for i, (start, _) in enumerate(window)}
        spans = self._packer.spans(text[window[0][0] : window[-1][1]], [])
        return [begin[s + window[0][0]] for s, _ in spans if s + window[0][0] in begin]

    def _capped(self, text: str, start: int, end: int) -> list[tuple[Span, dict[str, Any]]]:
        """``text[start:end]`` as one chunk, or sentence-packed when it is over ``max_words`` units."""
        count = self._count(text[start:end])
        if count(0, end - start) <= self.max_words:
            return [((start, end), {})]
        return [((start + s, start + e), marks) for (s, e), marks in self._packer.marked_spans(text[start:end], [])]

    # --- the model ------------------------------------------------------------------------------------------

    def messages(self, text: str, window: list[Span]) -> list[Message]:
        lines = []
        for n, (start, end) in enumerate(window, start=1):
            sentence = " ".join(text[start:end].split())
            lines.append(f"{n}. {sentence[:SENTENCE_CHARS]}{'…' if len(sentence) > SENTENCE_CHARS else ''}")
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(lines)}]

    def _ask(self, text: str, window: list[Span]) -> list[int] | None:
        """The 0-based starts the model proposes inside ``window`` (increasing, first excluded), or None."""
        from ragline.models.llm import StructuredOutputUnsupported

        if len(window) < 2:
            return []
        schema = {
            "type": "object",
            "properties": {
                "starts": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 1, "maximum": len(window)},
                    "maxItems": max(1, len(window) // self.spacing),
                }
            },
            "required": ["starts"],
            "additionalProperties": False,
        }
        messages = self.messages(text, window)
        llm = self.llm
        misses = llm.misses
        began = time.perf_counter()
        try:
            value = llm.generate_json(messages, schema, max_tokens=self.max_tokens, scope=self._scope)
            reply = str(value)
        except StructuredOutputUnsupported:
            value, reply = None, ""
        except ModelError:  # JSONReplyError: malformed or off-schema
            value, reply = None, ""
        finally:
            self.cost.seconds += time.perf_counter() - began
        if llm.misses > misses:
            self.cost.llm_calls += 1
            self.cost.prompt_tokens += sum(llm.count_tokens(m["content"]) for m in messages)
            self.cost.reply_tokens += llm.count_tokens(reply) if reply else 0
        else:
            self.cost.cached_calls += 1
        if value is None:
            return None
        return sorted({int(n) - 1 for n in value["starts"]} - {0})

    def chunk(self, document: Any) -> list[Any]:
        from ragline.models.llm.cache import acl_scope

        # a boundary is derived from the document: served from the cache only for one under the same ACL
        self._scope = acl_scope([document.metadata.get("acl")])
        try:
            return super().chunk(document)
        finally:
            self._scope = None

    def close(self) -> None:
        if self._llm is not None:
            self._llm.close()
            self._llm = None
