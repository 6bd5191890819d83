"""Chunkers: a document in, its chunks out, each one a character span of the document's text.

The strategies of Lecture 3 §2.2, built by name from a spec (``NAME[:key=value,...]``, like retrievers)::

    none                        the whole document as one chunk (the "no chunking" baseline)
    fixed:size=200              windows of 200 units;  fixed:size=200,overlap=50 (overlap 10-20% keeps
                                the sentences a boundary cuts whole in at least one chunk)
    sentences:window=3          3 sentences a chunk (,overlap=1 to share one), never across a heading;
                                a heading joins the sentence after it, heading-only sections are skipped
    recursive:size=200          paragraphs, then lines, then sentences, then units, packed up to 200
                                (LangChain's RecursiveCharacterTextSplitter, on spans); a heading
                                always starts a chunk, never ends one
    structure:max_words=300     one chunk per section of the heading tree (``markdown.py``); a section
                                over the limit is split like ``recursive``; heading-only sections are
                                skipped (their heading lives on in their subsections' paths)
    sentence-pack:tokens=256    whole sentences up to the embedder's window of word pieces, overlapping
                                by whole sentences (overlap=1), headings kept with their text; a
                                sentence over the budget alone is split, and marked (``sentence_pack.py``)
    llm:max_words=100           the LLM names the sentences that begin a chunk, capped (``llm_chunker.py``)

Sizes count ``unit=words`` (the default: a run of non-space characters, or one CJK character) or
``unit=tokens`` (word pieces of the packaged MiniLM tokenizer, the model that embeds the chunks).

The lecture's findings, which these exist to reproduce: small fixed chunks split evidence sentences
(close to half at 20 words) and lose the literal a question names; overlap rescues the split sentences;
structure keeps sections whole but a "Receipts" chunk still does not say *which* policy, which is what
the context prefixes of ``context.py`` add.

Every chunk is a :class:`Document` with id ``<doc id>#<n>``, ``text == document.text[start:end]``
exactly, and metadata: the document's own (acl, version, ...; not ``page_starts``), plus ``doc_id``,
``parent_id`` (the section id ``<doc id>§<k>`` for chunkers that never cross a heading, else the document
id), ``start``, ``end``, ``section`` (heading path of the smallest section holding the chunk) and ``page``,
``slide`` or ``sheet`` (``ragline.anchors``). But for ``none``, a chunk never cuts a table block (a row keeps
its header) nor spans two pages, slides or sheets, whatever the chunker (``tables.bounded_spans``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from ragline.anchors import ANCHOR_LISTS, anchors_at
from ragline.components import build, register
from ragline.errors import ConfigError
from ragline.ingest.markdown import Section, enclosing_section, is_heading_line, section_id, sections_of
from ragline.ingest.tables import bounded_spans
from ragline.specs import parse_spec
from ragline.text.sentences import SPLITTER_VERSION, split_sentences, strip_span
from ragline.types import Document

Span = tuple[int, int]
UNITS = ("words", "tokens")
# Bump when a chunker's spans change for the same spec; the splitter's own version comes with it. The
# built-in index's cache key holds this, so a changed chunker or splitter rebuilds it.
CHUNKERS_VERSION = f"{SPLITTER_VERSION}.1"

# --- units ------------------------------------------------------------------------------------------

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"  # kana, Han, hangul
_WORD = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")


def iter_word_spans(text: str) -> Iterator[Span]:
    """The spans of :func:`word_spans`, one at a time."""
    return (m.span() for m in _WORD.finditer(text))


def word_spans(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Spans of words: runs of non-space characters, each CJK character a word of its own.

    Chinese has no spaces, so each character counts: a Chinese word is about 1.5 characters, so 200
    "words" of Chinese hold less than 200 of English. ``unit=tokens`` counts both as the model does.
    """
    return [m.span() for m in _WORD.finditer(text, start, len(text) if end is None else end)]


@lru_cache(maxsize=1)
def _minilm_tokenizer() -> Any:
    """The word-piece tokenizer of the packaged MiniLM, read from its tokenizer.json (no model load)."""
    from ragline.models.registry import resolve_embedder

    try:
        from tokenizers import Tokenizer
    except ImportError as error:
        raise ConfigError(f"unit=tokens needs the tokenizers package: pip install 'ragline[dense]' ({error})") from None
    tokenizer = Tokenizer.from_file(str(Path(resolve_embedder("minilm").path) / "tokenizer.json"))
    tokenizer.no_truncation()  # the file may carry the model's truncation: we count whole documents
    tokenizer.no_padding()
    return tokenizer


def token_spans(text: str) -> list[Span]:
    """Spans of MiniLM word pieces (special tokens excluded); ``##ing`` pieces are units of their own."""
    encoding = _minilm_tokenizer().encode(text, add_special_tokens=False)
    return [(s, e) for s, e in encoding.offsets if e > s]


_UNIT_SPANS: dict[str, Callable[[str], list[Span]]] = {"words": word_spans, "tokens": token_spans}


class UnitCounter:
    """Counts units in any span of one text, by bisection over the units' start offsets."""

    def __init__(self, spans: list[Span]) -> None:
        self.spans = spans
        self.starts = [s for s, _ in spans]

    def __call__(self, start: int, end: int) -> int:
        return bisect_left(self.starts, end) - bisect_left(self.starts, start)

    def within(self, start: int, end: int) -> list[Span]:
        return self.spans[bisect_left(self.starts, start) : bisect_left(self.starts, end)]


# --- recursive packing -----------------------------------------------------------------------------

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_LINE_BREAK = re.compile(r"\n")


def pack(text: str, start: int, end: int, size: int, count: UnitCounter, level: int = 0) -> list[Span]:
    """Split ``text[start:end]`` into spans of at most ``size`` units, at the coarsest boundary that works.

    Levels: paragraphs (blank lines), lines, sentences, single units; the pieces of one level are
    merged greedily back up to ``size``, so chunks end at the best boundary that fits. A heading line
    starts a chunk and takes the next piece with it: a chunk holds at most ``size`` units besides
    its heading lines.
    """
    start, end = strip_span(text, start, end)
    if start >= end:
        return []
    if count(start, end) <= size:
        return [(start, end)]
    if level == 0:
        pieces = _split_at(text, start, end, _PARAGRAPH_BREAK)
    elif level == 1:
        pieces = _split_at(text, start, end, _LINE_BREAK)
    elif level == 2:
        pieces = split_sentences(text, start, end)
    else:
        pieces = count.within(start, end)
    if level < 3 and len(pieces) <= 1:  # this boundary does not occur here: try the next finer one
        return pack(text, start, end, size, count, level + 1)
    spans: list[Span] = []
    for piece in pieces:
        spans.extend(pack(text, *piece, size, count, level + 1) if count(*piece) > size else [piece])
    # Greedy merge. A heading never ends a chunk: it starts a new one, and what follows it joins it even
    # beyond `size` (by the heading's own words at most), so a heading is never cut off from its text.
    merged: list[Span] = []
    glue = False
    for span in spans:
        heading = is_heading_line(text[span[0] : span[1]])
        if merged and (glue or (not heading and count(merged[-1][0], span[1]) <= size)):
            merged[-1] = (merged[-1][0], span[1])
        else:
            merged.append(span)
        glue = heading
    return merged


def _split_at(text: str, start: int, end: int, separator: re.Pattern[str]) -> list[Span]:
    pieces, begin = [], start
    for match in separator.finditer(text, start, end):
        pieces.append(strip_span(text, begin, match.start()))
        begin = match.end()
    pieces.append(strip_span(text, begin, end))
    return [p for p in pieces if p[0] < p[1]]


# --- chunkers --------------------------------------------------------------------------------------


def marks_within(marked: Sequence[tuple[Span, dict[str, Any]]], start: int, end: int) -> dict[str, Any]:
    """The marks of the chunker's spans that overlap ``start:end`` (the table and anchor rules may have moved
    a span's edges, so a chunk takes the marks of every span it holds part of)."""
    found: dict[str, Any] = {}
    for (s, e), marks in marked:
        if marks and s < end and start < e:
            found.update(marks)
    return found


class Chunker:
    """Base class: subclasses choose the spans; this class makes them into chunk Documents."""

    name: ClassVar[str]
    within_sections: ClassVar[bool] = False  # True: chunks never cross a heading, their parent is a section

    def __init__(self, unit: str = "words") -> None:
        if unit not in UNITS:
            raise ConfigError(f"chunker {self.name!r}: unknown unit {unit!r}; choose one of {', '.join(UNITS)}")
        self.unit = unit

    def config(self) -> dict[str, Any]:
        """The parameters, as ``build_chunker`` takes them (recorded with an index)."""
        return {"unit": self.unit}

    @property
    def spec(self) -> str:
        """The canonical spec string: ``build_chunker(c.spec)`` builds an equal chunker."""
        params = [f"{k}={v}" for k, v in self.config().items() if not (k == "unit" and v == "words")]
        return self.name + (":" + ",".join(params) if params else "")

    def chunk(self, document: Document) -> list[Document]:
        """The chunks of ``document`` in text order; none for a blank document."""
        if not document.text.strip():
            return []
        sections = sections_of(document)
        inherited = {k: v for k, v in document.metadata.items() if k not in ANCHOR_LISTS}
        chunks = []
        marked = self.marked_spans(document.text, sections)
        spans = bounded_spans(document, [span for span, _ in marked], whole=self.name == "none")
        with_marks = [(span, marks) for span, marks in marked if marks]  # few or none: each chunk looks at these
        for n, (start, end) in enumerate(spans):
            section = enclosing_section(sections, start, end)
            parent = section_id(document.id, section.index) if self.within_sections and section else document.id
            metadata: dict[str, Any] = {
                **inherited,
                "doc_id": document.id,
                "parent_id": parent,
                "start": start,
                "end": end,
                "section": list(section.path) if section else [],
            }
            metadata.update(anchors_at(document.metadata, start))  # page, slide or sheet
            metadata.update(marks_within(with_marks, start, end))
            chunk_id, text = f"{document.id}#{n}", document.text[start:end]
            chunks.append(Document(chunk_id, text, document.title, metadata, document.source, parent=document.id))
        return chunks

    def spans(self, text: str, sections: list[Section]) -> list[Span]:
        raise NotImplementedError

    def marked_spans(self, text: str, sections: list[Section]) -> list[tuple[Span, dict[str, Any]]]:
        """The spans, each with metadata of its own for its chunk (none here; see ``sentence-pack``)."""
        return [(span, {}) for span in self.spans(text, sections)]

    def _count(self, text: str) -> UnitCounter:
        return UnitCounter(_UNIT_SPANS[self.unit](text))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"


@register("chunker", "none")
class WholeChunker(Chunker):
    """No chunking: the document (stripped) as one chunk, the baseline the lecture compares against."""

    name = "none"

    def spans(self, text: str, sections: list[Section]) -> list[Span]:
        return [strip_span(text, 0, len(text))]


@register("chunker", "fixed")
class FixedChunker(Chunker):
    """Windows of ``size`` units, each starting ``size - overlap`` units after the one before."""

    name = "fixed"

    def __init__(self, size: int = 200, overlap: int = 0, unit: str = "words") -> None:
        super().__init__(unit)
        if size < 1 or not 0 <= overlap < size:
            raise ConfigError(f"chunker 'fixed': need size >= 1 and 0 <= overlap < size, got {size=}, {overlap=}")
        self.size, self.overlap = size, overlap

    def config(self) -> dict[str, Any]:
        return {"size": self.size, "overlap": self.overlap, **super().config()}

    def spans(self, text: str, sections: list[Section]) -> list[Span]:
        # One pass over the units, keeping only the window bounds: a list of every unit's span costs
        # ~20 times the text (tuples of ints), which is most of the memory of chunking a large file.
        size, step = self.size, self.size - self.overlap
        units = iter_word_spans(text) if self.unit == "words" else iter(token_spans(text))
        starts: list[int] = []  # start of unit k * step: window k's first
        ends: list[int] = []  # end of unit k * step + size - 1: window k's last, when the text is long enough
        count, last_end = 0, 0
        for count, (start, end) in enumerate(units, 1):
            if (count - 1) % step == 0:
                starts.append(start)
            if count >= size and (count - size) % step == 0:
                ends.append(end)
            last_end = end
        if not count:
            return []
        windows = 1 if count <= size else 1 + -(-(count - size) // step)  # the last one reaches the last unit
        return [(starts[k], ends[k] if k < len(ends) else last_end) for k in range(windows)]


@register("chunker", "sentences")
class SentenceChunker(Chunker):
    """``window`` consecutive sentences a chunk, sharing ``overlap``, restarting at every heading.

    The heading line is not a sentence of its own: it joins the section's first sentence.
    """

    name = "sentences"
    within_sections = True

    def __init__(self, window: int = 3, overlap: int = 0) -> None:
        super().__init__()  # counted in sentences: no unit
        if window < 1 or not 0 <= overlap < window:
            raise ConfigError(
                f"chunker 'sentences': need window >= 1 and 0 <= overlap < window, got {window}, {overlap}"
            )
        self.window, self.overlap = window, overlap

    def config(self) -> dict[str, Any]:
        return {"window": self.window, "overlap": self.overlap}

    def spans(self, text: str, sections: list[Section]) -> list[Span]:
        out = []
        for section in sections:
            if not text[section.body_start : section.own_end].strip():
                continue  # a heading directly followed by a subheading (see StructureChunker)
            sentences = split_sentences(text, section.start, section.own_end)
            if len(sentences) > 1 and is_heading_line(text[slice(*sentences[0])]):
                sentences[:2] = [(sentences[0][0], sentences[1][1])]  # the heading goes with the first sentence
            for first in range(0, len(sentences), self.window - self.overlap):
                group = sentences[first : first + self.window]
                out.append((group[0][0], group[-1][1]))
                if first + self.window >= len(sentences):
                    break
        return out


@register("chunker", "recursive")
class RecursiveChunker(Chunker):
    """Spans of up to ``size`` units cut at the coarsest boundary that fits (see :func:`pack`)."""

    name = "recursive"

    def __init__(self, size: int = 200, unit: str = "words") -> None:
        super().__init__(unit)
        if size < 1:
            raise ConfigError(f"chunker 'recursive': need size >= 1, got {size}")
        self.size = size

    def config(self) -> dict[str, Any]:
        return {"size": self.size, **super().config()}

    def spans(self, text: str, sections: list[Section]) -> list[Span]:
        return pack(text, 0, len(text), self.size, self._count(text))


@register("chunker", "structure")
class StructureChunker(Chunker):
    """One chunk per section (heading included); a section over ``max_words`` units is packed recursively."""

    name = "structure"
    within_sections = True

    def __init__(self, max_words: int = 300, unit: str = "words") -> None:
        super().__init__(unit)
        if max_words < 1:
            raise ConfigError(f"chunker 'structure': need max_words >= 1, got {max_words}")
        self.max_words = max_words

    def config(self) -> dict[str, Any]:
        return {"max_words": self.max_words, **super().config()}

    def spans(self, text: str, sections: list[Section]) -> list[Span]:
        count = self._count(text)
        out = []
        for section in sections:
            if not text[section.body_start : section.own_end].strip():
                continue  # a heading directly followed by a subheading: nothing of its own to retrieve
            out.extend(pack(text, section.start, section.own_end, self.max_words, count))
        return out


def parse_chunker_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"fixed:size=200,overlap=50"`` -> ``("fixed", {"size": 200, "overlap": 50})``."""
    return parse_spec(spec, "chunker spec")


def build_chunker(spec: str) -> Chunker:
    """The chunker a spec names, e.g. ``structure:max_words=300`` or ``fixed:size=128,unit=tokens``.

    ``max_tokens=N`` is accepted for ``structure`` as ``max_words=N,unit=tokens``.
    """
    name, params = parse_chunker_spec(spec)
    if name == "structure" and "max_tokens" in params:
        params["max_words"] = params.pop("max_tokens")
        params.setdefault("unit", "tokens")
    for key, value in params.items():
        if key not in ("unit", "model") and not isinstance(value, int):  # model: the llm chunker's
            raise ConfigError(f"chunker spec {spec!r}: {key} must be a whole number, got {value!r}")
    return build("chunker", {"name": name, **params})
