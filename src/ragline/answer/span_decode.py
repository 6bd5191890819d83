"""Decoding a span reader's logits: the best span of a window, across windows and passages, or no answer.

A span reader (``ragline.answer.span_reader``) scores every word piece of ``[CLS] question [SEP] passage
[SEP]`` as the start and as the end of the answer (the BERT reader of Devlin et al. 2019, the lecture's
§3). A passage longer than the model reads is cut into overlapping windows (``stride`` word pieces of
overlap), each scored on its own. Here, model-free:

- a span's score is ``start[i] + end[j]`` for ``i <= j < i + max_tokens``, both in the passage's part of the
  window (never the question or the padding);
- the best span is the highest score over every window of every passage;
- the "no answer" score is ``start[0] + end[0]`` (the ``[CLS]`` position, where unanswerable examples point
  in training), its least over the windows (a window that does not hold the answer always votes for no
  answer, so the smallest null score is the one to compare: the rule of the SQuAD 2.0 BERT baseline);
- the reader abstains when ``null - best > threshold``, the threshold calibrated on a dev slice by
  ``best_threshold`` (the official SQuAD 2.0 script's ``find_best_thresh``).

That compares raw logits across windows (``select="score"``). Training never does: its loss is a softmax over
one window's pieces, which a constant added to all of them leaves unchanged, so a window's logits mean something
only against each other. ``select="margin"`` compares windows by what is defined: each window's best span
against its own ``[CLS]`` pair (``best_w - null_w``, the log-odds of a span over no answer there); the answer is
the span of the window where it is largest, and its margin that window's ``null_w - best_w``. With one window
both rules agree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Window:
    """One window's logits and where its word pieces lie in its passage.

    ``offsets[i]`` is the (start, end) character span of word piece ``i`` in the passage, or ``None`` for a
    piece outside the passage (``[CLS]``, the question, ``[SEP]``, padding). ``passage`` numbers the passage.
    """

    passage: int
    start_logits: np.ndarray
    end_logits: np.ndarray
    offsets: Sequence[tuple[int, int] | None]


@dataclass(frozen=True, slots=True)
class SpanChoice:
    """The decoded answer: passage number, character span, span score, null score and their margin."""

    passage: int | None
    start: int
    end: int
    score: float
    null: float

    @property
    def margin(self) -> float:
        """``null - score``: above the threshold, no answer."""
        return self.null - self.score


def window_best(window: Window, max_tokens: int) -> tuple[float, int, int] | None:
    """(score, first piece, last piece) of the window's best passage span of at most ``max_tokens`` pieces."""
    inside = np.array([o is not None for o in window.offsets], dtype=bool)
    n = min(len(inside), len(window.start_logits))
    if not inside[:n].any():
        return None
    neg = np.float64(-1e30)
    start = np.where(inside[:n], window.start_logits[:n].astype(np.float64), neg)
    end = np.where(inside[:n], window.end_logits[:n].astype(np.float64), neg)
    scores = start[:, None] + end[None, :]
    i, j = np.indices(scores.shape)
    scores = np.where((j >= i) & (j < i + max_tokens), scores, neg)
    flat = int(np.argmax(scores))
    first, last = divmod(flat, n)
    if scores[first, last] <= neg / 2:
        return None
    return float(scores[first, last]), first, last


SELECTIONS = ("score", "margin")  # how windows are compared; see the module doc


def decode(windows: Sequence[Window], max_tokens: int = 30, select: str = "score") -> SpanChoice:
    """The best span over every window (of every passage) and its null score; ``select`` as in the module doc:
    ``score``, the highest span score and the least null over all windows; ``margin``, the window whose best span
    beats its own null by the most, with that window's null."""
    if select not in SELECTIONS:
        raise ValueError(f"select={select!r}: one of {SELECTIONS}")
    best: tuple[float, Window, int, int, float] | None = None  # key, window, first, last, span score
    null = least_null = float("inf")
    for window in windows:
        own_null = float(window.start_logits[0] + window.end_logits[0])
        least_null = min(least_null, own_null)
        found = window_best(window, max_tokens)
        if found is None:
            continue
        key = found[0] - own_null if select == "margin" else found[0]
        if best is None or key > best[0]:
            best = (key, window, found[1], found[2], found[0])
            null = own_null
    if best is None:
        return SpanChoice(None, 0, 0, float("-inf"), least_null)
    _, window, first, last, score = best
    start = window.offsets[first][0]  # type: ignore[index]
    end = window.offsets[last][1]  # type: ignore[index]
    return SpanChoice(window.passage, start, end, score, null if select == "margin" else least_null)


def best_threshold(
    margins: Sequence[float],
    f1_if_answered: Sequence[float],
    answerable: Sequence[bool],
    balanced: bool = False,
) -> tuple[float, float]:
    """(threshold, mean F1): the threshold on ``null - best`` that maximizes the mean F1 over examples.

    An example answers when its margin is at most the threshold: it then scores ``f1_if_answered`` (0 for an
    unanswerable one); abstaining scores 1 on an unanswerable example, 0 on an answerable one. ``balanced``
    weighs the two kinds equally (each answerable example 1 / its count, each unanswerable 1 / its count, the
    mean over both halves returned): the threshold then does not lean on how many no-answer examples the
    calibration set happened to hold, which a reader in use cannot know.
    """
    n = len(margins)
    if n == 0:
        return 0.0, 0.0
    n_no = sum(1 for a in answerable if not a)
    weight_has, weight_no = (0.5 / max(1, n - n_no), 0.5 / max(1, n_no)) if balanced else (1 / n, 1 / n)
    abstain_all = n_no * weight_no
    order = sorted(range(n), key=lambda i: margins[i])
    best_score, best_threshold_value = abstain_all, min(margins) - 1.0
    score = abstain_all
    for position, i in enumerate(order):
        score += f1_if_answered[i] * weight_has if answerable[i] else -weight_no
        following = margins[order[position + 1]] if position + 1 < n else None
        if following is not None and following == margins[i]:
            continue  # ties answer together
        if score > best_score + 1e-12:
            best_score = score
            best_threshold_value = margins[i] if following is None else (margins[i] + following) / 2
    return float(best_threshold_value), best_score


def option_best(
    windows: Sequence[Window], passages: Sequence[str], options: Sequence[str], null: float
) -> SpanChoice | None:
    """The best-scored occurrence of one of ``options`` (a "which, A or B?" question's alternatives) in the
    passages, scored as any span (its first piece's start logit plus its last piece's end logit); None when no
    option occurs in a window. The question says the answer is one of them, so only they are candidates."""
    best: tuple[float, int, int, int] | None = None
    for window in windows:
        text = passages[window.passage]
        pieces = [(i, o) for i, o in enumerate(window.offsets[: len(window.start_logits)]) if o is not None]
        for option in options:
            for found in re.finditer(rf"(?<!\w){re.escape(option)}(?!\w)", text, re.IGNORECASE):  # whole words
                at, end = found.span()
                inside = [(i, s, e) for i, (s, e) in pieces if s >= at and e <= end]
                # the whole option in this window: its first and last pieces reach its first and last character
                if inside and inside[0][1] == at and inside[-1][2] == end:
                    score = float(window.start_logits[inside[0][0]] + window.end_logits[inside[-1][0]])
                    if best is None or score > best[0]:
                        best = (score, window.passage, at, end)
    if best is None:
        return None
    score, passage, start, end = best
    return SpanChoice(passage, start, end, score, null)
