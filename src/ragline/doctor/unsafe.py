"""The unsafe ACL placement, filter after top-k, as an arm of ``ragline doctor`` and nothing else.

``AfterTopK`` retrieves and reranks with no ACL filter, builds the reader's context from that top-k,
and applies the filter only to what it finally shows (the citations). Restricted chunks therefore
reach the reranker and the reader: that is the leak the permission probe counts. No command builds
it: ``ask``, ``search``, ``eval`` and ``serve`` refuse ``[retrieve] filter = "after"``
(``ragline.config.require_safe``), and this module is imported by the doctor only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragline.answer.context import Context, build_context
from ragline.index.filters import Column, FilterLike, evaluate, parse_filter
from ragline.types import Answer, Hit


@dataclass
class AfterTopK:
    """A ``RAGPipeline`` run with its ACL filter moved after retrieval, reranking and reading."""

    pipeline: Any  # ragline.answer.pipeline.RAGPipeline
    seen_by_reranker: list[Hit] = field(default_factory=list)
    seen_by_reader: list[Hit] = field(default_factory=list)

    def context(self, question: str, filter: FilterLike = None) -> Context:
        p = self.pipeline
        candidates = p._first_stage(question, p._depth(p.k), None, versions=p._policy_for(question))
        self.seen_by_reranker = list(candidates) if p.reranker is not None else []
        hits = p._second_stage(question, candidates, p.k)
        if p.expander is not None:
            hits = p.expander.expand(question, hits)
        if p.guard is not None:
            hits = p.guard.screen(question, hits)
        context = build_context(hits, p.budget, p.order)
        self.seen_by_reader = [s.hit for s in context.sources]
        return context

    def answer(self, question: str, filter: FilterLike = None) -> tuple[Answer, Context]:
        context = self.context(question, filter)
        answer = self.pipeline.reader.read(question, context)
        allowed = visible([s.hit for s in context.sources], filter)
        answer.citations = [c for c in answer.citations if c.chunk_id in allowed]
        return answer, context


def visible(hits: list[Hit], filter: FilterLike) -> set[str]:
    """The ids of ``hits`` that ``filter`` admits (all of them when there is no filter)."""
    node = parse_filter(filter)
    return {h.doc_id for h in hits if node is None or admits(node, h.metadata)}


def admits(node: Any, metadata: dict[str, Any]) -> bool:
    """Does the filter tree ``node`` admit a chunk with ``metadata``? (the index's evaluator over one row)"""
    return bool(evaluate(node, lambda name: Column([metadata.get(name)]), 1)[0])
