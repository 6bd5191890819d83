"""The position experiment (Liu et al. 2023, "Lost in the Middle") on the frozen Orrin Grid corpus.

BM25 and the extractive reader only: no LLM here (the experiment run exercises that path).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.answer.context import document_id
from ragline.corpora import Corpus
from ragline.corpora.orrin import build_orrin
from ragline.eval import position
from ragline.eval.answers import contains_answer
from ragline.index.store import Index


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return build_orrin()


@pytest.fixture(scope="module")
def index(corpus: Corpus) -> Index:
    return position.build_position_index(corpus)


@pytest.fixture(scope="module")
def items(corpus: Corpus, index: Index) -> list[position.PositionItem]:
    built, skipped = position.build_items(index, position.eligible_questions(corpus), k=5)
    assert built and not skipped  # with 100-word chunks overlapping by 30, every evidence sentence is whole
    return built


def test_eligible_questions_are_answerable_single_document_ones(corpus: Corpus) -> None:
    eligible = position.eligible_questions(corpus)
    assert {q.type for q in eligible} == set(position.DEFAULT_TYPES)
    assert all(len(q.gold_doc_ids) == 1 and not q.expected_abstain for q in eligible)


def test_gold_source_is_at_each_position_exactly_once(items: list[position.PositionItem]) -> None:
    for item in items[:10]:
        others = None
        for p in range(1, item.k + 1):
            context = position.position_context(item, p)
            ids = [s.chunk_id for s in context.sources]
            assert len(context) == item.k and ids.count(item.gold.doc_id) == 1
            assert context.source(p).chunk_id == item.gold.doc_id  # type: ignore[union-attr]
            assert position.gold_position(context, item.question) == p
            rest = [i for i in ids if i != item.gold.doc_id]
            assert others in (None, rest)  # the distractors keep one order around the moving gold source
            others = rest
        assert others == [d.doc_id for d in item.distractors]


def test_gold_chunk_holds_the_evidence_sentence(items: list[position.PositionItem]) -> None:
    for item in items:
        doc_id, sentence = item.question.evidence[-1]
        assert document_id(item.gold) == doc_id
        assert " ".join(sentence.split()) in " ".join(item.gold.text.split())


@pytest.mark.parametrize("k", [5, 10])
def test_distractors_are_never_gold_document_chunks_nor_answers(corpus: Corpus, index: Index, k: int) -> None:
    built, _ = position.build_items(index, position.eligible_questions(corpus), k=k)
    assert built
    for item in built:
        assert len(item.distractors) == k - 1
        assert len({d.doc_id for d in item.distractors}) == k - 1
        for hit in item.distractors:
            assert document_id(hit) not in item.question.gold_doc_ids
            assert contains_answer(f"{hit.title}\n{hit.text}", item.question.answers) is None
            assert "all" in hit.metadata["acl"]  # retrieval runs as the asking (ordinary) user


def test_k_below_two_is_refused(corpus: Corpus, index: Index) -> None:
    with pytest.raises(ValueError):
        position.build_items(index, position.eligible_questions(corpus), k=1)


def test_sample_is_stratified_and_deterministic(items: list[position.PositionItem]) -> None:
    first = position.sample(items, 10, seed=0)
    assert [i.question.id for i in first] == [i.question.id for i in position.sample(items, 10, seed=0)]
    assert [i.question.id for i in first] != [i.question.id for i in position.sample(items, 10, seed=1)]
    assert sorted(i.question.type for i in first) == sorted(list(position.DEFAULT_TYPES) * 2)
    assert position.sample(items, None) == items


def test_ordering_items_hold_the_gold_chunk(corpus: Corpus, index: Index) -> None:
    ordering = position.build_ordering_items(index, position.eligible_questions(corpus), k=5)
    assert ordering
    for item in ordering[:10]:
        ranked = position.ordering_context(item, "rank")
        assert position.gold_position(ranked, item.question) == item.gold_rank
        ends = position.ordering_context(item, "ends")
        assert [s.hit.rank for s in ends.sources] == [1, 3, 5, 4, 2]  # best at both ends


def test_extractive_curve_computes_and_is_deterministic(corpus: Corpus, tmp_path: Path) -> None:
    """The extractive reader scores every passage alike, so its curve is high and flat: the gold passage is found
    at every position. Planted fault: the reader handed only the first source of each context (a curve that is
    right at position 1 and 0 elsewhere, which the shape checks alone accepted)."""
    readers = [position.ReaderRun("extractive:top_k=5", questions=6, match="em")]
    payload = position.run(corpus, readers, k=5, seed=3)
    again = position.run(corpus, readers, k=5, seed=3)
    result = payload["readers"]["extractive:top_k=5"]
    curve = result["positions"]
    assert curve["n"] == 6 and len(curve["accuracy"]) == 5
    assert all(0.0 <= a <= 1.0 for a in curve["accuracy"])
    assert min(curve["accuracy"]) >= 0.5  # the gold passage is in every context and the reader finds it
    assert max(curve["accuracy"]) - min(curve["accuracy"]) <= 1 / 6 + 1e-9  # at most one question moves
    assert len(curve["outcomes"]) == 6 and all(len(row) == 5 for row in curve["outcomes"].values())
    assert set(result["orderings"]) >= {"rank", "ends", "reverse", "n"}
    assert curve["outcomes"] == again["readers"]["extractive:top_k=5"]["positions"]["outcomes"]
    png = tmp_path / "curve.png"
    position.plot_curves(payload, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
