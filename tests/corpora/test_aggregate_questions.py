"""Aggregate/global questions: a versioned addition that leaves the worlds' bytes alone."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from ragline.corpora import build_countries, build_orrin
from ragline.corpora.aggregate import AGGREGATE_TYPES, aggregate_questions, with_aggregate
from ragline.corpora.base import Corpus
from ragline.corpora.countries import TRAIN_SEED as COUNTRIES_TRAIN
from ragline.corpora.export import export_beir
from ragline.corpora.orrin import TRAIN_SEED
from ragline.errors import ConfigError

# Frozen like the worlds' pins: version 1 of the aggregate questions of the Orrin evaluation world.
PINNED_ORRIN_V1 = "525a7a069aaf8b4218f640e7bcbe396c689cf7607e829bb64b0b5fe28181b7d6"


def digest(corpus: Corpus) -> str:
    records = [q.to_dict() for q in aggregate_questions(corpus)]
    return hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()


WORLDS = {
    "orrin": lambda: build_orrin(),
    "orrin-train": lambda: build_orrin(TRAIN_SEED),
    "countries": lambda: build_countries(),
    "countries-train": lambda: build_countries(COUNTRIES_TRAIN),
}


@pytest.fixture(scope="module", params=sorted(WORLDS))
def world(request: pytest.FixtureRequest) -> Corpus:
    return WORLDS[request.param]()


def test_existing_world_is_untouched(world: Corpus) -> None:
    """The addition copies: documents and the first questions are the world's own, its fingerprint unchanged."""
    before = world.fingerprint()
    extended = with_aggregate(world)
    assert world.fingerprint() == before
    assert extended.documents == world.documents
    assert extended.questions[: len(world.questions)] == world.questions
    assert {q.type for q in extended.questions[len(world.questions) :]} <= set(AGGREGATE_TYPES)


def test_every_type_in_both_orrin_worlds() -> None:
    for corpus in (build_orrin(), build_orrin(TRAIN_SEED)):
        assert {q.type for q in aggregate_questions(corpus)} == set(AGGREGATE_TYPES)


def test_aggregate_questions_are_pinned() -> None:
    """Published figures cite these questions: a change of wording or selection must move this pin on purpose."""
    assert digest(build_orrin()) == PINNED_ORRIN_V1
    assert digest(build_orrin()) == digest(build_orrin())


def test_evidence_is_verbatim_and_gold_documents_follow_it(world: Corpus) -> None:
    texts = {d.id: d.text for d in world.documents}
    for q in aggregate_questions(world):
        assert q.evidence and all(sentence in texts[doc_id] for doc_id, sentence in q.evidence), q.id
        assert q.gold_doc_ids == list(dict.fromkeys(doc_id for doc_id, _ in q.evidence))


def test_listing_and_counting_find_every_document_that_says_the_value(world: Corpus) -> None:
    """Recomputed from the facts' sentences: every fact of the same key whose sentence names the value.

    Planted fault checked: keeping ``members[:-1]`` in the generator fails the listing and counting
    comparisons here."""
    facts_by_key: dict[str, list] = {}
    for fact in world.facts:
        facts_by_key.setdefault(fact.fact_id.rpartition("#")[2], []).append(fact)
    fact_of = {(f.doc_id, f.sentence): f for f in world.facts}
    for q in aggregate_questions(world):
        if q.type not in ("listing", "counting"):
            continue
        key = fact_of[q.evidence[0]].fact_id.rpartition("#")[2]
        value = fact_of[q.evidence[0]].value
        assert value in q.text
        saying = {f.doc_id for f in facts_by_key[key] if re.search(rf"\b{re.escape(value)}\b", f.sentence)}
        saying = {d for d in saying if world.document(d).metadata.get("status", "active") == "active"}
        assert set(q.gold_doc_ids) == saying, q.id
        if q.type == "counting":
            assert q.answer == str(len(saying))
        else:
            assert len(q.answer.split("; ")) == len(saying)


def test_comparison_answer_holds_the_extreme(world: Corpus) -> None:
    """The answer's own evidence sentence has the largest (or smallest) number among all the evidence."""
    value_of = {(f.doc_id, f.sentence): f.value for f in world.facts}
    for q in aggregate_questions(world):
        if q.type != "comparison":
            continue
        numbers = [float(re.sub(r"[^\d.]", "", value_of[pair])) for pair in q.evidence]
        highest = any(w in q.text for w in ("highest", "largest", "longest", "most recently"))
        extreme = max(numbers) if highest else min(numbers)
        winners = [s for (_, s), n in zip(q.evidence, numbers) if n == extreme]
        assert len(winners) == 1, q.id
        doc = next(doc_id for doc_id, s in q.evidence if s == winners[0])
        title = world.document(doc).title + " " + json.dumps(world.document(doc).metadata)
        assert any(a.lower() in title.lower() for a in q.answers), (q.id, q.answers, title)


def test_training_world_names_never_answer_in_evaluation() -> None:
    eval_answers = {q.answer for q in aggregate_questions(build_orrin()) if q.type in ("listing", "theme")}
    train_answers = {q.answer for q in aggregate_questions(build_orrin(TRAIN_SEED)) if q.type in ("listing", "theme")}
    assert eval_answers and train_answers and not eval_answers & train_answers


def test_chinese_world_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="English only"):
        aggregate_questions(build_countries(language="zh"))


def test_export_keeps_the_existing_question_lines(tmp_path) -> None:
    corpus = build_orrin()
    plain = export_beir(corpus, tmp_path / "plain") / "questions.jsonl"
    extended = export_beir(with_aggregate(corpus), tmp_path / "agg") / "questions.jsonl"
    old, new = plain.read_text().splitlines(), extended.read_text().splitlines()
    assert new[: len(old)] == old and len(new) > len(old)
