"""The reflection critics: logistic regressions over ``ragline.reflect.features``, trained on training worlds.

Four critics, each a standardized logistic regression whose weights are checked in (``critics.json``,
written by ``python -m ragline.reflect.train``, which says what each was trained on and its held-out AUC):

* ``retrieve`` (Self-RAG's *Retrieve* token): the probability that a question needs the index at all;
* ``relevance`` (*ISREL*): the probability that a hit comes from a document that answers the question;
* ``retrieval`` (CRAG's evaluator): the probability that a whole retrieval holds an answering document;
* ``route``: a question's cheapest route that answered it on the training worlds (``none``, ``single``,
  ``agent``).

``Critics`` reads them for one index (its analyzer and document frequencies); the grader ``learned`` is the
``relevance`` critic as a ``grader`` component, beside ``lexical`` and ``cross-encoder``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ragline.components import register
from ragline.errors import InputError
from ragline.reflect.features import (
    IndexTerms,
    passage_features,
    question_features,
    retrieval_features,
)
from ragline.types import Hit

CRITICS_FILE = Path(__file__).with_name("critics.json")
CRITICS = ("retrieve", "relevance", "retrieval", "route")


@dataclass(frozen=True)
class LogisticCritic:
    """A logistic regression over named features, standardized by ``mean`` and ``scale``.

    Binary critics have one row of ``coef`` (the probability of ``classes[1]``); a multi-class one has a
    row per class (softmax).
    """

    name: str
    features: tuple[str, ...]
    classes: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[tuple[float, ...], ...]
    intercept: tuple[float, ...]
    card: dict[str, Any] = field(default_factory=dict)

    def probabilities(self, rows: Sequence[Sequence[float]]) -> np.ndarray:
        """One row per input: the probability of each class, in ``classes`` order."""
        x = (np.asarray(rows, dtype=np.float64).reshape(-1, len(self.features)) - self.mean) / self.scale
        logits = x @ np.asarray(self.coef).T + np.asarray(self.intercept)
        if len(self.classes) == 2:
            p = 1.0 / (1.0 + np.exp(-logits[:, 0]))
            return np.stack([1.0 - p, p], axis=1)
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True)

    def probability(self, rows: Sequence[Sequence[float]]) -> np.ndarray:
        """A binary critic's probability of its positive class (``classes[1]``) per row."""
        return self.probabilities(rows)[:, 1]

    @classmethod
    def fit(
        cls,
        name: str,
        features: Sequence[str],
        rows: Sequence[Sequence[float]],
        labels: Sequence[str],
        classes: Sequence[str],
        c: float = 1.0,
        card: dict[str, Any] | None = None,
    ) -> LogisticCritic:
        """Fit (scikit-learn's ``LogisticRegression``, L2, balanced class weights) on ``rows`` and ``labels``."""
        from sklearn.linear_model import LogisticRegression

        x = np.asarray(rows, dtype=np.float64)
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale == 0] = 1.0
        y = np.asarray([list(classes).index(label) for label in labels])
        model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000).fit((x - mean) / scale, y)
        return cls(
            name,
            tuple(features),
            tuple(classes),
            tuple(map(float, mean)),
            tuple(map(float, scale)),
            tuple(tuple(map(float, r)) for r in model.coef_),
            tuple(map(float, model.intercept_)),
            dict(card or {}),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str) -> LogisticCritic:
        try:
            critic = cls(
                str(data["name"]),
                tuple(data["features"]),
                tuple(data["classes"]),
                tuple(data["mean"]),
                tuple(data["scale"]),
                tuple(tuple(r) for r in data["coef"]),
                tuple(data["intercept"]),
                dict(data.get("card", {})),
            )
        except (KeyError, TypeError) as error:
            raise InputError(
                source, f"a critic needs name, features, classes, mean, scale, coef, intercept: {error}"
            ) from error
        n = len(critic.features)
        if len(critic.mean) != n or len(critic.scale) != n or any(len(r) != n for r in critic.coef):
            raise InputError(source, f"critic {critic.name!r}: mean, scale and each coef row need {n} values")
        return critic


def save_critics(critics: dict[str, LogisticCritic], path: Path = CRITICS_FILE) -> None:
    text = json.dumps({name: c.to_dict() for name, c in critics.items()}, indent=1, sort_keys=True)
    path.write_text(text + "\n", encoding="utf-8")


@lru_cache(maxsize=4)
def load_critics(path: str = str(CRITICS_FILE)) -> dict[str, LogisticCritic]:
    """The critics of ``path`` (default: the checked-in ``critics.json``), each checked."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise InputError(
            path, f"cannot read the reflection critics ({error}); train them with `python -m ragline.reflect.train`"
        ) from error
    except json.JSONDecodeError as error:
        raise InputError(f"{path}:{error.lineno}", f"not JSON: {error.msg}") from error
    missing = [name for name in CRITICS if name not in data]
    if missing:
        raise InputError(path, f"no critic {', '.join(missing)}; it has {', '.join(sorted(data))}")
    return {name: LogisticCritic.from_dict(data[name], f"{path}: {name}") for name in CRITICS}


class Critics:
    """The critics reading one index: its analyzer and document frequencies (refreshed with its generation)."""

    def __init__(self, index: Any, path: str | None = None) -> None:
        self.index, self.path = index, path or str(CRITICS_FILE)
        self._terms: IndexTerms | None = None

    @property
    def critics(self) -> dict[str, LogisticCritic]:
        return load_critics(self.path)

    @property
    def terms(self) -> IndexTerms:
        if self._terms is None or self._terms.generation != self.index.generation:
            self._terms = IndexTerms(self.index)
        return self._terms

    def question_row(self, question: str) -> list[float]:
        from ragline.agent.decompose import RuleDecomposer

        return question_features(question, self.terms, len(RuleDecomposer().decompose(question)))

    def needs_retrieval(self, question: str) -> float:
        """Self-RAG's Retrieve: P(the question needs the index)."""
        return float(self.critics["retrieve"].probability([self.question_row(question)])[0])

    def relevance(self, question: str, hits: Sequence[Hit]) -> tuple[list[float], list[list[float]]]:
        """ISREL of each hit, and the hits' feature rows."""
        if not hits:
            return [], []
        rows = passage_features(question, hits, self.terms)
        return [float(p) for p in self.critics["relevance"].probability(rows)], rows

    def retrieval_row(self, question: str, hits: Sequence[Hit]) -> list[float]:
        relevance, rows = self.relevance(question, hits)
        return retrieval_features(relevance, rows, self.question_row(question)[0])

    def retrieval_confidence(self, question: str, hits: Sequence[Hit]) -> float:
        """CRAG's evaluator: P(this retrieval holds a document that answers the question)."""
        return float(self.critics["retrieval"].probability([self.retrieval_row(question, hits)])[0])

    def route(self, question: str) -> dict[str, float]:
        """The route critic's probability of each route."""
        critic = self.critics["route"]
        return dict(zip(critic.classes, map(float, critic.probabilities([self.question_row(question)])[0])))


@register("grader", "learned")
class LearnedGrader:
    """ISREL: a logistic regression over index-aware coverage features, trained on training-world questions."""

    name = "learned"

    def __init__(self, index: Any = None, critics: str | None = None) -> None:
        if index is None:
            raise InputError("grader learned", "needs an index (its document frequencies weigh the terms)")
        self.critics = Critics(index, critics)
        self.path = critics

    def grade(self, question: str, hits: list[Hit]) -> list[float]:
        return self.critics.relevance(question, hits)[0]

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "critics": self.path or "built-in"}
