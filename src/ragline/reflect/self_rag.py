"""Self-RAG inference (Asai et al., 2023) with critics trained here instead of reflection tokens.

Self-RAG's model emits *Retrieve* (should I retrieve?), then for each retrieved passage a draft and its
critiques *ISREL* (is the passage relevant?), *ISSUP* (does it support the draft?) and *ISUSE* (is the draft
useful?), and keeps the draft with the best weighted critique score. A 0.5B model on two cores cannot
be fine-tuned to emit those tokens, so each critic is a separate, measured part:

* Retrieve: the ``retrieve`` critic (``ragline.reflect.critics``), P(the question needs the index) from how
  much of the question the index knows; below ``retrieve_threshold`` the question is answered closed-book
  (``base.RetrievingReader.closed_book``) and nothing is retrieved;
* ISREL: the ``relevance`` critic's probability for the passage;
* ISSUP: the support check of the draft's citation (``ragline.answer.support``: the cited sentence carries
  the question and the answer), 1 or 0;
* ISUSE: the draft reader's own confidence (the extractive reader's span score, capped at 1; 1 for a reader
  that gives none).

Drafts are read one passage at a time (Self-RAG's parallel segments, one segment: the answer). The best
draft's score is ``w_rel * ISREL + w_sup * ISSUP + w_use * ISUSE``; below ``min_score``, or when every draft
abstains, the reader abstains. Weights and thresholds were chosen on the Orrin training world
(``benchmarks/reflection_sweep.py``; BENCHMARKS.md "Reflection"): ``w_use`` 0.5 beat 0 by one answer, ``min_score``
changed nothing from 0.3 to 0.8, and a ``retrieve_threshold`` of 0.3 answered one question more than 0.5.
``details["self_rag"]`` lists each draft with its critiques.
"""

from __future__ import annotations

from typing import Any

from ragline.answer.context import Context, build_context
from ragline.components import register
from ragline.errors import ConfigError
from ragline.index.filters import FilterLike
from ragline.reflect.base import RetrievingReader, abstain, build_checked
from ragline.types import Answer


class SelfRAGReader(RetrievingReader):
    """Self-RAG: decide whether to retrieve, draft per passage, keep the draft its critics score best."""

    name = "self-rag"

    def __init__(
        self,
        index: Any = None,
        llm: Any = None,
        retrieve_threshold: float = 0.3,
        w_rel: float = 1.0,
        w_sup: float = 1.0,
        w_use: float = 0.5,
        min_score: float = 0.3,
        **common: Any,
    ) -> None:
        super().__init__(index, llm, **common)
        for key, value in (("retrieve_threshold", retrieve_threshold), ("min_score", min_score)):
            if not isinstance(value, (int, float)):
                raise ConfigError(f"reader self-rag: {key} must be a number, got {value!r}")
        self.retrieve_threshold, self.min_score = float(retrieve_threshold), float(min_score)
        self.weights = (float(w_rel), float(w_sup), float(w_use))

    def _answer(self, question: str, filter: FilterLike, cost: dict[str, Any]) -> tuple[Answer, Context]:
        p_retrieve = self.critics.needs_retrieval(question)
        info: dict[str, Any] = {"retrieve": round(p_retrieve, 4)}
        if p_retrieve < self.retrieve_threshold:
            answer = self.closed_book(question, cost)
            answer.details["self_rag"] = {**info, "decision": "no retrieval"}
            return answer, self.empty()
        hits = self.search(question, filter, cost)
        relevance, _ = self.critics.relevance(question, hits)
        drafts: list[dict[str, Any]] = []
        best: tuple[float, Answer, Context] | None = None
        w_rel, w_sup, w_use = self.weights
        for hit, isrel in zip(hits, relevance):
            context = build_context([hit], self.budget)
            draft = self.reader.read(question, context)
            if draft.abstained:
                drafts.append({"doc_id": hit.doc_id, "isrel": round(isrel, 4), "draft": None})
                continue
            issup = 1.0 if any(c.supported for c in draft.citations) else 0.0
            isuse = min(1.0, float(draft.details.get("score", 1.0)))
            score = w_rel * isrel + w_sup * issup + w_use * isuse
            drafts.append(
                {
                    "doc_id": hit.doc_id,
                    "draft": draft.text,
                    "isrel": round(isrel, 4),
                    "issup": issup,
                    "isuse": round(isuse, 4),
                    "score": round(score, 4),
                }
            )
            if best is None or score > best[0]:
                best = (score, draft, context)
        info.update(decision="retrieve", drafts=drafts)
        if best is None or best[0] < self.min_score:
            why = "every draft abstained" if best is None else f"best draft scored {best[0]:.3f} < {self.min_score}"
            return abstain(self.name, why, self_rag=info), build_context(hits, self.budget)
        _, answer, context = best
        answer.details["self_rag"] = info
        return answer, context

    def config(self) -> dict[str, Any]:
        w_rel, w_sup, w_use = self.weights
        return {
            **super().config(),
            "retrieve_threshold": self.retrieve_threshold,
            "w_rel": w_rel,
            "w_sup": w_sup,
            "w_use": w_use,
            "min_score": self.min_score,
        }


@register("reader", "self-rag")
def self_rag_reader(index: Any = None, llm: Any = None, **settings: Any) -> SelfRAGReader:
    """Self-RAG: a trained critic decides whether to retrieve; drafts per passage ranked by ISREL/ISSUP/ISUSE."""
    return build_checked(SelfRAGReader, index, llm, settings)
