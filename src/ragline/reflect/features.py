"""What the reflection critics read: features of a question against an index, of a hit against a question,
and of a whole retrieval.

Every feature is computed from the text and the index's own statistics (document frequencies over its
vocabulary), never from one retriever's scores or from a corpus's templates, so a critic trained on one
world's questions reads any index and any first stage:

* question (``QUESTION``): how much of the question the index knows (share of its terms with a document
  frequency, their mean and largest normalized IDF, the count of unknown terms), whether it is arithmetic
  the calculator can evaluate, whether it names identifiers (codes with letters and digits), how many
  clauses the rule decomposer cuts it into, its length;
* hit (``PASSAGE``): IDF-weighted coverage of the question's terms by the hit, by its best sentence and by
  its title, the share of the question's identifiers the hit holds, the lexical grader's grade, the rank;
* retrieval (``RETRIEVAL``): the best and mean relevance of its hits, the margin between the first two, the
  best sentence, passage and identifier coverage, and the question's known share.

Document frequencies count every document of the index whoever may read it, as BM25's IDF does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ragline.agent.calculator import ToolError, calculate
from ragline.agent.grader import LexicalGrader
from ragline.text.sentences import sentence_texts
from ragline.types import Hit

QUESTION = ("known", "idf_mean", "idf_max", "unknown", "arithmetic", "identifiers", "clauses", "length")
PASSAGE = ("coverage", "sentence", "title", "identifiers", "lexical", "rank")
RETRIEVAL = ("best", "mean", "margin", "sentence", "coverage", "identifiers", "known")

_IDENTIFIER = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w]+(?:-[\w]+)*\b")
_OPERATORS = {"plus": "+", "minus": "-", "times": "*", "multiplied by": "*", "divided by": "/", "over": "/"}
_ARITHMETIC = re.compile(
    r"^\s*(?:what is|what's|how much is|compute|calculate)\s+(?P<expr>[-+*/().\d\s]*\d[-+*/().\d\s]*"
    r"|(?:[-\d.]+\s+(?:plus|minus|times|multiplied by|divided by|over)\s+)+[-\d.]+)\s*\??\s*$",
    re.IGNORECASE,
)


def arithmetic_expression(question: str) -> str | None:
    """The arithmetic a question asks ("What is 17 plus 25?" -> "17 + 25"), if the calculator can evaluate it."""
    match = _ARITHMETIC.match(question)
    if match is None:
        return None
    expression = match.group("expr")
    for word, symbol in _OPERATORS.items():
        expression = re.sub(rf"\b{word}\b", symbol, expression, flags=re.IGNORECASE)
    try:
        calculate(expression)
    except (ToolError, ZeroDivisionError):
        return None
    return " ".join(expression.split())


def identifiers(text: str) -> set[str]:
    """Tokens that mix letters and digits (codes such as SS-495 or E-4471), lowercased."""
    return {m.group(0).lower() for m in _IDENTIFIER.finditer(text)}


class IndexTerms:
    """The analyzer and document frequencies of an index: which terms it knows, and how rare they are."""

    def __init__(self, index: Any) -> None:
        self.analyze: Callable[[str], list[str]] = index.settings.analyzer
        stats = index.collection_stats()
        self.n = max(int(stats.n), 1)
        self.vocab = stats.vocab
        self.df = np.sum([stats.df[f] for f in stats.df], axis=0) if stats.df else np.zeros(0)
        self.generation = index.generation
        self.lexical = LexicalGrader(index)

    def idf(self, term: str) -> float:
        """BM25's IDF of ``term``, divided by that of a term in one document (0 for an unknown term)."""
        at = self.vocab.get(term)
        df = int(self.df[at]) if at is not None and at < len(self.df) else 0
        if df == 0:
            return 0.0
        top = math.log(1 + (self.n - 0.5) / 1.5)
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5)) / top if top > 0 else 0.0

    def weights(self, question: str) -> dict[str, float]:
        """Each distinct term of ``question`` and its weight: its IDF, or 1 for a term the index lacks."""
        return {t: (self.idf(t) or 1.0) for t in dict.fromkeys(self.analyze(question))}


def question_features(question: str, terms: IndexTerms, clauses: int = 1) -> list[float]:
    """The ``QUESTION`` features of ``question`` against the index of ``terms``."""
    analyzed = list(dict.fromkeys(terms.analyze(question)))
    idfs = [terms.idf(t) for t in analyzed]
    known = [i for i in idfs if i > 0]
    return [
        len(known) / len(analyzed) if analyzed else 0.0,
        float(np.mean(known)) if known else 0.0,
        max(known, default=0.0),
        float(len(analyzed) - len(known)),
        1.0 if arithmetic_expression(question) else 0.0,
        float(len(identifiers(question))),
        float(clauses),
        math.log1p(len(analyzed)),
    ]


def _covered(weights: dict[str, float], present: set[str]) -> float:
    whole = sum(weights.values())
    return sum(w for t, w in weights.items() if t in present) / whole if whole else 0.0


def passage_features(question: str, hits: Sequence[Hit], terms: IndexTerms) -> list[list[float]]:
    """The ``PASSAGE`` features of each hit for ``question`` (one row per hit, in order)."""
    weights = terms.weights(question)
    wanted = identifiers(question)
    lexical = terms.lexical.grade(question, list(hits)) if hits else []
    rows = []
    for i, hit in enumerate(hits):
        body = set(terms.analyze(hit.text))
        sentences = [set(terms.analyze(s)) for s in sentence_texts(hit.text)] or [body]
        held = identifiers(f"{hit.title} {hit.text}")
        rows.append(
            [
                _covered(weights, body | set(terms.analyze(hit.title))),
                max(_covered(weights, s) for s in sentences),
                _covered(weights, set(terms.analyze(hit.title))),
                len(wanted & held) / len(wanted) if wanted else 1.0,
                lexical[i],
                1.0 / (i + 1),
            ]
        )
    return rows


def retrieval_features(relevance: Sequence[float], passages: Sequence[Sequence[float]], known: float) -> list[float]:
    """The ``RETRIEVAL`` features of a list of hits from their relevance and ``PASSAGE`` rows."""
    ordered = sorted(relevance, reverse=True)
    best = ordered[0] if ordered else 0.0
    return [
        best,
        float(np.mean(relevance)) if len(relevance) else 0.0,
        best - (ordered[1] if len(ordered) > 1 else 0.0),
        max((row[1] for row in passages), default=0.0),
        max((row[0] for row in passages), default=0.0),
        max((row[3] for row in passages), default=0.0),
        known,
    ]
