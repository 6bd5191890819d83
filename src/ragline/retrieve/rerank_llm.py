"""LLM rerankers: pointwise (P(yes) from the first token's log probabilities) and listwise (a sliding window).

* ``llm-pointwise`` asks, for each candidate, whether the passage answers the query, and scores it by
  ``P(yes) / (P(yes) + P(no))`` summed over the spellings of each answer among the first reply token's
  top log probabilities (Nogueira et al., "Document Ranking with a Pretrained Sequence-to-Sequence Model",
  2020; Liang et al., HELM, 2022). One generated token per candidate: the prompt dominates the cost.
* ``llm-listwise`` shows the model ``window`` candidates at a time and asks for their order (RankGPT: Sun
  et al., "Is ChatGPT Good at Search?", 2023); the window slides from the bottom of the list to the top
  by ``step``, so a relevant passage can climb from the last window to the first. The reply is parsed for
  passage numbers: repeats and numbers out of range are dropped, the numbers it forgot keep their order
  after the ones it named; a reply with no usable number keeps the window's input order and is logged.

Both read document text, so each request's cache entry is scoped by the ACLs of the documents in its
prompt (``acl_scope``): a reply is never served across principals who see different documents. The model
(``model=SPEC``, default the packaged Qwen) is loaded at the first query unless one is passed in.
``interpolate=w`` mixes the score (listwise: n, n - 1, ... down its order) with the first stage's, as for every
reranker (``BaseReranker``). Neither is part of any default pipeline: each costs one LLM prompt per candidate
(pointwise) or per window.
"""

from __future__ import annotations

import logging
import math
import re
from typing import Any

from ragline.components import register
from ragline.errors import ConfigError
from ragline.models.llm.cache import acl_scope
from ragline.retrieve.rerank import BaseReranker, interpolation_weight, passage_of
from ragline.types import Hit

log = logging.getLogger(__name__)
DEFAULT_PASSAGE_WORDS = 120


def clip_words(text: str, words: int) -> str:
    """The first ``words`` words of ``text`` (a prompt's cost grows with every passage word)."""
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def yes_probability(top: list[tuple[str, float]]) -> float | None:
    """``P(yes) / (P(yes) + P(no))`` over the top tokens ("Yes", " yes", "YES" all count); None if neither."""
    yes = sum(math.exp(lp) for token, lp in top if token.strip().lower() == "yes")
    no = sum(math.exp(lp) for token, lp in top if token.strip().lower() == "no")
    return yes / (yes + no) if yes + no > 0 else None


class _LLMReranker(BaseReranker):
    def __init__(
        self, llm: Any = None, model: str | None = None, words: int = DEFAULT_PASSAGE_WORDS, interpolate: float = 1.0
    ) -> None:
        from ragline.models.llm import CachedLLM

        if int(words) < 1:
            raise ConfigError(f"reranker {self.name!r}: words (of each passage shown) must be >= 1, got {words}")
        self._llm = None if llm is None else CachedLLM.wrap(llm)
        self.model, self.words = model, int(words)
        self.interpolate = interpolation_weight(self.name, interpolate)
        self.calls = 0

    @property
    def llm(self) -> Any:
        if self._llm is None:
            from ragline.models.llm import shared_llm

            self._llm = shared_llm(self.model)
        return self._llm

    def scope(self, hits: list[Hit]) -> dict[str, Any]:
        from ragline.models.llm import CachedLLM

        return {"scope": acl_scope(h.metadata.get("acl") for h in hits)} if isinstance(self.llm, CachedLLM) else {}

    def config(self) -> dict[str, Any]:
        model = self._llm.id if self._llm is not None else (self.model or "default")
        return {"name": self.name, "model": model, "words": self.words, "interpolate": self.interpolate}


@register("reranker", "llm-pointwise")
class PointwiseLLMReranker(_LLMReranker):
    """P(yes) that a passage answers the query, from the first token's top logprobs (model=SPEC, interpolate=W)."""

    name = "llm-pointwise"
    PROMPT = "Passage: {passage}\n\nQuestion: {query}\n\nDoes the passage answer the question? Answer yes or no."

    def __init__(
        self,
        llm: Any = None,
        model: str | None = None,
        words: int = DEFAULT_PASSAGE_WORDS,
        interpolate: float = 1.0,
        top: int = 10,
    ) -> None:
        super().__init__(llm, model, words, interpolate)
        self.top = int(top)

    def score(self, query: str, hit: Hit) -> float:
        """P(yes) for one candidate; 0.5 (no evidence either way) when neither answer is among the top tokens."""
        self.calls += 1
        prompt = self.PROMPT.format(passage=clip_words(passage_of(hit), self.words), query=query)
        top = self.llm.top_logprobs([{"role": "user", "content": prompt}], self.top, **self.scope([hit]))
        p = yes_probability(top)
        if p is None:
            log.info("llm-pointwise: neither yes nor no among the top tokens for %s: %s", hit.doc_id, top[:3])
            return 0.5
        return p

    def scores(self, query: str, hits: list[Hit]) -> list[float]:
        """P(yes) of each hit, in order (the cross-encoder's interface: benchmarks interpolate it themselves)."""
        return [self.score(query, hit) for hit in hits]

    def config(self) -> dict[str, Any]:
        return {**super().config(), "top": self.top}


def parse_order(reply: str, n: int) -> list[int] | None:
    """0-based order of ``n`` passages from a reply like ``[2] > [1] > [3]``; None when it names none of them.

    Numbers out of 1..n and repeats are dropped; the passages the reply leaves out follow in input order.
    """
    named = []
    for match in re.findall(r"\d+", reply):
        number = int(match) - 1
        if 0 <= number < n and number not in named:
            named.append(number)
    if not named:
        return None
    return named + [i for i in range(n) if i not in named]


@register("reranker", "llm-listwise")
class ListwiseLLMReranker(_LLMReranker):
    """The LLM orders windows of candidates, sliding from the bottom up (window=W, step=S, model=SPEC)."""

    name = "llm-listwise"
    PROMPT = (
        "Rank the {n} passages by how well they answer the question, best first. Answer only with "
        "their numbers, like [2] > [1] > [3].\n\nQuestion: {query}\n\n{passages}\n\nRanking:"
    )

    def __init__(
        self,
        llm: Any = None,
        model: str | None = None,
        words: int = 60,
        window: int = 5,
        step: int = 3,
        max_tokens: int = 48,
        interpolate: float = 1.0,
    ) -> None:
        super().__init__(llm, model, words, interpolate)
        if int(window) < 2 or not 1 <= int(step) <= int(window):
            raise ConfigError(f"reranker 'llm-listwise': window >= 2 and 1 <= step <= window, got {window}, {step}")
        self.window, self.step, self.max_tokens = int(window), int(step), int(max_tokens)
        self.malformed = 0

    def order_window(self, query: str, hits: list[Hit]) -> list[Hit]:
        """``hits`` in the order the model gives them (the input order when its reply names none)."""
        self.calls += 1
        passages = "\n\n".join(f"[{i}] {clip_words(passage_of(h), self.words)}" for i, h in enumerate(hits, 1))
        prompt = self.PROMPT.format(n=len(hits), query=query, passages=passages)
        reply = self.llm.chat([{"role": "user", "content": prompt}], max_tokens=self.max_tokens, **self.scope(hits))
        order = parse_order(reply, len(hits))
        if order is None:
            self.malformed += 1
            log.warning("llm-listwise: no passage number in the reply %r; the window keeps its order", reply[:80])
            return hits
        return [hits[i] for i in order]

    def scores(self, query: str, hits: list[Hit]) -> list[float]:
        """Scores that keep the model's order: n for the first, n - 1 for the next, ... (it gives an order)."""
        ranked = list(range(len(hits)))
        start = max(len(ranked) - self.window, 0)
        while len(ranked) > 1:
            window = ranked[start : start + self.window]
            ordered = self.order_window(query, [hits[i] for i in window])
            position = {id(hits[i]): i for i in window}
            ranked[start : start + self.window] = [position[id(h)] for h in ordered]
            if start == 0:
                break
            start = max(start - self.step, 0)
        score = [0.0] * len(hits)
        for place, i in enumerate(ranked):
            score[i] = float(len(hits) - place)
        return score

    def config(self) -> dict[str, Any]:
        return {**super().config(), "window": self.window, "step": self.step, "max_tokens": self.max_tokens}
