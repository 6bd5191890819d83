"""The fictional-countries world: deterministic, aligned across languages, disjoint from training."""

from __future__ import annotations

import re

import pytest

from call_budget import calls_made
from ragline.corpora import COUNTRY_TYPES, CountriesCorpus
from ragline.corpora import countries as C
from ragline.corpora.countries import DEFAULT_SEED, TRAIN_SEED, build_countries
from ragline.errors import ConfigError

# Frozen, like the Orrin pin: update only for an intended change of the generator.
PINNED_FINGERPRINTS = {
    "en": "cb06951745dad0f7a15139c8ac7f8a9e0189f359bdc407c27f571b60344c40d3",
    "zh": "080dcb47829da194a90ad84fee109926b7973de138dacdf58784acd357c33acd",
}


@pytest.fixture(scope="module", params=["en", "zh"])
def world(request: pytest.FixtureRequest) -> CountriesCorpus:
    return build_countries(language=request.param)


@pytest.fixture(scope="module")
def en() -> CountriesCorpus:
    return build_countries(language="en")


@pytest.fixture(scope="module")
def zh() -> CountriesCorpus:
    return build_countries(language="zh")


def numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def test_pinned_fingerprints(world: CountriesCorpus) -> None:
    assert world.fingerprint() == PINNED_FINGERPRINTS[world.language]
    assert build_countries(language=world.language).canonical_json() == world.canonical_json()


def test_generation_stays_cheap() -> None:
    # About 25,000 calls today (well under 0.1 s); the budget catches a blow-up without timing anything.
    assert calls_made(lambda: build_countries(DEFAULT_SEED + 1, "zh")) < 100_000


def test_counts(world: CountriesCorpus) -> None:
    assert len(world.documents) == 40 * 4
    assert {d.metadata["doc_type"] for d in world.documents} == set(C.ASPECTS)
    assert world.counts() == dict.fromkeys(COUNTRY_TYPES, 40)


def test_evidence_is_verbatim(world: CountriesCorpus) -> None:
    docs = {d.id: d for d in world.documents}
    for fact in world.facts:
        assert fact.sentence in docs[fact.doc_id].text and fact.value in fact.sentence
    for q in world.questions:
        assert q.gold_doc_ids == list(dict.fromkeys(doc_id for doc_id, _ in q.evidence))
        for doc_id, sentence in q.evidence:
            assert sentence in docs[doc_id].text, (q.id, sentence)
        if q.type != "arithmetic":
            assert q.answer in q.evidence[-1][1], q.id


def test_multihop_questions_hide_the_bridge(world: CountriesCorpus) -> None:
    for q in world.questions_of_type("multihop"):
        assert len(q.gold_doc_ids) == 2
        assert q.bridge and q.bridge in q.evidence[0][1] and q.bridge not in q.text
        assert q.answer not in q.evidence[0][1]


def test_arithmetic_answers_follow_from_the_evidence(world: CountriesCorpus) -> None:
    for q in world.questions_of_type("arithmetic"):
        assert len(q.gold_doc_ids) == 2
        operands = [n for _, sentence in q.evidence for n in numbers(sentence)]
        assert len(operands) == 2, q.id
        a, b = operands
        (result,) = numbers(q.answer)
        assert result in (abs(a - b), a + b), q.id
        assert result not in operands


def test_languages_are_the_same_world(en: CountriesCorpus, zh: CountriesCorpus) -> None:
    assert [d.id for d in en.documents] == [d.id for d in zh.documents]
    assert [d.metadata["doc_type"] for d in en.documents] == [d.metadata["doc_type"] for d in zh.documents]
    for q_en, q_zh in zip(en.questions, zh.questions, strict=True):
        assert (q_en.id, q_en.type, q_en.gold_doc_ids) == (q_zh.id, q_zh.type, q_zh.gold_doc_ids)
        if q_en.answer.isdigit():
            assert q_en.answer == q_zh.answer
    assert all(re.search(r"[\u4e00-\u9fff]", d.text) for d in zh.documents)
    assert not any(re.search(r"[\u4e00-\u9fff]", d.text) for d in en.documents)


def test_paraphrases_differ_from_direct_wording(en: CountriesCorpus) -> None:
    direct = set(C.QUESTIONS["en"]["direct"].values())
    assert not direct & set(C.QUESTIONS["en"]["paraphrase"].values())
    assert len(en.questions_of_type("paraphrase")) == 40


def test_names_are_unique_and_do_not_nest(en: CountriesCorpus) -> None:
    words = [w.lower() for kind in ("name", "capital", "river") for w in en.entities[kind]]
    assert len(words) == len(set(words)) == 120
    assert not [(a, b) for a in words for b in words if a != b and a in b]


def test_transliteration_is_one_to_one() -> None:
    syllables = [*C.INITIALS["eval"], *C.INITIALS["train"], *C.MEDIALS, *C.FINALS]
    assert len({latin for latin, _ in syllables}) == len(syllables)
    assert len({han for _, han in syllables}) == len(syllables)
    assert not {s[0][0] for s in C.INITIALS["eval"]} & {s[0][0] for s in C.INITIALS["train"]}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_training_world_is_disjoint(language: str) -> None:
    main = build_countries(DEFAULT_SEED, language)
    train = build_countries(TRAIN_SEED, language)
    assert train.world == "train" and main.world == "eval"
    main_names = {n for names in main.entities.values() for n in names}
    train_names = {n for names in train.entities.values() for n in names}
    assert not main_names & train_names
    train_text = "\n".join(d.text for d in train.documents)
    assert not [n for n in main.entities["name"] if n in train_text]


def test_bigger_training_world() -> None:
    train = build_countries(TRAIN_SEED, "en", n_countries=300)
    assert len(train.documents) == 1200 and len(train.entities["name"]) == 300


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError):
        build_countries(language="fr")
    with pytest.raises(ConfigError):
        build_countries(n_countries=1)
