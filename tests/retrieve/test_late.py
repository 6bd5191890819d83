"""Late interaction: the MaxSim score, and the MaxSim reranker over MiniLM token vectors."""

from __future__ import annotations

import numpy as np
import pytest

from ragline.components import build
from ragline.errors import ConfigError
from ragline.index import Index, IndexSettings
from ragline.retrieve import late
from ragline.retrieve.base import hits_for
from ragline.retrieve.late import maxsim
from ragline.types import Document, Hit

pytest.importorskip("sentence_transformers")


def test_maxsim_sums_each_query_tokens_best_match():
    query = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float16)
    passage = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, -1.0]], dtype=np.float16)
    # token 1 best matches passage token 2 (1.0); token 2 best matches passage token 1 (0.8)
    assert maxsim(query, passage) == pytest.approx(1.8, abs=1e-3)
    assert maxsim(query, passage[:0]) == 0.0


def test_maxsim_reranker_puts_the_matching_passage_first_and_encodes_each_passage_once():
    reranker = build("reranker", "maxsim")
    hits = [
        Hit("cars", 2.0, 1, "Cars", "Electric cars need large batteries and charging stations."),
        Hit("sleep", 1.0, 2, "Sleep", "Students who sleep after studying remember more vocabulary."),
    ]
    ranked = reranker.rerank("does sleep improve memory of new words", hits, 2)
    assert [h.doc_id for h in ranked] == ["sleep", "cars"] and [h.rank for h in ranked] == [1, 2]
    size = reranker.stored_bytes()
    assert size > 0 and all(v.dtype == np.float16 for v in reranker.vectors.values())
    reranker.rerank("electric batteries", hits, 1)
    assert reranker.stored_bytes() == size  # the passages' vectors were kept, not encoded again


def test_segment_maxsim_equals_maxsim_row_by_row_across_blocks_and_empty_rows(monkeypatch):
    rng = np.random.default_rng(3)
    lengths = [3, 0, 5, 1, 0, 7, 2]  # rows without tokens score 0
    rows = [rng.standard_normal((n, 4)).astype(np.float16) for n in lengths]
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    vectors = np.concatenate(rows)
    query = rng.standard_normal((3, 4)).astype(np.float32)
    expected = [maxsim(query, r) for r in rows]
    for block in (1, 4, 1 << 18):  # a row longer than a block is still scored whole
        monkeypatch.setattr(late, "SCORE_BLOCK_TOKENS", block)
        assert late.segment_maxsim(query, vectors, starts) == pytest.approx(expected, abs=1e-3)


def _late_index() -> Index:
    index = Index.create(None, IndexSettings(max_segments=10))
    texts = {
        "cars": "Electric cars need large batteries and charging stations.",
        "sleep": "Students who sleep after studying remember more vocabulary.",
        "naps": "A short nap in the afternoon helps memory of new words.",
        "tax": "Quarterly tax forms are due at the end of the month.",
    }
    index.add(Document(i, t, metadata={"acl": ["hr"] if i == "sleep" else ["all"]}) for i, t in texts.items())
    index.commit()
    return index


def test_maxsim_retriever_scores_every_passage_as_the_reranker_does_with_filter_and_deletes_inside():
    index = _late_index()
    retriever = build("retriever", "maxsim", index=index)
    query = "does sleep improve memory of new words"
    ranked = retriever.rank(query, 4)
    assert {d for d, _ in ranked[:2]} == {"sleep", "naps"} and len(ranked) == 4
    reference = build("reranker", "maxsim").scores(query, hits_for(index, ranked))
    assert [s for _, s in ranked] == pytest.approx(reference, abs=1e-4)
    # the filter selects rows before the top k: k = 2 allowed answers, never the hr document
    allowed = [d for d, _ in ranked if d != "sleep"][:2]
    assert [d for d, _ in retriever.rank(query, 2, filter="acl = all")] == allowed
    index.delete(["naps"])
    index.commit()
    assert "naps" not in [d for d, _ in retriever.rank(query, 4)]
    encoded = dict(retriever.packed)
    index.add([Document("rest", "Rest and sleep help memory.")])
    index.commit()
    assert "rest" in [d for d, _ in retriever.rank(query, 5)]
    assert all(retriever.packed[name] is packed for name, packed in encoded.items())  # only the new segment encoded
    assert retriever.stored_bytes() > 0 and retriever.config()["name"] == "maxsim"
    with pytest.raises(ConfigError, match="max_rows"):
        build("retriever", "maxsim:max_rows=2", index=index).rank(query, 2)


def test_token_vectors_in_a_batch_equal_one_text_at_a_time():
    reranker = build("reranker", "maxsim")
    texts = ["Short one.", "A much longer passage about batteries, charging stations and electric cars.", "", "x"]
    batched = reranker.embedder.token_embeddings_batch(texts)
    for text, (offsets, vectors) in zip(texts, batched):
        alone_offsets, alone = reranker.embedder.token_embeddings(text)
        assert offsets == alone_offsets and vectors.shape == alone.shape
        np.testing.assert_allclose(vectors, alone, atol=1e-4)  # padding in a batch changes nothing
    assert [len(v) for v in reranker.token_vectors_batch(texts)] == [len(reranker.token_vectors(t)) for t in texts]


def test_maxsim_interpolated_with_the_first_stage_as_the_cross_encoder_is():
    hits = [
        Hit("cars", 9.0, 1, "Cars", "Electric cars need large batteries and charging stations."),
        Hit("sleep", 1.0, 2, "Sleep", "Students who sleep after studying remember more vocabulary."),
    ]
    query = "does sleep improve memory of new words"
    assert [h.doc_id for h in build("reranker", "maxsim").rerank(query, hits, 2)] == ["sleep", "cars"]
    # mostly the first stage's (z-scored) score: its order stays, and the score is the mix
    mixed = build("reranker", "maxsim:interpolate=0.1").rerank(query, hits, 2)
    assert [h.doc_id for h in mixed] == ["cars", "sleep"] and mixed[0].score == pytest.approx(0.8)
    with pytest.raises(ConfigError, match="reranker 'maxsim': interpolate must be in 0..1"):
        build("reranker", "maxsim:interpolate=1.5")


def test_maxsim_reranker_encodes_nothing_for_no_candidates(monkeypatch):
    reranker = build("reranker", "maxsim")
    monkeypatch.setattr(reranker, "token_vectors_batch", lambda texts: pytest.fail("encoded without candidates"))
    assert reranker.rerank("does sleep improve memory", [], 5) == []
