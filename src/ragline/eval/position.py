"""The position experiment: does a reader find the answer wherever the gold source sits in its context?

Liu et al., "Lost in the Middle: How Language Models Use Long Contexts" (arXiv 2307.03172, 2023;
TACL 2024) give an LLM k retrieved passages of which exactly one holds the answer, move that passage
from the first position to the last, and measure accuracy at each position. Accuracy is highest
with the answer at the start or the end of the context and lowest in the middle: a U-shaped curve
(Lecture 3, §6.2). This module repeats their multi-document QA setup on the Orrin Grid corpus:

- **Questions.** Answerable questions with one gold document (types ``literal``, ``section``,
  ``version``, ``injection``, ``paraphrase``): one gold passage per question, as in their setup.
  Multi-hop questions need two, and must-abstain questions have none.
- **The gold source** is the chunk of the gold document that holds the question's evidence
  sentence whole (so the answer is really in it).
- **Distractors** are the best BM25 chunks for the question that neither come from a gold
  document nor contain a gold answer. Liu et al. use the passages Contriever ranks highest that
  contain no annotated answer: hard distractors, relevant but not answering, and unable to make a
  reader right by accident. They are also the chunks the asking user may read (ACL), as retrieval
  would return them.
- **Positions.** The gold source goes to position 1..k; the distractors keep their BM25 order
  around it. The context is ``build_context(hits, budget=UNLIMITED, order="rank")`` with hit ranks
  renumbered to the wanted order, so the order shown is exactly the one built here.
- **Accuracy** is the share of questions graded ``correct`` (``ragline.eval.answers``: the string
  matches *and* a citation is in a gold document; an LLM answers in a sentence, so it is graded with
  ``match="contains"``). ``answer_match`` (the string alone) is Liu et al.'s measure: whether a gold
  answer occurs in the output.
- **Oracle.** The gold source alone, as Liu et al.'s oracle setting: the reader's ceiling without
  distractors.

A second measurement puts the lecture's counter-measure to the test: on the real BM25 top-k of each
question whose gold chunk is in it, the orders ``rank`` (retrieval order), ``ends`` (best sources
at both ends) and ``reverse`` (best last, next to the question) of ``build_context``.

Everything is deterministic: BM25 is, the sample is drawn with a fixed seed, the extractive reader
has no randomness and the LLM decodes greedily. LLM answers are cached on disk (``CachedLLM``), so
an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragline.answer.context import ORDERS, Context, Order, build_context, document_id
from ragline.answer.pipeline import Reader, build_reader
from ragline.corpora.base import Corpus, Question
from ragline.eval.answers import MatchMode, contains_answer, grade_question
from ragline.index.store import Index, IndexSettings
from ragline.ingest.pipeline import IngestConfig, build_index
from ragline.types import Document, Hit

DEFAULT_TYPES: tuple[str, ...] = ("literal", "section", "version", "injection", "paraphrase")
DEFAULT_CHUNKER = "fixed:size=100,overlap=30"
DEFAULT_K = 5
DEFAULT_SEED = 0
DEFAULT_LLM = "llm:model=local:qwen2.5-coder-0.5b,max_tokens=64"
# Measured on the 2 shared cores (load ~5): ~24 s per 5-source prompt (~880 tokens) with Qwen2.5-Coder-0.5B.
# 9 questions are 45 position calls, 9 short oracle calls (~8 s) and 24 ordering calls (8 of the 9 have
# their gold chunk in the BM25 top 5): ~29 minutes. Liu et al. used ~2,600 questions; 40 (--questions 40,
# ~2 hours here) is the size to run on an idle machine.
DEFAULT_LLM_QUESTIONS = 9
# Large enough that no source is ever dropped for budget: the experiment controls what the reader
# sees, so build_context must keep all k sources (k=10 chunks of 100 words is ~1,500 tokens).
UNLIMITED = 1_000_000

Log = Callable[[str], None]


# --- the items: one question, its gold source and its distractors ------------------------------


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
    return Hit(chunk.id, score, rank, chunk.title, chunk.text, chunk.metadata)


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
            self.by_doc[str(chunk.metadata.get("doc_id") or chunk.id)].append(chunk)
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


# --- reading and grading -----------------------------------------------------------------------


def _rate(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


_LETTER = {"correct": "C", "wrong": "W", "abstained": "A"}


def _read(reader: Reader, question: Question, context: Context, match: MatchMode) -> str:
    """The outcome letter (C / W / A) of ``reader`` on ``question`` over ``context``; W for a string-only
    match is told apart as ``w`` (right value, no gold citation)."""
    grade = grade_question(question, reader.read(question.text, context), context, match=match)
    if grade.outcome == "wrong" and grade.answer_match:
        return "w"
    return _LETTER[grade.outcome]


def _summary(outcomes: Sequence[str], questions: Sequence[Question]) -> dict[str, Any]:
    """Rates of one condition from its outcome letters, overall and by question type."""
    by_type: dict[str, list[str]] = defaultdict(list)
    for letter, question in zip(outcomes, questions):
        by_type[question.type].append(letter)
    return {
        "n": len(outcomes),
        "accuracy": _rate([o == "C" for o in outcomes]),
        "answer_match": _rate([o in "Cw" for o in outcomes]),
        "abstained": _rate([o == "A" for o in outcomes]),
        "accuracy_by_type": {t: _rate([o == "C" for o in rows]) for t, rows in sorted(by_type.items())},
    }


def run_positions(
    items: Sequence[PositionItem], reader: Reader, match: MatchMode = "em", log: Log | None = None
) -> dict[str, Any]:
    """Accuracy with the gold source at each position 1..k, and with the gold source alone.

    Questions are read one at a time through all positions, so an interrupted LLM run leaves whole
    curves in the cache. ``outcomes`` keeps one letter per position and question (C correct, W wrong,
    w right value without a gold citation, A abstained) for paired comparisons.
    """
    k = items[0].k if items else 0
    rows: list[str] = []
    oracle: list[str] = []
    started = time.perf_counter()
    for i, item in enumerate(items, start=1):
        q = item.question
        rows.append("".join(_read(reader, q, position_context(item, p), match) for p in range(1, k + 1)))
        oracle.append(_read(reader, q, oracle_context(item), match))
        if log is not None:
            elapsed = time.perf_counter() - started
            log(f"positions {i}/{len(items)} {q.id}: {rows[-1]} oracle {oracle[-1]} ({elapsed:.0f} s)")
    questions = [item.question for item in items]
    positions = [_summary([row[p] for row in rows], questions) for p in range(k)]
    return {
        "k": k,
        "n": len(items),
        "accuracy": [p["accuracy"] for p in positions],
        "answer_match": [p["answer_match"] for p in positions],
        "abstained": [p["abstained"] for p in positions],
        "accuracy_by_type": {t: [p["accuracy_by_type"].get(t) for p in positions] for t in _types(questions)},
        "oracle": _summary(oracle, questions),
        "outcomes": {q.id: row for q, row in zip(questions, rows)},
        "seconds": round(time.perf_counter() - started, 1),
    }


def run_orderings(
    items: Sequence[OrderingItem],
    reader: Reader,
    match: MatchMode = "em",
    orders: Sequence[Order] = ORDERS,
    log: Log | None = None,
) -> dict[str, Any]:
    """Accuracy of each context order on the same retrieved top-k, and where the gold source ended up."""
    out: dict[str, Any] = {"n": len(items), "gold_rank": _histogram(item.gold_rank for item in items)}
    questions = [item.question for item in items]
    started = time.perf_counter()
    letters: dict[str, list[str]] = {order: [] for order in orders}
    placed: dict[str, list[int]] = {order: [] for order in orders}
    for i, item in enumerate(items, start=1):
        for order in orders:
            context = ordering_context(item, order)
            letters[order].append(_read(reader, item.question, context, match))
            placed[order].append(gold_position(context, item.question) or 0)
        if log is not None:
            row = " ".join(f"{order}={letters[order][-1]}" for order in orders)
            log(f"orderings {i}/{len(items)} {item.question.id}: {row} ({time.perf_counter() - started:.0f} s)")
    for order in orders:
        summary = _summary(letters[order], questions)
        summary["gold_position"] = _histogram(placed[order])
        out[order] = summary
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def _types(questions: Iterable[Question]) -> list[str]:
    return sorted({q.type for q in questions})


def _histogram(values: Iterable[int]) -> dict[str, int]:
    counts: dict[int, int] = defaultdict(int)
    for value in values:
        counts[value] += 1
    return {str(v): counts[v] for v in sorted(counts)}


# --- the whole experiment ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReaderRun:
    """One reader of the experiment: its spec (``build_reader``), how many questions, how to match.

    ``questions`` None reads every eligible question; a number draws that many with the run's seed.
    """

    spec: str
    questions: int | None = None
    match: MatchMode = "em"
    orderings: bool = True


def default_readers(
    k: int = DEFAULT_K, llm_questions: int | None = DEFAULT_LLM_QUESTIONS, llm: str | None = DEFAULT_LLM
) -> list[ReaderRun]:
    """The extractive reader on every question, and the LLM (``llm``; None: none) on a sample.

    The extractive reader reads its ``top_k`` best-ranked sources only (5 by default); it is given
    ``top_k=k`` so that no position is out of its sight. Its score has a rank prior (a source further
    down counts a little less), the only position bias it has.
    """
    runs = [ReaderRun(f"extractive:top_k={k}", None, "em")]
    if llm:
        runs.append(ReaderRun(llm, llm_questions, "contains"))
    return runs


def run(
    corpus: Corpus,
    readers: Sequence[ReaderRun] | None = None,
    *,
    k: int = DEFAULT_K,
    seed: int = DEFAULT_SEED,
    chunker: str = DEFAULT_CHUNKER,
    types: Sequence[str] = DEFAULT_TYPES,
    log: Log | None = None,
    built: dict[str, Reader] | None = None,
) -> dict[str, Any]:
    """The position curve (and the ordering comparison) of each reader; a JSON-ready dict.

    ``built`` maps a spec to an already built reader (tests; sharing one LLM between runs).
    """
    readers = list(readers) if readers is not None else default_readers(k)
    index = build_position_index(corpus, chunker)
    eligible = eligible_questions(corpus, types)
    items, skipped = build_items(index, eligible, k)
    ordering_all = build_ordering_items(index, eligible, k)
    results: dict[str, Any] = {}
    for plan in readers:
        reader = (built or {}).get(plan.spec) or build_reader(plan.spec)
        chosen = sample(items, plan.questions, seed)
        chosen_ids = {item.question.id for item in chosen}
        # The same sampled questions in both measurements, so the two can be read side by side.
        ordering = [item for item in ordering_all if item.question.id in chosen_ids]
        say = (lambda message, name=plan.spec: log(f"[{name}] {message}")) if log is not None else None
        started = time.perf_counter()
        result: dict[str, Any] = {"spec": plan.spec, "reader": reader.config(), "match": plan.match}
        result["positions"] = run_positions(chosen, reader, plan.match, say)
        if plan.orderings:
            result["orderings"] = run_orderings(ordering, reader, plan.match, log=say)
        result["seconds"] = round(time.perf_counter() - started, 1)
        result.update(_llm_calls(reader))
        results[plan.spec] = result
        if (built or {}).get(plan.spec) is None:
            _close(reader)
    return {
        "experiment": "lost-in-the-middle",
        "corpus": corpus.name,
        "corpus_fingerprint": corpus.fingerprint(),
        "k": k,
        "seed": seed,
        "chunker": chunker,
        "types": list(types),
        "eligible": len(eligible),
        "items": len(items),
        "skipped": skipped,
        "ordering_items": len(ordering_all),
        "readers": results,
    }


def _llm_calls(reader: Reader) -> dict[str, Any]:
    """Cache hits and model calls of an LLM reader (CachedLLM counts them): how much a rerun reused."""
    llm = getattr(reader, "llm", None)
    if llm is None or not hasattr(llm, "misses"):
        return {}
    return {"llm_calls": {"cached": llm.hits, "model": llm.misses}}


def _close(reader: Reader) -> None:
    close = getattr(getattr(reader, "llm", None), "close", None)
    if callable(close):
        close()


# --- the plot ----------------------------------------------------------------------------------


def plot_curves(payload: dict[str, Any], path: str) -> None:
    """Accuracy vs position of the gold source, one line per reader; the gold source alone dashed.

    Two panels: graded correct (the value *and* a citation of the gold document, the lecture's rule)
    and the value alone (Liu et al.'s measure: does a gold answer occur in the output). They differ
    for the LLM when it answers without ``[n]`` markers and ragline cannot attribute the sentence.
    """
    import matplotlib

    matplotlib.use("Agg")  # no display: write the file only
    import matplotlib.pyplot as plt

    k = int(payload["k"])
    panels = [("accuracy", "correct (value and gold citation)"), ("answer_match", "value in the answer (Liu et al.)")]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for ax, (measure, title) in zip(axes, panels):
        for spec, result in payload["readers"].items():
            curve = result["positions"]
            ys = [float("nan") if a is None else a for a in curve[measure]]
            (line,) = ax.plot(range(1, k + 1), ys, marker="o", label=f"{_short(spec)} (n={curve['n']})")
            alone = curve["oracle"][measure]
            if alone is not None:
                ax.axhline(
                    alone, color=line.get_color(), linestyle="--", linewidth=1, label=f"{_short(spec)}, gold alone"
                )
        ax.set_xticks(range(1, k + 1))
        ax.set_xlabel(f"position of the gold source among {k}")
        ax.set_title(title, fontsize=10)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("share of questions")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"Lost in the middle on {payload['corpus']}: {k} sources, 1 gold + {k - 1} BM25 distractors")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _short(spec: str) -> str:
    """The plot label of a spec: the LLM's model name (``qwen2.5-coder-0.5b``), else the reader name."""
    name, _, rest = spec.partition(":")
    if name == "llm":
        model = next((p.split("=", 1)[1] for p in rest.split(",") if p.startswith("model=")), "llm")
        return model.split(":")[-1]
    return name
