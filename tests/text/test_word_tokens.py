"""The word tokenizer's fast routes give exactly the regex's tokens, and the analyzer's batch API its terms."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from ragline.text.analyzer import _WORD, PRESETS, _word_tokens

# SciFact-like pieces: numbers, units, Greek, accents, ligatures, CJK, underscores, odd whitespace.
PIECES = [
    "IL-6",
    "p53",
    "3.5%",
    "(n=1,024)",
    "TNF-α",
    "β-catenin",
    "Ca2+",
    "10⁻⁶",
    "½",
    "②",
    "x²",
    "résumé",
    "naïve",
    "ﬁbrosis",
    "snake_case",
    "C++",
    "e.g.,",
    "U.S.",
    "dog's",
    "cats’",
    "中文文本",
    "日本語の",
    "한국어",
    "混合text",
    "١٢٣",
    "٣.٥",
    "Ωμέγα",
    "ΣΟΦΟΣ",
    "İstanbul",
    "ǅemal",
    "straße",
    "\u00a0",
    "\u2028",
    "\x1c",
    "\t",
    "\u3000",
    "—",
    "…",
    "«quoted»",
    "a\u0301",
    "e\u0308",
    "😀",
    "𠀋",
    "tab\there",
    "",
    "-",
    "_",
    "__init__",
    "0x1F",
]


def _texts(seed: int, n: int = 200) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(PIECES) for _ in range(rng.randint(0, 40))]
        glue = rng.choice([" ", "  ", "\n", " ", ", "])
        out.append(glue.join(words))
    return out + ["", " ", "plain ascii words only", "ascii, with punctuation!", "naïve café words"]


@pytest.mark.parametrize("seed", range(5))
def test_word_tokens_are_the_regex_tokens(seed: int) -> None:
    for text in _texts(seed):
        assert _word_tokens(text) == _WORD.findall(text), repr(text)


def test_every_ascii_and_latin1_character_splits_as_the_regex_does() -> None:
    for code in range(0x250):
        for text in (chr(code), f"a{chr(code)}b", f"{chr(code)} x", f"x {chr(code)}"):
            assert _word_tokens(text) == _WORD.findall(text), hex(code)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_token_lists_mapped_through_terms_of_are_the_terms(preset: str) -> None:
    analyzer = PRESETS[preset]
    for block_chars in (7, 1 << 20):
        for text in _texts(11, n=60):
            pieces = analyzer.token_lists(text, "second part", block_chars=block_chars)
            tokens = [t for piece in pieces for t in piece]
            distinct = list(dict.fromkeys(tokens))
            term = dict(zip(distinct, analyzer.terms_of(distinct)))
            terms = [term[t] for t in tokens if term[t] is not None]
            assert terms == analyzer(f"{text}\nsecond part"), repr(text)
            assert Counter(terms) == analyzer.term_counts(text, "second part", block_chars=block_chars)
