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

Where things are: ``items`` (questions, gold sources, distractors and their contexts), ``experiment``
(reading, grading and the whole run) and ``plot`` (the curves).
"""

from ragline.eval.position.experiment import (
    DEFAULT_LLM,
    DEFAULT_LLM_QUESTIONS,
    ReaderRun,
    default_readers,
    run,
    run_orderings,
    run_positions,
)
from ragline.eval.position.items import (
    DEFAULT_CHUNKER,
    DEFAULT_K,
    DEFAULT_SEED,
    DEFAULT_TYPES,
    UNLIMITED,
    OrderingItem,
    PositionItem,
    build_items,
    build_ordering_items,
    build_position_index,
    eligible_questions,
    gold_position,
    hard_distractors,
    oracle_context,
    ordering_context,
    position_context,
    sample,
)
from ragline.eval.position.plot import plot_curves

__all__ = [
    "DEFAULT_CHUNKER",
    "DEFAULT_K",
    "DEFAULT_LLM",
    "DEFAULT_LLM_QUESTIONS",
    "DEFAULT_SEED",
    "DEFAULT_TYPES",
    "UNLIMITED",
    "OrderingItem",
    "PositionItem",
    "ReaderRun",
    "build_items",
    "build_ordering_items",
    "build_position_index",
    "default_readers",
    "eligible_questions",
    "gold_position",
    "hard_distractors",
    "oracle_context",
    "ordering_context",
    "plot_curves",
    "position_context",
    "run",
    "run_orderings",
    "run_positions",
    "sample",
]
