"""Corrective RAG (Yan et al., 2024): grade the retrieval, then act on the grade.

The evaluator is the ``retrieval`` critic (``ragline.reflect.critics``): P(the retrieved list holds a
document that answers the question), trained on Orrin training-world retrievals with and without their
gold documents; its AUC on held-out training questions stands beside the lexical grade's in BENCHMARKS.md
("Reflection"). Its probability falls in one of three bands:

* correct (``>= upper``): knowledge refinement only: each passage is cut into strips (its sentences) and
  the strips the ``relevance`` critic scores at least ``strip_threshold`` are kept (each passage keeps its
  best strip), so the reader reads less text that does not bear on the question;
* incorrect (``< lower``): the retrieval is dropped; the question is rewritten (its content terms only, the
  agent's rewrite) and searched wider: the ``fallback`` retriever (a deeper, other first stage) over
  ``fallback_k`` passages of the same index, or of the index at ``fallback_index`` (another collection),
  always with the caller's filter inside; if the wider search is graded below ``lower`` too, the reader
  abstains, nothing having passed;
* ambiguous (in between): both, the refined first retrieval and the refined wider one, read together.

The bands (0.2, 0.5) and ``strip_threshold`` 0.1 were chosen on the Orrin training world
(``benchmarks/reflection_sweep.py``; BENCHMARKS.md "Reflection"): stricter strips cost answers (0.5: 75 correct
against 81), wider bands cost retrievals for the same answers.

``details["crag"]`` holds the band, the grades and what each action kept.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ragline.agent.steps import _attempts
from ragline.answer.context import Context, build_context, document_id
from ragline.components import register
from ragline.errors import ConfigError
from ragline.index.filters import FilterLike
from ragline.reflect.base import RetrievingReader, abstain, build_checked
from ragline.retrieve.registry import build_retriever
from ragline.text.sentences import sentence_texts
from ragline.types import Answer, Hit

BANDS = ("correct", "ambiguous", "incorrect")


class CRAGReader(RetrievingReader):
    """CRAG: grade the retrieval into three bands; refine strips, or rewrite and search wider, or abstain."""

    name = "crag"

    def __init__(
        self,
        index: Any = None,
        llm: Any = None,
        upper: float = 0.5,
        lower: float = 0.2,
        strip_threshold: float = 0.1,
        fallback: str = "bm25",
        fallback_k: int = 10,
        fallback_index: str | None = None,
        **common: Any,
    ) -> None:
        super().__init__(index, llm, **common)
        if not 0.0 <= lower <= upper <= 1.0:
            raise ConfigError(f"reader crag: need 0 <= lower <= upper <= 1, got lower={lower!r}, upper={upper!r}")
        self.upper, self.lower, self.strip_threshold = float(upper), float(lower), float(strip_threshold)
        self.fallback_spec, self.fallback_k, self.fallback_index = fallback, int(fallback_k), fallback_index
        self.wide_index = index
        if fallback_index:
            from ragline.index import Index

            self.wide_index = Index.open(fallback_index)
        self.wide = build_retriever(fallback, self.wide_index)
        from ragline.reflect.critics import Critics

        self.wide_critics = self.critics if self.wide_index is index else Critics(self.wide_index, self.critics_path)

    def band(self, confidence: float) -> str:
        return "correct" if confidence >= self.upper else "incorrect" if confidence < self.lower else "ambiguous"

    def refine(self, question: str, hits: list[Hit], critics: Any) -> tuple[list[Hit], int, int]:
        """Each hit cut to its strips the relevance critic keeps (its best strip at least): (hits, kept, strips)."""
        refined, kept_n, total = [], 0, 0
        for hit in hits:
            strips = sentence_texts(hit.text) or [hit.text]
            pseudo = [replace(hit, text=s) for s in strips]
            scores, _ = critics.relevance(question, pseudo)
            best = max(range(len(strips)), key=lambda i: scores[i])
            kept = [s for i, s in enumerate(strips) if scores[i] >= self.strip_threshold or i == best]
            kept_n, total = kept_n + len(kept), total + len(strips)
            refined.append(replace(hit, text="\n".join(kept)))  # one strip a line, headings alone
        return refined, kept_n, total

    def _answer(self, question: str, filter: FilterLike, cost: dict[str, Any]) -> tuple[Answer, Context]:
        hits = self.search(question, filter, cost)
        confidence = self.critics.retrieval_confidence(question, hits) if hits else 0.0
        band = self.band(confidence)
        info: dict[str, Any] = {"confidence": round(confidence, 4), "band": band}
        knowledge: list[Hit] = []
        if band != "incorrect":
            refined, kept, strips = self.refine(question, hits, self.critics)
            knowledge += refined
            info["internal"] = {"passages": len(refined), "strips_kept": kept, "strips": strips}
        if band != "correct":
            rewritten = _attempts(question, 1, 1, self.index.settings.analyzer)[-1][0]
            cost["retrievals"] += 1
            wide = self.wide.search(rewritten, self.fallback_k, filter)
            have = {document_id(h) for h in knowledge}
            wide = [h for h in wide if document_id(h) not in have]
            wide_confidence = self.wide_critics.retrieval_confidence(question, wide) if wide else 0.0
            info["external"] = {
                "query": rewritten,
                "retriever": self.fallback_spec,
                "passages": len(wide),
                "confidence": round(wide_confidence, 4),
            }
            if band == "incorrect" and wide_confidence < self.lower:
                why = (
                    f"retrieval graded {confidence:.3f} and the wider search {wide_confidence:.3f}, both < {self.lower}"
                )
                return abstain(self.name, why, crag=info), build_context(hits, self.budget)
            if wide_confidence >= self.lower:
                refined, kept, strips = self.refine(question, wide[: self.k], self.wide_critics)
                knowledge += refined
                info["external"].update(strips_kept=kept, strips=strips)
        ranked = [replace(h, rank=i) for i, h in enumerate(knowledge, start=1)]
        context = build_context(ranked, self.budget)
        answer = self.reader.read(question, context)
        answer.details["crag"] = info
        return answer, context

    def config(self) -> dict[str, Any]:
        return {
            **super().config(),
            "upper": self.upper,
            "lower": self.lower,
            "strip_threshold": self.strip_threshold,
            "fallback": self.fallback_spec,
            "fallback_k": self.fallback_k,
            "fallback_index": self.fallback_index,
        }


@register("reader", "crag")
def crag_reader(index: Any = None, llm: Any = None, **settings: Any) -> CRAGReader:
    """CRAG: a trained evaluator bands the retrieval; refine strips, or rewrite and search wider, or abstain."""
    return build_checked(CRAGReader, index, llm, settings)
