"""A synonym thesaurus built from a corpus, for the ``synonyms`` query transform (``transforms.py``).

The lecture's thesaurus groups (``car, automobile, auto``) are written by hand; this builds them from the
corpus and an embedder's word vectors instead. The corpus gives the terms (words in at least ``min_df``
documents and at most ``max_df_share`` of them: the words a question may need to reach, without the
collection's everyday words); the embedder's tokenizer gives the candidate synonyms (its whole-word
vocabulary, a general English vocabulary that holds the words users write and documents do not). Each
word is embedded on its own; a corpus term's group is the term and its ``neighbours`` nearest vocabulary
words with cosine at least ``threshold``, words of the same stem left out (the analyzer already matches
those). The group is symmetric in use: a query with any word of a group gets the others added, so a
question's word ("crew") reaches the corpus's ("team") when the two are close in the embedder's space.

Word vectors out of context are a weak signal (antonyms and co-hyponyms are close too: "north",
"south"), so the threshold is chosen on a training collection (0.6 on the Orrin training world). The
groups are written in the format ``read_thesaurus`` reads, one group per line, after a comment line
saying how they were made.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import ConfigError
from ragline.types import Document

_WORD = re.compile(r"^[a-z][a-z'-]*[a-z]$")


def corpus_terms(
    documents: Sequence[Document], analyzer: Any, min_df: int = 2, max_df_share: float = 0.5, min_length: int = 3
) -> list[str]:
    """The corpus's words (lowercase surface forms) in ``min_df`` to ``max_df_share`` of its documents.

    Stopwords and words without a letter run (numbers, codes) are left out; each stem is represented by
    its commonest surface form, so "teams" and "team" make one term.
    """
    df: Counter[str] = Counter()
    surface: dict[str, Counter[str]] = {}
    for document in documents:
        seen = set()
        for word in re.findall(r"[A-Za-z][A-Za-z'-]*[A-Za-z]", f"{document.title}\n{document.text}"):
            word = word.lower()
            if len(word) < min_length:
                continue
            stems = analyzer(word)
            if len(stems) != 1:
                continue  # a stopword (no term) or a word the analyzer splits
            surface.setdefault(stems[0], Counter())[word] += 1
            seen.add(stems[0])
        df.update(seen)
    limit = max_df_share * len(documents)
    return sorted(surface[stem].most_common(1)[0][0] for stem, n in df.items() if min_df <= n <= limit)


def vocabulary_words(tokenizer: Any, analyzer: Any, min_length: int = 3) -> list[str]:
    """The whole words of a word-piece tokenizer's vocabulary (no ``##`` pieces, no stopwords)."""
    words = []
    for piece in tokenizer.get_vocab():
        if len(piece) >= min_length and _WORD.match(piece) and len(analyzer(piece)) == 1:
            words.append(piece)
    return sorted(words)


def nearest_groups(
    terms: Sequence[str],
    term_vectors: np.ndarray,
    words: Sequence[str],
    word_vectors: np.ndarray,
    analyzer: Any,
    threshold: float = 0.6,
    neighbours: int = 3,
) -> list[list[str]]:
    """Per term, the term and its up to ``neighbours`` words with cosine >= ``threshold`` (unit vectors given).

    Words with the term's stem are skipped; a term with no such word makes no group.
    """
    if not 0.0 < threshold <= 1.0:
        raise ConfigError(f"thesaurus threshold must be in (0, 1], e.g. 0.6; got {threshold}")
    if neighbours < 1:
        raise ConfigError(f"thesaurus neighbours must be >= 1, got {neighbours}")
    groups = []
    stems = [analyzer(word)[0] for word in words]
    for term, vector in zip(terms, term_vectors):
        similarity = word_vectors @ vector
        stem = analyzer(term)[0]
        group = [term]
        for i in np.argsort(-similarity):
            if similarity[i] < threshold or len(group) > neighbours:
                break
            if stems[i] != stem and words[i] not in group:
                group.append(words[i])
        if len(group) > 1:
            groups.append(group)
    return groups


@dataclass
class WordVectors:
    """The corpus's terms and the vocabulary's words with their unit vectors: what ``nearest_groups`` reads.

    Computed once for several thresholds; the vocabulary's vectors (the slow part: about 21,000 words
    for MiniLM) are cached on disk by the embedder's id, the corpus's terms are embedded each time.
    """

    terms: list[str]
    term_vectors: np.ndarray
    words: list[str]
    word_vectors: np.ndarray
    analyzer: Any

    def groups(self, threshold: float = 0.6, neighbours: int = 3) -> list[list[str]]:
        return nearest_groups(
            self.terms, self.term_vectors, self.words, self.word_vectors, self.analyzer, threshold, neighbours
        )


def word_vectors(
    documents: Sequence[Document],
    embedder: str = "minilm",
    analyzer: str = "english",
    min_df: int = 2,
    max_df_share: float = 0.5,
    cache: str | Path | None = None,
) -> WordVectors:
    """Embed the corpus's terms and the embedder's vocabulary (cached under ``cache``, default
    ``$RAGLINE_CACHE/thesaurus``)."""
    from ragline.models.embedders import load_embedder
    from ragline.paths import cache_root
    from ragline.text import get_analyzer
    from ragline.types import content_hash

    analyze = get_analyzer(analyzer)
    model = load_embedder(embedder)
    tokenizer = getattr(getattr(model, "model", None), "tokenizer", None)
    if tokenizer is None or not hasattr(tokenizer, "get_vocab"):
        raise ConfigError(f"embedder {embedder!r} has no word-piece vocabulary to take synonyms from; use minilm")
    terms = corpus_terms(documents, analyze, min_df, max_df_share)
    if not terms:
        raise ConfigError(
            f"no corpus term is in {min_df} or more documents (and at most {max_df_share:.0%}): lower --min-df"
        )
    words = vocabulary_words(tokenizer, analyze)
    folder = Path(cache) if cache is not None else cache_root() / "thesaurus"
    file = folder / f"{content_hash(model.id + chr(0) + chr(10).join(words))[:24]}.npy"
    if file.is_file():
        vocabulary = np.load(file)
    else:
        vocabulary = model.embed_passages(words, batch_size=256, progress=True)
        folder.mkdir(parents=True, exist_ok=True)
        np.save(file, vocabulary)
    term_vectors = model.embed_passages(terms, batch_size=256, progress=False)
    return WordVectors(terms, term_vectors, words, vocabulary, analyze)


def build_thesaurus(
    documents: Sequence[Document],
    embedder: str = "minilm",
    analyzer: str = "english",
    threshold: float = 0.6,
    neighbours: int = 3,
    min_df: int = 2,
    max_df_share: float = 0.5,
) -> list[list[str]]:
    """Synonym groups for ``documents``: each corpus term with its nearest vocabulary words (module doc)."""
    return word_vectors(documents, embedder, analyzer, min_df, max_df_share).groups(threshold, neighbours)


def write_thesaurus(groups: Sequence[Sequence[str]], path: str | Path, comment: str = "") -> Path:
    """Write ``groups`` as ``read_thesaurus`` reads them: one comma-separated group a line, ``#`` comments."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"# {line}" for line in comment.splitlines() if line.strip()]
    for group in groups:
        words = [word for word in group if "," not in word and "#" not in word]
        if len(words) >= 2:
            lines.append(", ".join(words))
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return file
