"""Answer normalization of the official SQuAD script: the form in which answers are compared.

Lowercase, drop punctuation, drop the articles a / an / the, collapse whitespace (SQuAD v1.1,
Rajpurkar et al., EMNLP 2016; kept unchanged by the v2.0 script). It sits in ``text/`` because the
readers, the support check and the answer metrics all compare answers this way.
"""

from __future__ import annotations

import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lowercase, remove punctuation, articles and extra whitespace (official SQuAD script, in its order)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())
