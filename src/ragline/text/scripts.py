"""Which writing systems a text uses: CJK detection for the analyzer and the embedder warning.

CJK here means the scripts written without spaces between words (Han, Hiragana, Katakana) and Hangul,
whose runs the default analyzer indexes as character unigrams and bigrams. Detection costs nothing on
ASCII text and two regex searches on other text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache

# Code-point ranges of the letters of the CJK scripts, after NFKC (which maps half-width kana and Hangul
# to these). CJK punctuation is left out: it is no CJK text, and never part of a term.
_CJK_BMP = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3005-\u3007"  # 々 〆 〇
    "\u3021-\u3029\u3038-\u303a"  # Hangzhou numerals
    "\u3031-\u3035\u303b\u303c"  # kana repetition marks, 〻 〼
    "\u3041-\u3096\u309d-\u309f"  # Hiragana letters and marks (not the sound marks ゛ ゜)
    "\u30a1-\u30fa\u30fc-\u30ff"  # Katakana letters and marks (not the punctuation ゠ ・)
    "\u3130-\u318f"  # Hangul Compatibility Jamo
    "\u31f0-\u31ff"  # Katakana Phonetic Extensions
    "\u3400-\u4dbf"  # CJK Unified Ideographs Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\ua960-\ua97f"  # Hangul Jamo Extended-A
    "\uac00-\ud7ff"  # Hangul Syllables, Hangul Jamo Extended-B
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
)
_CJK_SUPPLEMENTARY = (
    "\U0001aff0-\U0001b16f"  # Kana Extended-A/B, Kana Supplement, Small Kana Extension
    "\U00020000-\U000323af"  # Han Extensions B-I and the Compatibility Ideographs Supplement
)


# The classes are compiled at first use (cached): compiling them costs ~3 ms, which a process that only
# analyzes ASCII text (an English query) never needs to pay.
@cache
def cjk_run() -> re.Pattern[str]:
    """A run of CJK letters."""
    return re.compile(f"[{_CJK_BMP}{_CJK_SUPPLEMENTARY}]+")


# Detection: two searches beat one over the joint class (re checks BMP ranges with a bitmap, and a
# supplementary range in the same class sends every character down the slow path): 2.5x faster on
# SciFact's non-ASCII documents.
@cache
def _has_cjk_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    return re.compile(f"[{_CJK_BMP}]"), re.compile(f"[{_CJK_SUPPLEMENTARY}]")


# Embedders trained on English text only: all-MiniLM-* (the default, see ragline.models.registry).
# Matched by name, without loading or resolving the model, so that a warning can never fail.
_ENGLISH_ONLY_EMBEDDER = re.compile(r"(?:^|[/\\])(?:all-minilm[\w.-]*|minilm)$", re.IGNORECASE)
MULTILINGUAL_EMBEDDER = "multilingual-e5-small"


def has_cjk(text: str) -> bool:
    """True when ``text`` holds a Han, Hiragana, Katakana or Hangul character (after NFKC, which the
    analyzer applies first: raw half-width kana or ㌀ are only found in normalized text)."""
    if text.isascii():
        return False
    bmp, supplementary = _has_cjk_patterns()
    return bmp.search(text) is not None or supplementary.search(text) is not None


def english_only_embedder(embedder: str | None) -> bool:
    """True for an embedder name or folder known to be English-only (the all-MiniLM family)."""
    return bool(embedder) and _ENGLISH_ONLY_EMBEDDER.search(embedder.strip().rstrip("/\\")) is not None


def cjk_embedder_warning(texts: Iterable[str], embedder: str | None) -> str | None:
    """A warning when some of ``texts`` hold CJK text and ``embedder`` is English-only, else None.

    ``embedder`` is the index's embedder name (``IndexSettings.embedder``; None or "none": BM25 only,
    which handles CJK through the analyzer). The embedder is not switched here: the multilingual model is
    several times slower, so choosing it is left to the user.
    """
    if not english_only_embedder(embedder):
        return None
    total = with_cjk = 0
    for text in texts:
        total += 1
        with_cjk += has_cjk(text) or (not text.isascii() and has_cjk(unicodedata.normalize("NFKC", text)))
    if not with_cjk:
        return None
    return (
        f"{with_cjk} of {total} documents contain Chinese, Japanese or Korean text, but the embedder "
        f"{embedder!r} is English-only, so dense and hybrid search will rank them poorly (BM25 is not affected). "
        f"Index with `--embedder {MULTILINGUAL_EMBEDDER}` for such documents (it is slower)."
    )
