"""Words of opposite meaning that often carry what a question asks ("the largest city", "what to run *after*
the upgrade"): general English pairs, read both ways, no corpus's.

Two uses: the span reader's training turns a question word into its opposite to make an unanswerable question
(SQuAD 2.0's "antonym" kind, ``train.reader_data.Antonyms``), and the support check refuses a sentence that says
the opposite of what was asked (``answer.support``).
"""

from __future__ import annotations

import re

_PAIRS = """
first last; earliest latest; earlier later; early late; before after; largest smallest; larger smaller;
biggest smallest; bigger smaller; highest lowest; higher lower; longest shortest; longer shorter; most least;
maximum minimum; best worst; better worse; oldest newest; older newer; north south; northern southern;
northernmost southernmost; east west; eastern western; easternmost westernmost; upper lower; inner outer;
internal external; increase decrease; increased decreased; increases decreases; increasing decreasing;
won lost; gained lost; win lose; wins loses; victory defeat; success failure; successful unsuccessful;
accept reject; accepted rejected; legal illegal; positive negative; major minor; strongest weakest;
stronger weaker; richest poorest; wealthiest poorest; hottest coldest; warmest coldest; heaviest lightest;
fastest slowest; faster slower; public private; ancient modern; begin end; began ended; started ended;
opened closed; male female; men women; above below; import export; imported exported; imports exports;
bought sold; buy sell; include exclude; included excluded; majority minority; previous next; allowed banned;
rarest commonest; cheapest costliest; youngest oldest
"""

# word -> its opposite; where a word is in two pairs, the first pair gives it ("lost" -> "won")
OPPOSITE: dict[str, str] = {}
for _pair in _PAIRS.split(";"):
    _a, _b = _pair.split()
    OPPOSITE.setdefault(_a, _b)
    OPPOSITE.setdefault(_b, _a)

_WORD = re.compile(r"[^\W\d_]+")


def lower_words(text: str) -> frozenset[str]:
    """The lower-cased words of ``text`` (letters only)."""
    return frozenset(w.lower() for w in _WORD.findall(text))


def turned_word(question_words: frozenset[str], text: str) -> str:
    """The question's word that ``text`` turns into its opposite ("after" where ``text`` says "before" and never
    "after"), else "". A question offering both ("upper or lower") turns nothing."""
    words = lower_words(text)
    for word in sorted(question_words):
        opposite = OPPOSITE.get(word)
        if opposite and opposite in words and word not in words and opposite not in question_words:
            return word
    return ""
