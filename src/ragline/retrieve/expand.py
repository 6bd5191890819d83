"""Small-to-big: retrieve small chunks, read bigger passages around them.

Small chunks retrieve precisely (their vector is about one thing) but are too little to answer from;
so after retrieval each hit is expanded to its "parent" (Lecture 2 §5.4; LangChain's
ParentDocumentRetriever, LlamaIndex's sentence window)::

    chunk       the chunk itself (the baseline, under the same budgets)
    section     the smallest section of the heading tree holding the chunk, subsections included
    sentences   the chunk's sentences plus ``window`` sentences on each side, within its section

Budgets: a passage longer than ``max_chars`` is cut to a window of that size centred on the chunk,
its edges moved inward to sentence starts/ends (or at least word boundaries); a chunk longer than the
budget stays whole. ``total_chars`` caps the sum of all passages: the lecture's trade-off is that at
equal budget a whole section crowds out other candidates, so compare expansions at equal totals.

Passages of one document do not repeat text: a hit whose chunk lies inside an earlier passage joins
it, and two overlapping passages merge when their union fits ``max_chars``. Passages come in the order
of their best hit. Each keeps its chunks' spans, so ``passage.text[s:e]`` is the chunk's text.

Hits are located in their document by ``metadata["doc_id"]``, ``["start"]``, ``["end"]`` (chunk
metadata, see ``ingest/chunkers.py``). When the document cannot be fetched, or no longer holds the
chunk's text at that span (it changed after indexing), the hit stays as it is, unexpanded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ragline.components import register
from ragline.errors import ConfigError
from ragline.ingest.markdown import Section, enclosing_section, parse_section_id, sections_of
from ragline.store.base import as_collection
from ragline.text.sentences import split_sentences
from ragline.types import Document, Hit, document_id_of

EXPANSIONS = ("chunk", "section", "sentences")
Fetch = Callable[[str], Document | None]


@dataclass(slots=True)
class Passage:
    """A span of a document to read: ``text == document.text[start:end]``, holding one or more hits."""

    doc_id: str
    title: str
    text: str
    start: int
    end: int
    hits: list[Hit] = field(default_factory=list)  # best first
    spans: list[tuple[int, int]] = field(default_factory=list)  # each hit's chunk, as offsets into `text`
    section: list[str] = field(default_factory=list)

    @property
    def rank(self) -> int:
        return self.hits[0].rank

    @property
    def score(self) -> float:
        return self.hits[0].score


@dataclass(slots=True)
class _Draft:
    doc_id: str
    document: Document | None
    start: int
    end: int
    hits: list[Hit]
    chunks: list[tuple[int, int]]  # document offsets (text offsets when there is no document)
    section: list[str]


def expand_hits(
    hits: Iterable[Hit],
    fetch: Fetch,
    mode: str = "section",
    max_chars: int = 2000,
    window: int = 2,
    total_chars: int | None = None,
) -> list[Passage]:
    """Expand ranked chunk hits into passages (see the module docstring); ``fetch`` maps a doc id to its Document."""
    if mode not in EXPANSIONS:
        raise ConfigError(f"unknown expansion {mode!r}; choose one of {', '.join(EXPANSIONS)}")
    if max_chars < 1 or window < 0:
        raise ConfigError(f"expansion needs max_chars >= 1 and window >= 0, got {max_chars}, {window}")
    documents: dict[str, Document | None] = {}
    drafts: list[_Draft] = []
    for hit in hits:
        doc_id = hit.document_id
        if doc_id not in documents:
            documents[doc_id] = fetch(doc_id)
        document = documents[doc_id]
        chunk = _locate(hit, document)
        if document is None or chunk is None:  # nothing to expand into: the hit as it is
            _add(drafts, _Draft(doc_id, None, 0, len(hit.text), [hit], [(0, len(hit.text))], []), total_chars)
            continue
        same = [d for d in drafts if d.document is document]
        holder = next((d for d in same if d.start <= chunk[0] and chunk[1] <= d.end), None)
        if holder is None:
            start, end, section = _expand(document, hit, chunk, mode, max_chars, window)
            holder = next((d for d in same if _mergeable(d, start, end, max_chars, drafts, total_chars)), None)
            if holder is None:
                _add(drafts, _Draft(doc_id, document, start, end, [hit], [chunk], section), total_chars)
                continue
            holder.start, holder.end = min(holder.start, start), max(holder.end, end)
        holder.hits.append(hit)
        holder.chunks.append(chunk)
    return [_finish(d) for d in _coalesce(drafts, max_chars)]


def _used(drafts: list[_Draft]) -> int:
    return sum(d.end - d.start for d in drafts)


def _add(drafts: list[_Draft], draft: _Draft, total_chars: int | None) -> None:
    """Keep the passage if it fits the total budget (if not, a smaller one further down may)."""
    if total_chars is None or _used(drafts) + draft.end - draft.start <= total_chars:
        drafts.append(draft)


def _mergeable(draft: _Draft, start: int, end: int, max_chars: int, drafts: list[_Draft], total: int | None) -> bool:
    """Whether a new passage [start, end) overlaps ``draft`` and their union fits both budgets."""
    if start >= draft.end or end <= draft.start:
        return False
    union = max(end, draft.end) - min(start, draft.start)
    return union <= max_chars and (total is None or _used(drafts) - (draft.end - draft.start) + union <= total)


def _coalesce(drafts: list[_Draft], max_chars: int) -> list[_Draft]:
    """Merge passages that an earlier merge made overlap (union within budget) into the better-ranked one."""
    pair = _overlapping_pair(drafts, max_chars)
    while pair is not None:
        first, later = pair
        first.start, first.end = min(first.start, later.start), max(first.end, later.end)
        first.hits += later.hits
        first.chunks += later.chunks
        drafts.remove(later)
        pair = _overlapping_pair(drafts, max_chars)
    return drafts


def _overlapping_pair(drafts: list[_Draft], max_chars: int) -> tuple[_Draft, _Draft] | None:
    for i, first in enumerate(drafts):
        for later in drafts[i + 1 :]:
            same = first.document is not None and later.document is first.document
            if same and _mergeable(first, later.start, later.end, max_chars, drafts, None):
                return first, later
    return None


def _locate(hit: Hit, document: Document | None) -> tuple[int, int] | None:
    """The chunk's span in the document, checked against the hit's text."""
    if document is None:
        return None
    start, end = hit.metadata.get("start"), hit.metadata.get("end")
    if isinstance(start, int) and isinstance(end, int):
        if 0 <= start <= end <= len(document.text) and (not hit.text or document.text[start:end] == hit.text):
            return start, end
    elif hit.doc_id == document.id:  # a whole-document hit (an index without chunking)
        return 0, len(document.text)
    found = document.text.find(hit.text) if hit.text else -1  # stale offsets: the text may have moved
    return (found, found + len(hit.text)) if found >= 0 else None


def _expand(
    document: Document, hit: Hit, chunk: tuple[int, int], mode: str, max_chars: int, window: int
) -> tuple[int, int, list[str]]:
    text = document.text
    sections = sections_of(document)
    section = _parent_section(document, sections, hit, chunk)
    scope = (section.start, section.end) if section else (0, len(text))
    path = list(section.path) if section else []
    if mode == "chunk":
        return chunk[0], chunk[1], path
    if mode == "sentences":
        sentences = split_sentences(text, *scope)
        touched = [i for i, (s, e) in enumerate(sentences) if s < chunk[1] and e > chunk[0]]
        if touched:
            first, last = max(touched[0] - window, 0), min(touched[-1] + window, len(sentences) - 1)
            scope = (min(sentences[first][0], chunk[0]), max(sentences[last][1], chunk[1]))
        else:
            scope = chunk
    start, end = _clip(text, scope, chunk, max_chars)
    return start, end, path


def _parent_section(document: Document, sections: list[Section], hit: Hit, chunk: tuple[int, int]) -> Section | None:
    """The section ``parent_id`` names when it holds the chunk, else the smallest section that does."""
    parsed = parse_section_id(str(hit.metadata.get("parent_id") or ""))
    if parsed and parsed[0] == document.id and parsed[1] < len(sections):
        named = sections[parsed[1]]
        if named.start <= chunk[0] and chunk[1] <= named.end:
            return named
    return enclosing_section(sections, *chunk)


def _clip(text: str, scope: tuple[int, int], chunk: tuple[int, int], max_chars: int) -> tuple[int, int]:
    """A window of ``scope`` of at most ``max_chars`` around ``chunk``, ending at sentence or word edges."""
    (low, high), (cs, ce) = scope, chunk
    if high - low <= max_chars:
        return low, high
    if ce - cs >= max_chars:
        return cs, ce
    spare = max_chars - (ce - cs)
    left = min(cs - low, spare // 2)
    right = min(high - ce, spare - left)
    left = min(cs - low, spare - right)
    start, end = cs - left, ce + right
    sentences = split_sentences(text, low, high)
    start = min((s for s, _ in sentences if start <= s <= cs), default=_word_start(text, start, cs))
    end = max((e for _, e in sentences if ce <= e <= end), default=_word_end(text, end, ce))
    return start, end


def _word_start(text: str, start: int, limit: int) -> int:
    """``start`` moved forward past a partial word (never beyond ``limit``)."""
    if start == 0 or text[start - 1].isspace():
        return start
    while start < limit and not text[start].isspace():
        start += 1
    while start < limit and text[start].isspace():
        start += 1
    return start


def _word_end(text: str, end: int, limit: int) -> int:
    """``end`` moved back before a partial word (never before ``limit``)."""
    if end == len(text) or text[end].isspace():
        return end
    while end > limit and not text[end - 1].isspace():
        end -= 1
    while end > limit and text[end - 1].isspace():
        end -= 1
    return end


def _finish(draft: _Draft) -> Passage:
    if draft.document is None:
        hit = draft.hits[0]
        return Passage(draft.doc_id, hit.title, hit.text, 0, len(hit.text), draft.hits, draft.chunks)
    text = draft.document.text[draft.start : draft.end]
    spans = [(s - draft.start, e - draft.start) for s, e in draft.chunks]
    return Passage(draft.doc_id, draft.document.title, text, draft.start, draft.end, draft.hits, spans, draft.section)


# --- the pipeline's expand stage -------------------------------------------------------------------------
class SmallToBigExpander:
    """Hits -> passages around them (``section``, ``sentences`` or ``chunk``), within the budgets.

    The parent document is put back together from the index's chunks of that document (each chunk's
    text at its ``start`` offset; whitespace between non-overlapping chunks becomes a newline), so no
    second copy of every document needs storing. A passage becomes one ``Hit``: the best hit's id,
    rank and score, the passage's text, and ``start``/``end`` of the passage.
    """

    def __init__(
        self, index: Any, mode: str = "section", max_chars: int = 2000, window: int = 2, total_chars: int | None = None
    ) -> None:
        if mode not in EXPANSIONS:
            raise ConfigError(f"unknown expansion {mode!r}; choose one of {', '.join(EXPANSIONS)}")
        self.index, self.mode, self.window = index, mode, window
        self.max_chars, self.total_chars = max_chars, total_chars
        self._chunks_of: dict[str, list[str]] | None = None
        self._generation = -1

    def config(self) -> dict[str, Any]:
        return {"name": self.mode, "max_chars": self.max_chars, "window": self.window, "total_chars": self.total_chars}

    def expand(self, query: str, hits: list[Hit]) -> list[Hit]:
        passages = expand_hits(hits, self.parent, self.mode, self.max_chars, self.window, self.total_chars)
        out = []
        for passage in passages:
            best = passage.hits[0]
            metadata = {
                **best.metadata,
                "start": passage.start,
                "end": passage.end,
                "expanded_from": best.doc_id,
                "section": passage.section or best.metadata.get("section", []),
            }
            out.append(Hit(best.doc_id, best.score, best.rank, best.title, passage.text, metadata, best.parent))
        return out

    def parent(self, doc_id: str) -> Document | None:
        """The document ``doc_id`` rebuilt from its chunks in the index (None when it has none)."""
        generation = self.index.generation
        if self._chunks_of is None or self._generation != generation:
            grouped: dict[str, list[str]] = {}
            ids = self.index.id_map() if hasattr(self.index, "id_map") else (i for i, _ in self.index.metadata())
            for chunk_id in ids:
                grouped.setdefault(document_id_of(chunk_id), []).append(chunk_id)
            self._chunks_of, self._generation = grouped, generation
        chunks = as_collection(self.index).get_many(self._chunks_of.get(doc_id, ()))  # one request on a server
        return rebuild_document(doc_id, list(chunks.values()))


def rebuild_document(doc_id: str, chunks: list[Document]) -> Document | None:
    """A document's text from its chunks' texts and ``start`` offsets (gaps between chunks as newlines)."""
    placed = sorted((c.metadata.get("start"), c) for c in chunks if isinstance(c.metadata.get("start"), int))
    if not placed:
        return None
    end = max(start + len(c.text) for start, c in placed)
    buffer = [" "] * end
    covered = [False] * end
    for start, chunk in placed:
        buffer[start : start + len(chunk.text)] = chunk.text
        covered[start : start + len(chunk.text)] = [True] * len(chunk.text)
    for i, seen in enumerate(covered):  # a gap is whitespace the chunker stripped: keep lines apart
        if not seen:
            buffer[i] = "\n"
    first = placed[0][1]
    metadata = {k: v for k, v in first.metadata.items() if k not in ("start", "end", "section", "parent_id", "doc_id")}
    return Document(doc_id, "".join(buffer), first.title, metadata, first.source)


@register("expander", "section")
def section_expander(index: Any, max_chars: int = 2000, total_chars: int | None = None) -> SmallToBigExpander:
    """Each chunk read as the smallest heading section holding it (cut to max_chars around the chunk)."""
    return SmallToBigExpander(index, "section", max_chars, total_chars=total_chars)


@register("expander", "sentences")
def sentence_expander(
    index: Any, window: int = 2, max_chars: int = 2000, total_chars: int | None = None
) -> SmallToBigExpander:
    """Each chunk read with ``window`` sentences on each side, within its section (a sentence window)."""
    return SmallToBigExpander(index, "sentences", max_chars, window, total_chars)


@register("expander", "chunk")
def chunk_expander(index: Any, max_chars: int = 2000, total_chars: int | None = None) -> SmallToBigExpander:
    """Each chunk as it is, under the same budgets (the baseline of small-to-big)."""
    return SmallToBigExpander(index, "chunk", max_chars, total_chars=total_chars)
