"""Retrieval by question type on a corpus with typed questions (Orrin Grid, the countries world).

The lecture reports Hit@1 per question type, because each type probes one failure mode: literals
(error codes) need lexical matching, paraphrases need embeddings, section questions need context,
multi-hop questions need two documents. Every query runs as its asking user (``acl`` filter on the
user's groups), so a permission question also measures leaks: a forbidden document in the top k.

A retrieved chunk counts for its document (``doc_id`` in its metadata; a whole document is its own).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ragline.corpora.base import Question
from ragline.index import filters
from ragline.retrieve.base import Retriever


def acl_filter(question: Question) -> filters.Node:
    """The asking user's view: documents whose ``acl`` holds one of the user's groups (none: nothing)."""
    return filters.acl_filter(question.user_groups)


def document_ranking(retriever: Retriever, question: Question, depth: int) -> list[str]:
    """Document ids best first (chunks folded into their document, first occurrence kept)."""
    seen: dict[str, None] = {}
    for hit in retriever.search(question.text, depth, acl_filter(question)):
        seen.setdefault(hit.document_id, None)
    return list(seen)


def hit_by_type(
    retriever: Retriever,
    questions: Sequence[Question],
    ks: Sequence[int] = (1, 3),
    depth: int = 20,
    per_question: dict[str, float] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per question type (and ``all``): Hit@k (any gold document in the top k), Recall@k (all of
    them: a multi-hop question needs both its documents, which Hit@k does not see) and leaks.

    Questions without gold documents (must-abstain permission questions) count only for leaks.
    ``per_question``, when given, receives each judged question's Hit@1 by id (for paired tests).
    """
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for q in questions:
        ranking = document_ranking(retriever, q, depth)
        for group in (q.type, "all"):
            row = sums[group]
            row["questions"] += 1
            row["leaks"] += any(doc in q.forbidden_doc_ids for doc in ranking[: max(ks)])
            if q.gold_doc_ids:
                if per_question is not None and group == "all":
                    per_question[q.id] = float(any(doc in q.gold_doc_ids for doc in ranking[:1]))
                row["judged"] += 1
                for k in ks:
                    row[f"hit@{k}"] += any(doc in q.gold_doc_ids for doc in ranking[:k])
                    row[f"recall@{k}"] += set(q.gold_doc_ids) <= set(ranking[:k])
    out: dict[str, dict[str, Any]] = {}
    for group, row in sums.items():
        judged = row["judged"]
        out[group] = {"questions": int(row["questions"]), "leaks": int(row["leaks"])}
        for metric in ("hit", "recall"):
            out[group].update({f"{metric}@{k}": (row[f"{metric}@{k}"] / judged if judged else None) for k in ks})
    return out
