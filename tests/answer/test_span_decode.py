"""Decoding a span reader's logits, on hand-made logits: the best span, across windows and passages, no answer."""

from __future__ import annotations

import numpy as np
import pytest

from ragline.answer.questions import answer_kind, fits_asked_type, is_polar, offered_options
from ragline.answer.span_decode import Window, best_threshold, decode, option_best, window_best

# Pieces: [CLS] q q [SEP] p0 p1 p2 p3 [SEP]; passage pieces cover characters 0-3, 4-7, 8-11, 12-15.
OFFSETS = [None, None, None, None, (0, 3), (4, 7), (8, 11), (12, 15), None]


def window(start: list[float], end: list[float], passage: int = 0, offsets=OFFSETS) -> Window:
    return Window(passage, np.array(start, dtype=np.float32), np.array(end, dtype=np.float32), offsets)


def test_best_span_lies_in_the_passage_and_ends_after_it_starts():
    """Planted faults: scoring question pieces (the 9.0s), or allowing end < start (end logit 8 at p0 after
    start 7 at p2), would pick another span."""
    w = window([0, 9, 0, 0, 1, 0, 7, 0, 0], [0, 0, 9, 0, 8, 0, 0, 5, 0])
    score, first, last = window_best(w, max_tokens=10)
    assert (first, last) == (6, 7) and score == pytest.approx(12.0)
    choice = decode([w])
    assert (choice.start, choice.end, choice.passage) == (8, 15, 0)


def test_span_length_limit():
    """Planted fault: ignoring ``max_tokens`` keeps the long span p0..p3 (score 10 + 10)."""
    w = window([0, 0, 0, 0, 10, 0, 3, 0, 0], [0, 0, 0, 0, 0, 0, 0, 10, 0])
    assert window_best(w, max_tokens=4)[1:] == (4, 7)
    assert window_best(w, max_tokens=2)[1:] == (6, 7)  # 3 + 10 beats 10 + 0 within two pieces


def test_best_span_across_windows_and_passages_and_least_null():
    """The best span of every window of every passage; the null score is the least over windows.

    Planted faults: keeping the first window's span, or the largest null, changes the choice."""
    weak = window([5, 0, 0, 0, 2, 0, 0, 0, 0], [5, 0, 0, 0, 2, 0, 0, 0, 0], passage=0)
    strong = window([1, 0, 0, 0, 0, 0, 6, 0, 0], [1, 0, 0, 0, 0, 0, 0, 6, 0], passage=1)
    choice = decode([weak, strong])
    assert choice.passage == 1 and (choice.start, choice.end) == (8, 15)
    assert choice.score == pytest.approx(12.0) and choice.null == pytest.approx(2.0)
    assert choice.margin == pytest.approx(-10.0)


def test_margin_selection_compares_each_window_with_its_own_null():
    """``select="margin"``: a window's logits are defined up to a constant, so windows are compared by their best
    span against their own [CLS] pair. B's span scores highest raw (15) but its own null beats it (20); A's span
    beats its null by 6, C's falls 2 short of its null (-10, the least). Planted faults: comparing raw scores
    (picks B), or the least null over windows with the margin rule (margin -22 instead of A's -6)."""
    a = window([2, 0, 0, 0, 6, 0, 0, 0, 0], [2, 0, 0, 0, 4, 0, 0, 0, 0], passage=0)
    b = window([10, 0, 0, 0, 0, 0, 8, 0, 0], [10, 0, 0, 0, 0, 0, 0, 7, 0], passage=1)
    low = [-5, -9, -9, -9, -6, -6, -6, -6, -9]
    c = window(low, low, passage=2)
    by_score = decode([a, b, c])
    assert by_score.passage == 1 and by_score.margin == pytest.approx(-10.0 - 15.0)
    by_margin = decode([a, b, c], select="margin")
    assert by_margin.passage == 0 and (by_margin.start, by_margin.end) == (0, 3)
    assert by_margin.score == pytest.approx(10.0) and by_margin.margin == pytest.approx(4.0 - 10.0)
    assert decode([b], select="margin").margin == pytest.approx(20.0 - 15.0) == decode([b]).margin  # one window
    with pytest.raises(ValueError):
        decode([a], select="best")


def test_span_reader_names_its_window_selections():
    from ragline.answer.span_reader import SpanReader
    from ragline.errors import ConfigError

    assert SpanReader(select="margin").config()["select"] == "margin"
    with pytest.raises(ConfigError, match="select='best'"):
        SpanReader(select="best")


def test_no_answer_when_cls_wins():
    """A window whose [CLS] pair beats every span: the margin is positive (no answer at threshold 0)."""
    w = window([8, 0, 0, 0, 1, 0, 0, 0, 0], [8, 0, 0, 0, 1, 0, 0, 0, 0])
    choice = decode([w])
    assert choice.margin == pytest.approx(16.0 - 2.0) and choice.margin > 0


def test_a_window_with_no_passage_pieces_gives_no_span():
    w = window([1, 2, 3], [1, 2, 3], offsets=[None, None, None])
    assert decode([w]).passage is None and decode([]).passage is None


def test_threshold_maximizes_f1_over_answerable_and_unanswerable():
    """Margins of three answerable (F1 1, 1, 0.5) and two unanswerable examples; the best cut answers the
    three answerable ones (margins -5, -3, -1) and declines the others (margins 2, 4). Planted fault: not
    crediting a declined unanswerable example (abstaining on all scores 0) gives F1 2.5 / 5."""
    margins = [-5.0, -3.0, -1.0, 2.0, 4.0]
    f1s = [1.0, 1.0, 0.5, 0.0, 0.0]
    answerable = [True, True, True, False, False]
    threshold, f1 = best_threshold(margins, f1s, answerable)
    assert -1.0 <= threshold < 2.0
    assert f1 == pytest.approx((1 + 1 + 0.5 + 1 + 1) / 5)


def test_balanced_threshold_weighs_both_kinds_equally_whatever_their_share():
    """Five answerable examples (F1 1, margins -4, -3, -2, 1, 2) and one unanswerable (margin 0). Counted one
    by one, answering all six is best (5 of 6 right); weighed by kind, the one unanswerable example weighs as
    much as the five answerable ones, and declining it (and the two answerable examples above it) is best:
    half of 3/5 plus half of 1. Planted fault: ``balanced`` ignored fails."""
    margins = [-4.0, -3.0, -2.0, 1.0, 2.0, 0.0]
    f1s = [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]
    answerable = [True, True, True, True, True, False]
    threshold, f1 = best_threshold(margins, f1s, answerable)
    assert threshold >= 2.0 and f1 == pytest.approx(5 / 6)
    threshold, f1 = best_threshold(margins, f1s, answerable, balanced=True)
    assert -2.0 <= threshold < 0.0 and f1 == pytest.approx(0.5 * 3 / 5 + 0.5 * 1)


def test_polar_questions():
    assert is_polar("Were Scott Derrickson and Ed Wood of the same nationality?")
    assert is_polar("Is the Laleli Mosque in Turkey?")
    assert not is_polar("Which is older, the mosque or the church?")
    assert not is_polar("Was the film directed by Tim Burton or Ed Wood?")
    assert not is_polar("What is the capital of France?")
    # the question is the last sentence (planted fault checked: reading only the first word misses it)
    assert is_polar("The director Armando Iannucci has an OBE. Does the director Puneet Sira also have one?")
    assert (
        answer_kind("The director Armando Iannucci has an OBE. Does the director Puneet Sira also have one?") == "yesno"
    )
    assert answer_kind("Was the film directed by Tim Burton or Ed Wood?") != "yesno"  # it asks for a name


@pytest.mark.parametrize(
    ("question", "answer", "fits"),
    [
        ("What is the pay band for a team lead?", "Elena Halloran", False),
        ("What is the pay band for a team lead?", "$70,000 to $90,000", True),
        ("How many children did she have?", "three", True),
        ("How many children did she have?", "Paris", False),
        ("What is the pay band for a senior field technician?", "Senior Field Technician (grade T3)", False),
        ("What is the pay band for a senior field technician?", "Band 4", True),
        ("How many incidents did SS-833 cause?", "SS-833", False),  # a digit inside a code is no count
        ("How long must a new employee wait?", "a week", True),
        ("How long must a new employee wait?", "the manager", False),
        ("When did the mosque open?", "in March", True),  # dates are not checked: a month alone has no pattern
        ("Who leads the team?", "the manager", True),
    ],
)
def test_an_answer_must_hold_the_quantity_a_question_asks_for(question: str, answer: str, fits: bool) -> None:
    assert fits_asked_type(question, answer) is fits


@pytest.mark.parametrize(
    ("question", "options"),
    [
        ("Which plant is larger, the Pterocarya or the Cotula?", ("Pterocarya", "Cotula")),
        ("Which band was formed first The Exies or Circus Diablo ?", ("Exies", "Circus Diablo")),
        ("Who is the oldest, Sid Haig or Vic Darchinyan?", ("Sid Haig", "Vic Darchinyan")),
        ("Does the bus run daily or weekly?", None),  # no wh-word: polar
        ("Who directed the film shot in or around Leland?", None),  # " or " in a clause of a who-question
        ("What machine does not define BQP or QMA?", None),  # its answer is neither
        ("What is the capital of France?", None),
    ],
)
def test_the_alternatives_a_question_offers(question: str, options: tuple[str, str] | None) -> None:
    assert offered_options(question) == options


def test_an_offered_option_is_chosen_by_its_span_score_over_a_better_free_span():
    """Passage "Oak tall Red Elm" (pieces 0-3, 4-8, 9-12, 13-16): the free span is "tall", an option neither;
    of the options "Oak" and "Red Elm", "Red Elm" scores higher (start of "Red" + end of "Elm"). Planted fault
    checked: the option's score read at its first piece for both logits (``start[first] + end[first]``) picks
    "Oak"."""
    text = "Oak tall Red Elm"
    offsets = [None, None, None, None, (0, 3), (4, 8), (9, 12), (13, 16), None]
    w = window([0, 0, 0, 0, 2, 9, 3, 0, 0], [0, 0, 0, 0, 2, 9, 0, 4, 0], offsets=offsets)
    free = decode([w])
    assert text[free.start : free.end] == "tall"
    chosen = option_best([w], [text], ("oak", "Red Elm"), free.null)
    assert chosen is not None and text[chosen.start : chosen.end] == "Red Elm" and chosen.score == 7.0
    assert option_best([w], [text], ("Ash", "Pine"), free.null) is None  # neither occurs: the free span stands
    assert option_best([w], ["Oaks tall Red Elmo"], ("Oak", "Red Elm"), free.null) is None  # inside longer words
