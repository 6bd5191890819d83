"""What the extractive reader scores: a candidate span, the chunk and sentence it is read from, and the score.

A candidate's score is its type fit (how well its kind answers what the question asks, ``questions.py``) times
:func:`mix`, a weighted sum of four features: the question terms its sentence and chunk hold (overlap), how near
the span is to them (proximity), whether it stands beside the noun asked about (adjacency), and its source's rank.
The factors below lower or raise the fit for what a span's neighbourhood says about it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragline.answer.questions import QuestionInfo
from ragline.answer.spans import DATE, DURATION, ID, MONEY, NUMBER, PERCENT, TIME, YEAR
from ragline.types import Hit

# Feature weights: what makes a sentence and a span in it likely to hold the answer.
W_OVERLAP, W_PROXIMITY, W_ADJACENT, W_RANK = 0.6, 0.15, 0.1, 0.15
TITLE_TERM_WEIGHT = 1.0  # a question term in the chunk's title or section, not in the sentence
CHUNK_TERM_WEIGHT = 0.35  # a question term elsewhere in the chunk
CLASS_MISMATCH = 0.6  # "Sable Creek substation" when a crew was asked for
NO_CLASS = 0.7  # "which depot": a name with no noun of the kind next to it
REFERENT = 0.3  # "the Asset Works West team" when the question is about "the team that ...": its subject
SUPERSEDED_FACTOR = 0.5  # a source whose metadata says it was superseded
MAX_CELL_WORDS = 8  # a table cell up to this long is a candidate answer as a whole
QUANTITIES = frozenset({NUMBER, MONEY, PERCENT, DURATION, YEAR, DATE, TIME, ID})
HEAD_FIT = 0.9  # a span of an accepted type right beside the noun asked about ("which algorithm": "the LZ77 algorithm")
LIST_PART = 0.9  # an item of a list, when the question asks for several things
TABLE_FIT = 0.9  # a table cell under a column that names what the question asks about: the column types it


@dataclass(slots=True)
class Candidate:
    """A scored answer span: its text, where it came from and why it scored as it did."""

    text: str
    score: float
    hit: Hit
    n: int  # source number (context) or position (plain hit list), 1-based
    sentence: str
    start: int  # character offsets of the span in ``hit.text``
    end: int
    types: tuple[str, ...]
    features: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class Chunk:
    """A hit prepared for reading: its number, terms (title and body), literal keys, normalized text."""

    n: int
    position: int
    hit: Hit
    title_terms: set[str]
    terms: set[str]
    keys: set[str]
    normalized: str


@dataclass(slots=True)
class Sentence:
    """A sentence prepared for scoring: word offsets and stems, where question terms occur, its overlap."""

    text: str
    offset: int
    starts: list[int]
    stems: list[str | None]
    matched: list[int]
    overlap: float


def mix(features: dict[str, float]) -> float:
    """The weighted features of a candidate (its fit and version factor apart)."""
    return (
        W_OVERLAP * features["overlap"]
        + W_PROXIMITY * features["proximity"]
        + W_ADJACENT * features["adjacent"]
        + W_RANK * features["rank_prior"]
    )


def passes_gate(info: QuestionInfo, chunk: Chunk) -> bool:
    """Every literal and name of the question occurs in the chunk (title and section included)."""
    return all(k in chunk.keys for k in info.literals) and all(f" {n} " in chunk.normalized for n in info.names)


def proximity(matched: list[int], first: int, last: int) -> float:
    """1 / (1 + d/4), d the word distance from the span to the nearest question term outside it."""
    distances = [first - i for i in matched if i < first] + [i - last for i in matched if i > last]
    return 1.0 / (1.0 + min(distances) / 8.0) if distances else 0.0
