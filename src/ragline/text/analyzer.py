"""Text analysis: the same function turns documents and queries into index terms.

An ``Analyzer`` is a small, serializable recipe (normalize -> tokenize -> stopwords -> stem). It is
recorded in every index manifest, so a query can never be analyzed differently from the documents it
searches. Presets:

- ``english`` (default): NFKC, lowercase, word tokens, English possessive ``'s`` removed, Lucene's 33
  stopwords, Snowball English stemmer (PyStemmer). Close to Lucene's EnglishAnalyzer, which uses Porter;
  ``english-porter`` selects that stemmer for exact Pyserini comparisons. Runs of CJK characters (Han,
  Hiragana, Katakana, Hangul) become character unigrams and overlapping bigrams, so Chinese, Japanese and
  Korean text (alone or mixed with English) is searchable with the default; text without CJK characters
  gets exactly the terms of the word tokenizer.
- ``english-porter``: ``english`` with Porter stemming and plain word tokens (as Lucene's
  EnglishAnalyzer, for Pyserini parity).
- ``simple``: NFKC, lowercase, word tokens; no stopwords, no stemming.
- ``chinese``: jieba word segmentation (search mode) for Han text, English rules for the rest.
- ``cjk-bigram``: the ``english`` tokenization with a Chinese stopword list added (its single-character
  function words are dropped as unigrams; bigrams keep them).

Tokenizers: ``word`` (runs of word characters), ``cjk-bigram`` (word runs; CJK runs as unigrams plus
bigrams), ``jieba`` (word runs; Han runs segmented by jieba).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from functools import cache, cached_property
from typing import Any

from ragline.errors import ConfigError
from ragline.text.scripts import cjk_run, has_cjk
from ragline.text.stopwords import STOPWORDS

_WORD = re.compile(r"\w+", re.UNICODE)
# ASCII characters that are not ``\w`` (everything but letters, digits and "_"), mapped to a space.
_ASCII_NON_WORD = str.maketrans({chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")})


@cache
def _han_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Han runs, and Han runs or runs of other word characters ("使用Python进行" is three pieces, not
    "使用" + "python进行"); compiled at the first ``jieba`` tokenization (~2 ms that others never pay)."""
    han = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
    return re.compile(han), re.compile(han + r"|[^\W\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
TOKENIZERS = ("word", "jieba", "cjk-bigram")
# Texts longer than this are analyzed a block at a time by ``term_counts``, so the token strings of a
# huge document (tens of bytes each) never all exist at once.
BLOCK_CHARS = 1 << 20
STEM_CACHE_LIMIT = 2_000_000  # distinct tokens whose stems are kept (per analyzer) before starting afresh


@dataclass(frozen=True)
class Analyzer:
    """A text-to-terms recipe. Two analyzers with equal fields produce identical terms."""

    name: str = "english"
    tokenizer: str = "cjk-bigram"
    lowercase: bool = True
    stopwords: str = "lucene"
    stemmer: str | None = "english"
    min_token_length: int = 1

    def __post_init__(self) -> None:
        if self.tokenizer not in TOKENIZERS:
            raise ConfigError(f"unknown tokenizer {self.tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")
        if self.stopwords not in STOPWORDS:
            raise ConfigError(f"unknown stopword list {self.stopwords!r}; choose one of {', '.join(STOPWORDS)}")
        if self.stemmer is not None:
            import Stemmer

            if self.stemmer not in Stemmer.algorithms():
                raise ConfigError(
                    f"unknown stemmer {self.stemmer!r}; PyStemmer offers {', '.join(Stemmer.algorithms())}"
                )

    # -- the pipeline -------------------------------------------------------------------------
    def __call__(self, text: str) -> list[str]:
        """Terms of ``text``, in order (duplicates kept: term frequency matters)."""
        tokens = self._tokenize(self._normalize(text))
        stop = self._stopwords
        if stop or self.min_token_length > 1:
            tokens = [t for t in tokens if t not in stop and len(t) >= self.min_token_length]
        if self.stemmer is not None:
            tokens = self._stem(tokens)
        return tokens

    def analyze_many(self, texts: list[str]) -> list[list[str]]:
        return [self(t) for t in texts]

    def term_counts(self, *texts: str, block_chars: int = BLOCK_CHARS) -> dict[str, int]:
        """Term -> frequency in ``"\n".join(texts)``: exactly ``Counter(self(...))``, in bounded memory.

        Terms come in order of first occurrence. Tokens are counted first, so stopwords and stems are
        looked up once per distinct token. A long text is cut into blocks of about ``block_chars``
        characters, each ending just after a space or line break, and no step sees across such a cut:
        NFKC composes nothing with a space or line break, lowercasing's final-sigma rule stops at
        whitespace, and no token or possessive spans one. Neither does the joining line break, so a
        long title and text are read as two texts, never copied into one.
        """
        counts: dict[str, int] = {}
        if sum(map(len, texts)) <= block_chars:  # short: one pass, and the joined copy is small
            self._count_block("\n".join(texts), counts)
            return counts
        for text in texts:
            for block in _blocks(text, block_chars):
                self._count_block(block, counts)
        return counts

    def token_lists(self, *texts: str, block_chars: int = BLOCK_CHARS) -> list[list[str]]:
        """The tokens of ``"\n".join(texts)`` before stopwords and stemming, one list per block.

        Mapping each token through ``terms_of`` and dropping the ``None`` gives ``self(text)``. Blocks as
        in ``term_counts``: a short text is one list.
        """
        if len(texts) == 1 and len(texts[0]) <= block_chars:
            return [self._tokenize(self._normalize(texts[0]))]
        if sum(map(len, texts)) <= block_chars:
            return [self._tokenize(self._normalize("\n".join(texts)))]
        return [self._tokenize(self._normalize(block)) for text in texts for block in _blocks(text, block_chars)]

    @property
    def keeps_every_token(self) -> bool:
        """Is every token its own term (no stopwords, no stemming, no minimum length)?"""
        return not self._stopwords and self.stemmer is None and self.min_token_length <= 1

    def terms_of(self, tokens: list[str]) -> list[str | None]:
        """The term each of ``tokens`` (from ``token_lists``) becomes, or None where it is dropped."""
        stop, shortest = self._stopwords, self.min_token_length
        kept = [t for t in tokens if t not in stop and len(t) >= shortest] if stop or shortest > 1 else tokens
        stems = dict(zip(kept, self._stem(kept) if self.stemmer is not None else kept))
        return [stems.get(t) for t in tokens]

    def _normalize(self, text: str) -> str:
        text = unicodedata.normalize("NFKC", text)
        if self.lowercase:
            text = text.lower()
        if "'" in text or "’" in text:  # the regex's scan costs more than these two searches
            text = _POSSESSIVE.sub("", text)
        return text

    def _count_block(self, text: str, counts: dict[str, int]) -> None:
        tokens = Counter(self._tokenize(self._normalize(text)))
        stop, shortest = self._stopwords, self.min_token_length
        if stop or shortest > 1:
            tokens = {t: n for t, n in tokens.items() if t not in stop and len(t) >= shortest}
        get = counts.get
        if self.stemmer is None:
            for term, n in tokens.items():
                counts[term] = get(term, 0) + n
            return
        stems = self._stem_cache
        if len(stems) > STEM_CACHE_LIMIT:
            stems.clear()
        missing = [t for t in tokens if t not in stems]
        if missing:
            stems.update(zip(missing, self._stemmer.stemWords(missing)))
        for token, n in tokens.items():
            term = stems[token]
            counts[term] = get(term, 0) + n

    def _tokenize(self, text: str) -> list[str]:
        if self.tokenizer == "word":
            return _word_tokens(text)
        if self.tokenizer == "cjk-bigram":
            if not has_cjk(text):  # the common case, checked cheaply: exactly the word tokens
                return _word_tokens(text)
            return _cjk_bigram_tokens(text)
        tokens: list[str] = []
        han, han_or_word = _han_patterns()
        for piece in han_or_word.findall(text):
            if not han.fullmatch(piece):
                tokens.append(piece)
            else:
                tokens.extend(w for w in self._jieba.cut_for_search(piece) if w.strip())
        return tokens

    def _stem(self, tokens: list[str]) -> list[str]:
        # Stemming is the slow step; words repeat (Zipf), so a per-analyzer cache pays off quickly.
        cache = self._stem_cache
        if len(cache) > STEM_CACHE_LIMIT:  # cleared before the look-up, so every token is stemmed anew
            cache.clear()
        missing = [t for t in set(tokens) if t not in cache]
        if missing:
            cache.update(zip(missing, self._stemmer.stemWords(missing)))
        return [cache[t] for t in tokens]

    # -- lazily built helpers (not part of equality or serialization) -------------------------------
    @cached_property
    def _stopwords(self) -> frozenset[str]:
        return STOPWORDS[self.stopwords]

    @cached_property
    def _stemmer(self) -> Any:
        import Stemmer

        return Stemmer.Stemmer(self.stemmer)

    @cached_property
    def _stem_cache(self) -> dict[str, str]:
        return {}

    @cached_property
    def _jieba(self) -> Any:
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)  # its dictionary-loading chatter would pollute stderr
        return jieba

    # -- serialization ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Analyzer:
        return cls(**data)


def _word_tokens(text: str) -> list[str]:
    """``_WORD.findall(text)``, the runs of ``\\w`` characters, by faster routes where they give the same.

    ASCII text: every non-word character becomes a space and ``str.split`` cuts at the spaces (whitespace
    is never a word character). Other text split at whitespace whose every piece is alphanumeric (``\\w``
    is alphanumeric or "_") is those pieces. Anything else goes through the regex.
    """
    if text.isascii():
        return text.translate(_ASCII_NON_WORD).split()
    pieces = text.split()
    if all(map(str.isalnum, pieces)):
        return pieces
    return _WORD.findall(text)


def _blocks(text: str, size: int) -> Iterator[str]:
    """``text`` in consecutive pieces of about ``size`` characters, each cut just after whitespace."""
    start, end = 0, len(text)
    while end - start > size:
        limit = start + size
        cut = max(text.rfind("\n", start, limit), text.rfind(" ", start, limit))
        if cut < 0:  # one run of ``size`` characters without a space: cut at the first one after it
            after = [i for i in (text.find("\n", limit), text.find(" ", limit)) if i >= 0]
            if not after:
                break
            cut = min(after)
        yield text[start : cut + 1]
        start = cut + 1
    if start == 0:
        yield text  # the common case: no copy
    elif start < end:
        yield text[start:]


def _cjk_bigram_tokens(text: str) -> list[str]:
    """Word tokens, with each CJK run inside them replaced by its unigrams and then its bigrams.

    Splitting word tokens (rather than the text) keeps CJK punctuation out, and cuts Latin glued to
    CJK ("使用Python进行" gives "python", not "使用python进行"). Unigrams as well as bigrams: a
    one-character word or query (猫, 书, 水) must still match, BM25's idf discounts frequent characters,
    and on the Chinese countries world they rank better than bigrams alone (docs/bm25.md). No bigram
    spans two runs.
    """
    tokens: list[str] = []
    cjk_runs = cjk_run().finditer
    for word in _WORD.findall(text):
        start = 0
        for run in cjk_runs(word):
            if run.start() > start:
                tokens.append(word[start : run.start()])
            chars = run.group()
            tokens.extend(chars)
            tokens.extend(chars[i : i + 2] for i in range(len(chars) - 1))
            start = run.end()
        if start < len(word):
            tokens.append(word[start:])
    return tokens


PRESETS: dict[str, Analyzer] = {
    "english": Analyzer(),
    "english-porter": Analyzer(name="english-porter", tokenizer="word", stemmer="porter"),
    "simple": Analyzer(name="simple", tokenizer="word", stopwords="none", stemmer=None),
    "chinese": Analyzer(name="chinese", tokenizer="jieba", stopwords="chinese"),
    "cjk-bigram": Analyzer(name="cjk-bigram", tokenizer="cjk-bigram", stopwords="chinese"),
}


def get_analyzer(name: str | Analyzer) -> Analyzer:
    """The preset called ``name`` (an ``Analyzer`` passes through)."""
    if isinstance(name, Analyzer):
        return name
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(f"unknown analyzer {name!r}; choose one of {', '.join(PRESETS)}") from None
