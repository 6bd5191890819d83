"""The corpus thesaurus: corpus terms, nearest vocabulary words, the file ``synonyms`` reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragline.errors import ConfigError
from ragline.index.store import Index, IndexSettings
from ragline.retrieve.thesaurus import corpus_terms, nearest_groups, vocabulary_words, write_thesaurus
from ragline.retrieve.transforms import SynonymExpansion, read_thesaurus
from ragline.text import get_analyzer
from ragline.types import Document

ANALYZER = get_analyzer("english")
DOCS = [
    Document("a", "The field team maintains the substations. Teams rotate weekly.", "Field team"),
    Document("b", "Each team files a report. The substation is inspected yearly.", "Reports"),
    Document("c", "Credentials expire after 120 days. A team lead approves exceptions.", "Credentials"),
    Document("d", "Vouchers for guests are valid for two days.", "Guests"),
]


def unit(*rows: list[float]) -> np.ndarray:
    vectors = np.array(rows, dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_corpus_terms_keep_the_document_frequency_band_and_one_form_per_stem():
    terms = corpus_terms(DOCS, ANALYZER, min_df=2, max_df_share=0.5)
    assert "substation" in terms or "substations" in terms  # in a and b: 2 of 4 documents
    assert not {"substation", "substations"} <= set(terms)  # one surface form per stem
    assert "team" not in terms  # in 3 of 4 documents: above half
    assert "vouchers" not in terms  # in one document only
    assert "the" not in terms and "120" not in terms
    assert "vouchers" in corpus_terms(DOCS, ANALYZER, min_df=1, max_df_share=0.5)


def test_vocabulary_words_are_whole_words_without_stopwords():
    class Vocabulary:
        def get_vocab(self):
            return {"crew": 1, "##ing": 2, "the": 3, "[CLS]": 4, "ab": 5, "squad": 6, "42": 7}

    assert vocabulary_words(Vocabulary(), ANALYZER) == ["crew", "squad"]


def test_nearest_groups_take_close_words_above_the_threshold_and_skip_the_same_stem():
    terms = ["team", "voucher"]
    words = ["crew", "teams", "squad", "banana"]
    term_vectors = unit([1, 0, 0], [0, 0, 1])
    word_vectors = unit([0.9, 0.1, 0], [1, 0.01, 0], [0.6, 0.8, 0], [0, 1, 0])
    groups = nearest_groups(terms, term_vectors, words, word_vectors, ANALYZER, threshold=0.7, neighbours=3)
    assert groups == [["team", "crew"]]  # "teams" has team's stem; squad is at cosine 0.6; voucher has nobody
    wider = nearest_groups(terms, term_vectors, words, word_vectors, ANALYZER, threshold=0.5, neighbours=1)
    assert wider == [["team", "crew"]]  # one neighbour only
    with pytest.raises(ConfigError, match="threshold"):
        nearest_groups(terms, term_vectors, words, word_vectors, ANALYZER, threshold=0.0)


def test_the_written_file_is_what_synonyms_reads_and_a_question_word_reaches_the_corpus_word(tmp_path: Path):
    file = write_thesaurus([["team", "crew", "squad"], ["guest", "visitor"], ["bad,word"]], tmp_path / "t.txt",
                           "built from a test corpus\nsecond line")  # fmt: skip
    assert read_thesaurus(file) == [["team", "crew", "squad"], ["guest", "visitor"]]
    index = Index.create(None, IndexSettings())
    index.add(DOCS)
    index.commit()
    expansion = SynonymExpansion(index, str(file))
    queries = expansion.transform("Which crew looks after the site?")
    assert queries[1][0].split()[-2:] == ["team", "squad"]
