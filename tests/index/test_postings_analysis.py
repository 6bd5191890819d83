"""Postings analyzed for many documents at once equal those counted one document at a time."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from ragline.index import postings as postings_module
from ragline.index.postings import FieldPostings
from ragline.index.segment import FIELD_PARTS
from ragline.text.analyzer import PRESETS, Analyzer
from ragline.types import Document

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "text"))
from test_word_tokens import _texts  # noqa: E402

ANALYZERS = {**PRESETS, "min-length-3": Analyzer(name="min-3", tokenizer="word", min_token_length=3)}


def _documents(seed: int) -> list[Document]:
    rng = random.Random(seed)
    texts = _texts(seed, n=80) + ["the of and", "", "Running runs ran"]
    rng.shuffle(texts)
    return [Document(f"d{i}", text, title=rng.choice(["", "Dog's Title", "中文 标题"])) for i, text in enumerate(texts)]


def _assert_equal(a: FieldPostings, b: FieldPostings) -> None:
    assert a.terms == b.terms
    for part in ("indptr", "docs", "tfs", "lengths"):
        x, y = getattr(a, part), getattr(b, part)
        assert x.dtype == y.dtype and np.array_equal(x, y), part


@pytest.mark.parametrize("name", sorted(ANALYZERS))
@pytest.mark.parametrize("chunk_tokens", [1, 50, 1 << 18])
def test_analyzed_postings_are_the_postings_of_the_term_counts(
    name: str, chunk_tokens: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings_module, "ANALYSIS_CHUNK_TOKENS", chunk_tokens)
    analyzer = ANALYZERS[name]
    for field in ("body", "title"):
        for block_chars in (9, 1 << 20):
            parts = [FIELD_PARTS[field](d) for d in _documents(3)]
            expected = FieldPostings.build(analyzer.term_counts(*p, block_chars=block_chars) for p in parts)
            _assert_equal(FieldPostings.analyze(analyzer, parts, block_chars=block_chars), expected)


def test_no_documents_and_documents_without_terms() -> None:
    analyzer = PRESETS["english"]
    _assert_equal(FieldPostings.analyze(analyzer, []), FieldPostings.build([]))
    parts = [("",), ("the of",), ("...",)]
    postings = FieldPostings.analyze(analyzer, parts)
    _assert_equal(postings, FieldPostings.build(analyzer.term_counts(*p) for p in parts))
    assert postings.lengths.tolist() == [0.0, 0.0, 0.0] and postings.terms == []
