"""Context compression: the best sentences of each hit within a budget, verbatim, in order; same sources, same
citations; the [compress] stage of a pipeline config."""

from __future__ import annotations

import tomllib
from dataclasses import replace

import pytest

from llm_fakes import FakeLLM
from ragline.answer.compress import OverlapCompressor
from ragline.answer.context import approx_tokens
from ragline.answer.pipeline import LLMReader, RAGPipeline
from ragline.components import build, names
from ragline.config import PipelineConfig
from ragline.errors import ConfigError
from ragline.index import Index, IndexSettings
from ragline.roles import Compressor
from ragline.types import Document, Hit

TRAVEL = (
    "Flights are booked through the travel desk. Economy class is the rule for trips under six hours. "
    "Itemised receipts are required for any single expense above $60. Hotels are booked by the traveller.\n"
    "Taxis are reimbursed at cost. Claims are paid with the next salary."
)
MEALS = (
    "Team lunches need a manager's approval. Alcohol is never reimbursed. "
    "The meal limit is $45 a day. Receipts for meals are kept for seven years."
)


def hit(doc_id: str, text: str, rank: int, title: str = "") -> Hit:
    return Hit(doc_id, 1.0 / rank, rank, title, text, {"doc_id": doc_id.split("#")[0], "acl": ["all"]})


def policy_index() -> Index:
    index = Index.create(None, IndexSettings())
    docs = [("travel#0", TRAVEL, "Travel policy"), ("meals#0", MEALS, "Meal policy")]
    docs += [(f"other{i}#0", f"The parking garage {i} opens at seven. Visitors sign in.", "Site") for i in range(4)]
    index.add([Document(i, text, title, {"doc_id": i.split("#")[0], "acl": ["all"]}) for i, text, title in docs])
    index.commit()
    return index


def test_the_sentences_with_the_question_terms_are_kept_verbatim_in_order_within_the_budget() -> None:
    hits = [hit("travel#0", TRAVEL, 1), hit("meals#0", MEALS, 2)]
    question = "Above what amount are itemised receipts required?"
    compressed = OverlapCompressor().compress(question, hits, budget=40)
    assert isinstance(OverlapCompressor(), Compressor)
    assert [h.doc_id for h in compressed] == ["travel#0", "meals#0"] and [h.rank for h in compressed] == [1, 2]
    travel, meals = compressed
    assert "Itemised receipts are required for any single expense above $60." in travel.text
    assert "Flights are booked" not in travel.text and len(travel.text) < len(TRAVEL)
    assert sum(approx_tokens(h.text) for h in compressed) <= 40
    # Each kept piece is a sentence of the original, in the original order, recorded by its offsets.
    for short, original in zip(compressed, hits):
        spans = short.metadata["compressed"]["kept"]
        assert spans == sorted(spans) and short.metadata["compressed"]["tokens"] == approx_tokens(original.text)
        pieces = [original.text[s:e] for s, e in spans]
        where = [short.text.find(p) for p in pieces]
        assert -1 not in where and where == sorted(where) and len(short.text) <= sum(map(len, pieces)) + len(pieces)
    assert meals.text == "Receipts for meals are kept for seven years."  # the meal sentence that says "receipts"


def test_every_hit_keeps_its_best_sentence_even_past_the_budget_and_a_big_budget_changes_nothing() -> None:
    hits = [hit("travel#0", TRAVEL, 1), hit("meals#0", MEALS, 2)]
    tiny = OverlapCompressor().compress("meal limit per day", hits, budget=1)
    assert tiny[1].text == "The meal limit is $45 a day." and tiny[0].text  # no source is emptied
    assert len([s for s in tiny[0].text.split(". ") if s]) == 1
    # A large budget keeps every sentence that shares a term with the question, and only those.
    roomy = OverlapCompressor().compress("meal receipts limit", hits, budget=10_000)
    assert roomy[1].text == "The meal limit is $45 a day. Receipts for meals are kept for seven years."
    assert OverlapCompressor().compress("meal limit receipts alcohol lunches", hits[1:], 10_000) == hits[1:]


def test_the_index_idf_makes_the_rare_question_term_decide() -> None:
    # "receipts" is in two documents, "itemised" in one: with the index's IDF the sentence with the rarer
    # term wins the single slot of a hit that has one sentence of each.
    index = policy_index()
    text = "Receipts are scanned at the desk. Itemised bills go to finance."
    [short] = build("compressor", "overlap", index=index).compress("itemised receipts", [hit("x#0", text, 1)], 1)
    assert short.text == "Itemised bills go to finance."


def test_compressed_sources_are_the_same_sources_and_citations_map_to_the_same_chunks() -> None:
    index = policy_index()
    question = "When are itemised receipts required?"
    plain = RAGPipeline(index, None, retriever="bm25", k=3)
    short = RAGPipeline(index, None, retriever="bm25", k=3, compressor=OverlapCompressor(index), compress_budget=30)
    a, b = plain.context(question, "acl = all"), short.context(question, "acl = all")
    assert [s.chunk_id for s in a.sources] == [s.chunk_id for s in b.sources]
    assert b.tokens < a.tokens and "$60" in b.text
    n = next(s.n for s in b.sources if s.chunk_id == "travel#0")
    reader = LLMReader(llm=FakeLLM([f"For any single expense above $60 [{n}]."] * 2))
    for context in (a, b):
        answer = reader.read(question, context)
        assert [c.chunk_id for c in answer.citations] == ["travel#0"] and answer.citations[0].supported


def test_chunks_that_shrink_to_the_same_sentence_both_stay_sources() -> None:
    # Two chunks that differ only outside the sentence the question needs: compressed, they are equal
    # texts, which the context's near-duplicate rule would merge if it ran after compression.
    index = Index.create(None, IndexSettings())
    common = "The receipt threshold is $60."
    texts = {"a#0": f"{common} Flights are booked early. Economy is the rule.",
             "b#0": f"{common} Hotels are booked late. Suites are never paid."}  # fmt: skip
    index.add([Document(i, t, "Policy", {"doc_id": i[0], "acl": ["all"]}) for i, t in texts.items()])
    index.commit()
    pipeline = RAGPipeline(index, None, retriever="bm25", k=2, compressor=OverlapCompressor(index), compress_budget=5)
    context = pipeline.context("receipt threshold", "acl = all")
    assert sorted(s.chunk_id for s in context.sources) == ["a#0", "b#0"]
    assert all(s.text == common for s in context.sources)


def test_the_compress_stage_round_trips_and_builds_the_compressor() -> None:
    assert {"overlap", "cross"} <= set(names("compressor"))
    config = PipelineConfig.from_dict({"compress": {"compressor": "overlap", "budget": 150}})
    assert PipelineConfig.from_dict(config.to_dict()) == config
    assert PipelineConfig.from_dict(tomllib.loads(config.to_toml())) == config
    assert PipelineConfig().compress.compressor is None  # off unless configured
    pipeline = RAGPipeline.from_config(config, policy_index(), reader=False)
    assert isinstance(pipeline.compressor, OverlapCompressor) and pipeline.compress_budget == 150
    assert pipeline.config()["compressor"] == {"name": "overlap", "budget": 150}
    with pytest.raises(ConfigError, match=r"\[compress\].*budget must be a whole number"):
        PipelineConfig.from_dict({"compress": {"compressor": "overlap", "budget": 0}})
    with pytest.raises(ConfigError, match="unknown compressor 'nope'"):
        RAGPipeline.from_config(PipelineConfig.from_dict({"compress": {"compressor": "nope"}}), policy_index())


def test_the_cross_compressor_keeps_the_sentence_the_cross_encoder_scores_highest(tmp_path, monkeypatch) -> None:
    pytest.importorskip("sentence_transformers")
    from ragline.eval.datasets import load_beir
    from ragline.train.reranker import RerankerTraining, train_reranker
    from train.tiny_beir import write_tiny_beir

    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))
    settings = RerankerTraining(negatives=2, mine_depth=5, dev_fraction=0.25, dev_depth=3, max_steps=2, max_length=48)
    train_reranker(write_tiny_beir(tmp_path / "tiny"), "tiny", settings, progress=False)
    corpus = load_beir(tmp_path / "tiny", "test").corpus
    text = " ".join(doc.text for doc in corpus[:4])  # four one-sentence abstracts as one source
    source = hit("mix#0", text, 1, "Abstracts")
    compressor = build("compressor", "cross:model=trained:tiny,max_length=48")
    question = "does smoking cause lung cancer"
    [short] = compressor.compress(question, [source], budget=1)
    pieces = [replace(source, text=doc.text) for doc in corpus[:4]]
    scores = build("reranker", "cross:model=trained:tiny,max_length=48").scores(question, pieces)
    assert short.text == corpus[int(scores.argmax())].text  # the best "title. sentence" pair, verbatim
    assert compressor.config()["model"] == "trained:tiny" and compressor.config()["model_id"].startswith("tiny@")
