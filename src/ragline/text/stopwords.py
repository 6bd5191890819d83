"""Stopword lists, by name.

``lucene`` is the 33-word list of Lucene's EnglishAnalyzer (also bm25s's ``en``), the list behind the
Pyserini BM25 baselines that ragline reproduces. ``none`` keeps every token.
"""

from __future__ import annotations

LUCENE_ENGLISH = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)

# Chinese function words: particles and pronouns that carry no topic (a short, conservative list, so
# that single-character content words survive).
CHINESE = frozenset("的 了 和 是 在 也 就 都 而 及 与 或 之 其 这 那 个 着 吗 呢 吧 啊 把 被 对 从 向".split())

STOPWORDS: dict[str, frozenset[str]] = {
    "lucene": LUCENE_ENGLISH,
    "english": LUCENE_ENGLISH,
    "chinese": CHINESE | LUCENE_ENGLISH,
    "none": frozenset(),
}
