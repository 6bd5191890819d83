"""The items of the position experiment: each question with its gold source and distractors, and their contexts.

A ``PositionItem`` is one question, the chunk of its gold document that holds the evidence sentence
whole, and the k-1 best BM25 chunks that neither come from a gold document nor hold a gold answer
(hard distractors, read as the asking user). ``position_context`` puts the gold source at a chosen
position; an ``OrderingItem`` is the real BM25 top-k instead, for comparing context orders.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ragline.answer.context import Context, Order, build_context, document_id
from ragline.corpora.base import Corpus, Question
from ragline.eval.answers import contains_answer
from ragline.index.store import Index, IndexSettings
from ragline.ingest.pipeline import IngestConfig, build_index
from ragline.types import Document, Hit

DEFAULT_TYPES: tuple[str, ...] = ("literal", "section", "version", "injection", "paraphrase")
DEFAULT_CHUNKER = "fixed:size=100,overlap=30"
DEFAULT_K = 5
DEFAULT_SEED = 0
# Large enough that no source is ever dropped for budget: the experiment controls what the reader
# sees, so build_context must keep all k sources (k=10 chunks of 100 words is ~1,500 tokens).
UNLIMITED = 1_000_000


@dataclass(frozen=True, slots=True)
class PositionItem:
    """A question, its gold source and the k-1 distractors (in BM25 order) it is read among."""

    question: Question
    gold: Hit
    distractors: tuple[Hit, ...]

    @property
    def k(self) -> int:
        return len(self.distractors) + 1

    def hits(self, position: int) -> list[Hit]:
        """The k hits with the gold one at ``position`` (1-based) and the distractors in their order.

        Ranks are renumbered 1..k in that order, so ``build_context(order="rank")`` shows them as given.
        """
        if not 1 <= position <= self.k:
            raise ValueError(f"position {position} is outside 1..{self.k}")
        ordered = [*self.distractors[: position - 1], self.gold, *self.distractors[position - 1 :]]
        return [replace(hit, rank=rank) for rank, hit in enumerate(ordered, start=1)]


@dataclass(frozen=True, slots=True)
class OrderingItem:
    """A question and its real BM25 top-k (best first), which holds its gold chunk at ``gold_rank``."""

    question: Question
    hits: tuple[Hit, ...]
    gold_rank: int


def eligible_questions(corpus: Corpus, types: Sequence[str] = DEFAULT_TYPES) -> list[Question]:
    """Answerable questions of ``types`` with exactly one gold document and evidence to find it by."""
    return [
        q
        for q in corpus.questions
        if q.type in types and not q.expected_abstain and len(q.gold_doc_ids) == 1 and q.evidence
    ]


def build_position_index(corpus: Corpus, chunker: str = DEFAULT_CHUNKER) -> Index:
    """An in-memory BM25 index of the corpus's chunks (no embedder: distractors come from BM25)."""
    return build_index(corpus.documents, IngestConfig(chunker), IndexSettings())


def _squash(text: str) -> str:
    return " ".join(text.split())


def _hit(chunk: Document, rank: int = 1, score: float = 0.0) -> Hit:
    return Hit(chunk.id, score, rank, chunk.title, chunk.text, chunk.metadata, chunk.parent)


def _readable(hit: Hit, question: Question) -> bool:
    """May the asking user read this chunk? Retrieval runs as the user, so others never show up."""
    acl = hit.metadata.get("acl") or ["all"]
    acl = acl if isinstance(acl, list) else [acl]
    return bool(set(map(str, acl)) & set(question.user_groups))


def _is_gold(hit: Hit, question: Question) -> bool:
    """Is ``hit`` a chunk of the gold document that holds the evidence sentence whole?"""
    doc_id, sentence = question.evidence[-1]  # the last evidence sentence carries the answer
    return document_id(hit) == doc_id and _squash(sentence) in _squash(hit.text)


def _ranking(index: Index, question: Question) -> list[Hit]:
    """Every chunk BM25 scores for the question (best first) that the asking user may read."""
    return [h for h in index.search(question.text, k=len(index)) if _readable(h, question)]


class _Chunks:
    """The index's chunks by document, read once."""

    def __init__(self, index: Index) -> None:
        self.by_doc: dict[str, list[Document]] = defaultdict(list)
        for chunk in index.documents():
            self.by_doc[chunk.document_id].append(chunk)
        for chunks in self.by_doc.values():
            chunks.sort(key=lambda c: int(c.metadata.get("start", 0)))

    def gold(self, question: Question, ranking: Sequence[Hit]) -> Hit | None:
        """The gold chunk: the one BM25 ranks best among those holding the evidence, else the first.

        Fixed chunks overlap, so the sentence can be whole in two of them; a paraphrased question
        may share no word with its gold chunk, so BM25 need not rank it at all.
        """
        for hit in ranking:
            if _is_gold(hit, question):
                return hit
        doc_id = question.evidence[-1][0]
        for chunk in self.by_doc.get(doc_id, []):
            if _is_gold(_hit(chunk), question):
                return _hit(chunk)
        return None


def hard_distractors(ranking: Sequence[Hit], question: Question, n: int) -> list[Hit]:
    """The best ``n`` chunks of ``ranking`` that are not from a gold document and hold no gold answer.

    Title and text are both checked: the reader sees the title in the source's tag.
    """
    gold_docs = set(question.gold_doc_ids)
    out: list[Hit] = []
    for hit in ranking:
        if document_id(hit) in gold_docs or contains_answer(f"{hit.title}\n{hit.text}", question.answers):
            continue
        out.append(hit)
        if len(out) == n:
            break
    return out


def build_items(
    index: Index, questions: Iterable[Question], k: int = DEFAULT_K
) -> tuple[list[PositionItem], list[dict[str, str]]]:
    """A ``PositionItem`` for each question that has a whole gold chunk and k-1 distractors.

    Returns the items and the skipped questions with the reason.
    """
    if k < 2:
        raise ValueError("k must be at least 2: one gold source and at least one distractor")
    chunks = _Chunks(index)
    items: list[PositionItem] = []
    skipped: list[dict[str, str]] = []
    for question in questions:
        ranking = _ranking(index, question)
        gold = chunks.gold(question, ranking)
        if gold is None:
            skipped.append({"qid": question.id, "reason": "no chunk holds the evidence sentence whole"})
            continue
        distractors = hard_distractors(ranking, question, k - 1)
        if len(distractors) < k - 1:
            skipped.append({"qid": question.id, "reason": f"fewer than {k - 1} distractors"})
            continue
        items.append(PositionItem(question, gold, tuple(distractors)))
    return items, skipped


def build_ordering_items(index: Index, questions: Iterable[Question], k: int = DEFAULT_K) -> list[OrderingItem]:
    """The questions whose gold chunk is in their BM25 top-k, with that top-k."""
    items = []
    for question in questions:
        top = _ranking(index, question)[:k]
        ranks = [h.rank for h in top if _is_gold(h, question)]
        if ranks:
            # Renumber after the ACL filter, so ranks are 1..k with no gaps.
            hits = tuple(replace(h, rank=r) for r, h in enumerate(top, start=1))
            gold_rank = next(r for r, h in enumerate(hits, start=1) if _is_gold(h, question))
            items.append(OrderingItem(question, hits, gold_rank))
    return items


def sample(items: Sequence[PositionItem], n: int | None, seed: int = DEFAULT_SEED) -> list[PositionItem]:
    """``n`` of ``items`` drawn with ``seed``, stratified by question type, in their original order.

    All of them when ``n`` is None or not smaller. Each type's items are shuffled with the seed and
    the types take turns, so a small sample (10 LLM questions) holds every type about equally
    rather than, by chance, four paraphrase questions and one literal one.
    """
    if n is None or n >= len(items):
        return list(items)
    rng = random.Random(seed)
    by_type: dict[str, list[int]] = defaultdict(list)
    for i, item in enumerate(items):
        by_type[item.question.type].append(i)
    queues = []
    for qtype in sorted(by_type):
        indices = by_type[qtype]
        rng.shuffle(indices)
        queues.append(indices)
    picked: list[int] = []
    while len(picked) < n:
        for queue in queues:
            if queue and len(picked) < n:
                picked.append(queue.pop(0))
    chosen = set(picked)
    return [item for i, item in enumerate(items) if i in chosen]


# --- contexts ----------------------------------------------------------------------------------


def position_context(item: PositionItem, position: int) -> Context:
    """The k-source context with the gold source at ``position``, in exactly that order.

    Near-duplicate removal is off: a superseded policy chunk can be nearly identical to the current
    one, and dropping either would change k and the gold position the experiment controls.
    """
    context = build_context(item.hits(position), budget=UNLIMITED, order="rank", near_duplicate=None)
    placed = context.source(position)
    if len(context) != item.k or placed is None or placed.chunk_id != item.gold.doc_id:
        raise RuntimeError(f"{item.question.id}: the gold source is not at position {position}")
    return context


def oracle_context(item: PositionItem) -> Context:
    """The gold source alone (Liu et al.'s oracle setting)."""
    return build_context([replace(item.gold, rank=1)], budget=UNLIMITED, order="rank", near_duplicate=None)


def ordering_context(item: OrderingItem, order: Order) -> Context:
    """The real top-k in ``order``; all k sources are kept so that only the order differs."""
    return build_context(list(item.hits), budget=UNLIMITED, order=order, near_duplicate=None)


def gold_position(context: Context, question: Question) -> int | None:
    """Where the gold source sits in ``context`` (1-based), or None."""
    return next((s.n for s in context.sources if _is_gold(s.hit, question)), None)
