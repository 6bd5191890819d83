"""The types every generated corpus is made of: ``Fact``, ``Question`` and ``Corpus``.

A corpus lists its documents, its questions (each with its gold documents and the verbatim
evidence sentences a correct answer must come from) and every answer-bearing sentence as a
``Fact``. The generators (``orrin``, ``countries``), the exports and the evaluations import these
from here, not from the ``ragline.corpora`` package, which re-exports the generators themselves.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from ragline.types import Document


@dataclass(frozen=True, slots=True)
class Fact:
    """One answer-bearing sentence: it occurs verbatim in document ``doc_id`` and carries ``value``."""

    doc_id: str
    sentence: str
    fact_id: str
    value: str = ""


@dataclass(slots=True)
class Question:
    """A question with its answer and the evidence a correct answer must come from.

    ``answer`` is the minimal answer span; ``aliases`` are accepted variants. ``evidence`` lists
    ``(doc_id, sentence)`` for each answer-bearing sentence, in hop order for multi-hop questions
    (the first names the ``bridge`` entity, the last carries the answer).

    ``expected_abstain``: the asking user (``user_groups``) may not see any document that answers,
    so the right output is "I don't know". Then ``gold_doc_ids`` is empty (nothing the user may see
    supports an answer), ``forbidden_doc_ids`` names the documents that must not be retrieved, and
    ``answer`` is the restricted value whose appearance in an output is a leak.

    ``distractor_answers`` are wrong answers that a specific failure produces: a neighbouring
    policy's number, the superseded version's value, the planted instruction's claim.
    """

    id: str
    text: str
    type: str
    answer: str
    aliases: list[str] = field(default_factory=list)
    gold_doc_ids: list[str] = field(default_factory=list)
    evidence: list[tuple[str, str]] = field(default_factory=list)
    user_groups: list[str] = field(default_factory=lambda: ["all"])
    expected_abstain: bool = False
    bridge: str | None = None
    distractor_answers: list[str] = field(default_factory=list)
    forbidden_doc_ids: list[str] = field(default_factory=list)

    @property
    def answers(self) -> list[str]:
        """The answer followed by its aliases."""
        return [self.answer, *self.aliases]

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        record["evidence"] = [list(pair) for pair in self.evidence]
        return record


@dataclass(slots=True)
class Corpus:
    """Documents, questions and facts of one generated world."""

    name: str
    seed: int
    documents: list[Document]
    questions: list[Question]
    facts: list[Fact]

    def document(self, doc_id: str) -> Document:
        for doc in self.documents:
            if doc.id == doc_id:
                return doc
        raise KeyError(f"no document {doc_id!r} in corpus {self.name!r}")

    def questions_of_type(self, qtype: str) -> list[Question]:
        return [q for q in self.questions if q.type == qtype]

    def counts(self) -> dict[str, int]:
        """Number of questions of each type, in first-appearance order."""
        return dict(Counter(q.type for q in self.questions))

    def canonical_json(self) -> str:
        """Documents, questions and facts as sorted-key, compact JSON: the input of ``fingerprint``."""
        payload = {
            # the fields a generator sets, named: new Document fields must not move the fingerprint
            "documents": [
                {"id": d.id, "text": d.text, "title": d.title, "metadata": d.metadata, "source": d.source}
                for d in self.documents
            ],
            "questions": [q.to_dict() for q in self.questions],
            "facts": [asdict(fact) for fact in self.facts],
        }
        return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    def fingerprint(self) -> str:
        """SHA-256 of ``canonical_json``: equal fingerprints mean byte-identical corpora."""
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()
