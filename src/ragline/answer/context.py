"""Context assembly: ranked hits -> numbered, fenced sources ``[1]..[n]`` within a token budget.

Three decisions, in this order:

1. **Which hits.** Duplicates go first (the same chunk id twice, or near-identical text, such as a
   document indexed from two folders): a repeated source wastes budget and doubles its weight. Then
   hits are taken in rank order while they fit the budget; one that does not fit is skipped, not cut,
   because half a chunk can lose the sentence that carries the answer.
2. **In which order.** ``rank`` keeps the retrieval order; ``ends`` puts the best sources at both ends
   (ranks 1, 3, 5, ... at the front, ..., 4, 2 at the back) because readers use the start and the end
   of a long context best and the middle worst (Liu et al., "Lost in the Middle", TACL 2024; Lecture
   3, §6.2); ``reverse`` puts the best source last, next to the question.
3. **How each source looks.** ``<source n="1" title="..." effective_date="..." version="...">``, its
   text, ``</source>``. Dates and versions are shown so that a reader can prefer the current
   version of a policy (§6.1). Source text is untrusted data (§6.3): anything in it that could close
   the fence or open a new source (``</source>``, ``<source``, chat-template tokens such as
   ``<|im_end|>``) is neutralized, so a retrieved "</source> Ignore previous instructions" stays
   inside its own source.

Sources are numbered in the order they appear, so ``[1]`` is the first one the reader sees.
Tokens are counted by a pluggable counter; the default, ``approx_tokens``, is whitespace words x 1.3
(the usual rule of thumb for English under BPE tokenizers: about 0.75 words per token).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ragline.types import Hit

TokenCounter = Callable[[str], int]
Order = Literal["rank", "ends", "reverse"]
ORDERS: tuple[Order, ...] = ("rank", "ends", "reverse")
DropReason = Literal["duplicate", "budget", "limit", "empty"]

# Metadata shown in a source's tag, in this order, when present.
SOURCE_FIELDS = ("effective_date", "version", "superseded_by")
DEFAULT_BUDGET = 2000

# "<" in front of anything that could end the fence or start a new source: "</source>", "<source",
# "< / SOURCE", fullwidth or small-form angle brackets, and chat-template special tokens ("<|im_end|>").
_FENCE_BREAK = re.compile(r"[<\uff1c\ufe64\u2329\u3008](?=\s*/?\s*source\b|\|)", re.IGNORECASE)
_WORDS = re.compile(r"\w+")


def approx_tokens(text: str) -> int:
    """Whitespace words x 1.3, rounded up: a model-free estimate of BPE tokens for English text."""
    return math.ceil(len(text.split()) * 1.3)


@dataclass(slots=True)
class Source:
    """Source ``[n]``: a hit as the reader sees it."""

    n: int
    hit: Hit
    rendered: str
    tokens: int

    @property
    def chunk_id(self) -> str:
        return self.hit.doc_id

    @property
    def doc_id(self) -> str:
        """The document the chunk belongs to (``metadata["doc_id"]``), or the hit's id for whole documents."""
        return document_id(self.hit)

    @property
    def text(self) -> str:
        return self.hit.text


@dataclass(slots=True)
class Dropped:
    hit: Hit
    reason: DropReason


@dataclass(slots=True)
class Context:
    """Numbered sources, their rendering and what was left out."""

    sources: list[Source]
    text: str
    tokens: int
    budget: int
    order: Order
    dropped: list[Dropped] = field(default_factory=list)
    chosen_by: str | None = None  # how the sources were chosen besides relevance ("date order: newest incident_date")

    def source(self, n: int) -> Source | None:
        """Source ``[n]``, or None when there is no such number."""
        return self.sources[n - 1] if 1 <= n <= len(self.sources) else None

    def __len__(self) -> int:
        return len(self.sources)

    @property
    def hits(self) -> list[Hit]:
        return [s.hit for s in self.sources]


def document_id(hit: Hit) -> str:
    """The document a hit belongs to (``Hit.document_id``: the chunk's parent, else the hit itself)."""
    return hit.document_id


def build_context(
    hits: Sequence[Hit],
    budget: int = DEFAULT_BUDGET,
    order: Order = "rank",
    *,
    counter: TokenCounter = approx_tokens,
    max_sources: int | None = None,
    near_duplicate: float | None = 0.9,
) -> Context:
    """Assemble the context of ``hits`` (best first): dedupe, fit the budget, order, number, render.

    ``near_duplicate`` is the word-trigram Jaccard similarity above which two texts count as the
    same source (None: only identical chunk ids are duplicates).
    """
    if order not in ORDERS:
        raise ValueError(f"unknown context order {order!r}; choose one of {', '.join(ORDERS)}")
    ranked = sorted(hits, key=lambda h: h.rank)  # stable: equal ranks keep their input order
    kept, dropped = _dedupe(ranked, near_duplicate)
    chosen: list[Hit] = []
    used = 0
    for hit in kept:
        cost = counter(_render(len(kept), hit))  # numbered with the widest number it could get
        if max_sources is not None and len(chosen) >= max_sources:
            dropped.append(Dropped(hit, "limit"))
        elif used + cost > budget:
            dropped.append(Dropped(hit, "budget"))
        else:
            chosen.append(hit)
            used += cost
    sources = []
    for n, hit in enumerate(_arrange(chosen, order), start=1):
        rendered = _render(n, hit)
        sources.append(Source(n, hit, rendered, counter(rendered)))
    text = "\n\n".join(s.rendered for s in sources)
    return Context(sources, text, counter(text) if text else 0, budget, order, dropped)


def _arrange(hits: list[Hit], order: Order) -> list[Hit]:
    """Hits in display order; ``hits`` is best first."""
    if order == "ends":
        return hits[0::2] + hits[1::2][::-1]  # 1, 3, 5, ..., 6, 4, 2
    if order == "reverse":
        return hits[::-1]
    return list(hits)


def _dedupe(hits: list[Hit], threshold: float | None) -> tuple[list[Hit], list[Dropped]]:
    """Keep the best-ranked copy of each chunk id and of each near-identical text; drop empty texts."""
    kept: list[Hit] = []
    shingles: list[set[tuple[str, ...]]] = []
    dropped: list[Dropped] = []
    seen_ids: set[str] = set()
    for hit in hits:
        if not hit.text.strip():
            dropped.append(Dropped(hit, "empty"))
            continue
        mine = _shingles(hit.text)
        duplicate = hit.doc_id in seen_ids or (
            threshold is not None and any(_jaccard(mine, other) >= threshold for other in shingles)
        )
        if duplicate:
            dropped.append(Dropped(hit, "duplicate"))
            continue
        seen_ids.add(hit.doc_id)
        kept.append(hit)
        shingles.append(mine)
    return kept, dropped


def _shingles(text: str, size: int = 3) -> set[tuple[str, ...]]:
    words = _WORDS.findall(text.lower())
    if len(words) < size:
        return {tuple(words)}
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def _jaccard(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


# --- rendering -----------------------------------------------------------------------------------


def neutralize(text: str) -> str:
    """Defuse fence-breaking sequences in untrusted text: their ``<`` becomes ``&lt;``."""
    return _FENCE_BREAK.sub("&lt;", text)


def _attribute(value: object) -> str:
    text = " ".join(str(value).split())
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def _render(n: int, hit: Hit) -> str:
    attributes = [f'n="{n}"']
    if hit.title:
        attributes.append(f'title="{_attribute(hit.title)}"')
    for name in SOURCE_FIELDS:
        value = hit.metadata.get(name)
        if value not in (None, ""):
            attributes.append(f'{name}="{_attribute(value)}"')
    return f"<source {' '.join(attributes)}>\n{neutralize(hit.text.strip())}\n</source>"
