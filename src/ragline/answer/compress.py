"""Context compression: keep the sentences of each hit that best answer the question, within a token budget.

The local LLM reads its prompt at ~100-150 tokens/s here, so five 100-word sources cost seconds before the
first answer token; most of their sentences do not bear on the question. A compressor scores every sentence
of every hit against the question and keeps, in their original order, the best ones that fit ``budget``
tokens (counted like the context, ``approx_tokens``) over all hits together:

1. each hit keeps its best sentence, even past the budget: no source disappears, so source ``[n]`` is
   the same chunk with or without compression, and a citation still maps to the chunk it meant;
2. then the remaining sentences that score above the scorer's floor, best first (ties: the better-ranked
   hit, then the earlier sentence), each one that still fits. ``overlap``'s floor is 0: a sentence that
   shares no term with the question is not worth its tokens; ``cross`` has none (its logits have no zero).

A kept sentence is copied verbatim (a substring of the chunk), so a citation's support check reads the
words the reader read. The hit keeps its id, rank, score and title; ``metadata["compressed"]`` records the
kept ``[start, end)`` character spans in the original chunk text and its token count. Sentences come from
the extractive reader's splitter (``ragline.answer.spans.sentences``: lines split at sentence ends,
headings and table rules left out). Two scorers::

    overlap      the IDF (from the index, else from the hits' sentences) of the question's terms in the
                 sentence, analyzed with the index's analyzer: no model
    cross        the cross-encoder reranker's score of (question, "title. sentence")
                 (``ragline.retrieve.rerank_cross``; model=trained:NAME, a folder or hub id)

Selective Context (Li et al., 2023) and LongLLMLingua (Jiang et al., 2023) compress at the token level
with a language model; sentence selection keeps every kept sentence readable and citable.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ragline.answer.context import approx_tokens
from ragline.answer.spans import sentences
from ragline.components import register
from ragline.retrieve.rerank_cross import DEFAULT_MODEL, CrossEncoderReranker
from ragline.text.analyzer import Analyzer, get_analyzer
from ragline.types import Hit

DEFAULT_BUDGET = 200  # tokens of source text over all hits (chosen on the Orrin training world: BENCHMARKS.md)


class SentenceCompressor(ABC):
    """Sentence selection within a budget; a subclass says how well each sentence answers the question."""

    name = "compressor"
    floor = -math.inf  # rule 2 adds only sentences scoring above this

    @abstractmethod
    def sentence_scores(self, question: str, hits: Sequence[Hit], texts: Sequence[Sequence[str]]) -> list[list[float]]:
        """A score per sentence (``texts[i]`` are hit ``i``'s sentences), higher = more useful."""

    def compress(self, question: str, hits: list[Hit], budget: int = DEFAULT_BUDGET) -> list[Hit]:
        """``hits`` in the same order, each with only its kept sentences (see the module docstring)."""
        spans = [sentences(hit.text) for hit in hits]
        texts = [[hit.text[s:e] for s, e in hit_spans] for hit, hit_spans in zip(hits, spans)]
        scores = self.sentence_scores(question, hits, texts) if any(texts) else [[] for _ in hits]
        kept: list[set[int]] = [set() for _ in hits]
        used = 0
        for i, hit_scores in enumerate(scores):
            if hit_scores:  # rule 1: the best sentence of every hit (the first of equal ones)
                best = int(np.argmax(hit_scores))
                kept[i].add(best)
                used += approx_tokens(texts[i][best])
        rest = sorted(
            (
                (i, j)
                for i, hit_scores in enumerate(scores)
                for j, score in enumerate(hit_scores)
                if j not in kept[i] and score > self.floor
            ),
            key=lambda ij: (-scores[ij[0]][ij[1]], hits[ij[0]].rank, ij[1]),
        )
        for i, j in rest:  # rule 2: the best of the others while they fit
            cost = approx_tokens(texts[i][j])
            if used + cost <= budget:
                kept[i].add(j)
                used += cost
        return [
            _shortened(hit, [spans[i][j] for j in sorted(kept[i])]) if len(kept[i]) < len(spans[i]) else hit
            for i, hit in enumerate(hits)
        ]

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


def _shortened(hit: Hit, kept: list[tuple[int, int]]) -> Hit:
    """``hit`` with the text of the ``kept`` spans: a line break where the original had one between them."""
    pieces = []
    for n, (start, end) in enumerate(kept):
        if n:
            gap = hit.text[kept[n - 1][1] : start]
            pieces.append("\n" if "\n" in gap else " ")
        pieces.append(hit.text[start:end])
    record = {"kept": [[s, e] for s, e in kept], "tokens": approx_tokens(hit.text)}
    return replace(hit, text="".join(pieces), metadata={**hit.metadata, "compressed": record})


@register("compressor", "overlap")
class OverlapCompressor(SentenceCompressor):
    """Sentences ranked by the IDF of the question terms they contain (the index's analyzer and IDF; no model)."""

    name = "overlap"
    floor = 0.0

    def __init__(self, index: Any = None) -> None:
        self.index = index
        self.analyzer: Analyzer = index.settings.analyzer if index is not None else get_analyzer("english")

    def sentence_scores(self, question: str, hits: Sequence[Hit], texts: Sequence[Sequence[str]]) -> list[list[float]]:
        terms = set(self.analyzer(question))
        analyzed = [[set(self.analyzer(text)) for text in hit_texts] for hit_texts in texts]
        weight = self._idf(terms, [s for hit_sets in analyzed for s in hit_sets])
        return [[sum(weight[t] for t in terms & s) for s in hit_sets] for hit_sets in analyzed]

    def _idf(self, terms: set[str], sentence_terms: list[set[str]]) -> dict[str, float]:
        """Each term's IDF in the index (fields weighted as indexed); else over the sentences at hand."""
        if self.index is not None and len(self.index):
            scorer = self.index.bm25_scorer()
            fields = self.index.settings.fields
            total = sum(fields.values()) or 1.0
            known = {
                t: sum(w * float(scorer.idf[f][scorer.stats.vocab[t]]) for f, w in fields.items()) / total
                for t in terms
                if t in scorer.stats.vocab
            }
            rarest = max(known.values(), default=1.0)
            return {t: known.get(t, rarest) for t in terms}  # a term the index lacks is as rare as any
        n = len(sentence_terms)
        return {t: math.log1p(n / (1 + sum(t in s for s in sentence_terms))) for t in terms}


@register("compressor", "cross")
class CrossCompressor(SentenceCompressor):
    """Sentences ranked by the cross-encoder reranker's score (model=trained:NAME, a folder or hub id)."""

    name = "cross"

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 32, max_length: int = 128) -> None:
        self.reranker = CrossEncoderReranker(model, batch_size, max_length)

    def sentence_scores(self, question: str, hits: Sequence[Hit], texts: Sequence[Sequence[str]]) -> list[list[float]]:
        pieces = [replace(hit, text=text) for hit, hit_texts in zip(hits, texts) for text in hit_texts]
        flat = self.reranker.scores(question, pieces).astype(np.float64).tolist()  # one batch for all hits
        out, start = [], 0
        for hit_texts in texts:
            out.append(flat[start : start + len(hit_texts)])
            start += len(hit_texts)
        return out

    def config(self) -> dict[str, Any]:
        reranker = self.reranker.config()
        return {"name": self.name, **{k: reranker[k] for k in ("model", "model_id", "max_length", "batch_size")}}
