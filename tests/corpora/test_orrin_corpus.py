"""The Orrin Grid corpus: deterministic, complete, and every answer traceable to its sentence."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from call_budget import calls_made
from ragline.corpora import ORRIN_TYPES, OrrinCorpus
from ragline.corpora.orrin import DEFAULT_SEED, TRAIN_SEED, build_orrin

# Frozen: changing a template, a pool or the order of random draws changes this. If the change is
# intended, update the pin and say so in the commit, because published results cite the corpus.
PINNED_FINGERPRINT = "8ac390cca2d9921f10c63cc472a0416980e707940500191ea047e7a0802ff4ec"

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def corpus() -> OrrinCorpus:
    return build_orrin()


@pytest.fixture(scope="module")
def train() -> OrrinCorpus:
    return build_orrin(TRAIN_SEED)


def readable(doc_acl: list[str], groups: list[str]) -> bool:
    return bool(set(doc_acl) & set(groups))


# --- determinism ----------------------------------------------------------------------------------


def test_same_seed_gives_byte_identical_corpus(corpus: OrrinCorpus) -> None:
    again = build_orrin(DEFAULT_SEED)
    assert again.canonical_json() == corpus.canonical_json()
    assert again.fingerprint() == corpus.fingerprint()


def test_fingerprint_is_pinned_and_independent_of_hash_seed() -> None:
    """A fresh interpreter with another PYTHONHASHSEED builds the pinned corpus (no set-order leaks)."""
    code = "from ragline.corpora.orrin import build_orrin; print(build_orrin().fingerprint())"
    env = {**os.environ, "PYTHONPATH": str(SRC), "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == PINNED_FINGERPRINT


def test_other_seed_gives_other_corpus(corpus: OrrinCorpus, train: OrrinCorpus) -> None:
    assert train.fingerprint() != corpus.fingerprint()
    assert build_orrin(TRAIN_SEED).fingerprint() == train.fingerprint()


def test_generation_stays_cheap() -> None:
    # About 16,000 calls today (well under 0.1 s); the budget catches a blow-up without timing anything.
    assert calls_made(lambda: build_orrin(DEFAULT_SEED + 1)) < 100_000


# --- size and balance -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [DEFAULT_SEED, TRAIN_SEED])
def test_counts(seed: int) -> None:
    world = build_orrin(seed)
    assert len(world.documents) >= 70
    assert len(world.questions) >= 96
    counts = world.counts()
    assert set(counts) == set(ORRIN_TYPES)
    assert all(counts[qtype] >= 10 for qtype in ORRIN_TYPES), counts


def test_ids_are_unique(corpus: OrrinCorpus) -> None:
    for ids in ([d.id for d in corpus.documents], [q.id for q in corpus.questions], [f.fact_id for f in corpus.facts]):
        assert len(ids) == len(set(ids))


# --- evidence -------------------------------------------------------------------------------------


def test_every_fact_sentence_is_verbatim_and_carries_its_value(corpus: OrrinCorpus) -> None:
    docs = {d.id: d for d in corpus.documents}
    for fact in corpus.facts:
        assert fact.sentence in docs[fact.doc_id].text, fact
        assert fact.value in fact.sentence, fact


def test_evidence_is_verbatim_and_holds_the_answer(corpus: OrrinCorpus) -> None:
    docs = {d.id: d for d in corpus.documents}
    facts = {(f.doc_id, f.sentence) for f in corpus.facts}
    for q in corpus.questions:
        assert q.evidence, q.id
        for doc_id, sentence in q.evidence:
            assert sentence in docs[doc_id].text, (q.id, sentence)
            assert (doc_id, sentence) in facts, (q.id, sentence)  # every evidence sentence is a recorded fact
        assert q.answer in q.evidence[-1][1], q.id
        assert q.answer not in q.aliases


def test_gold_documents_exist_and_match_the_evidence(corpus: OrrinCorpus) -> None:
    docs = {d.id for d in corpus.documents}
    for q in corpus.questions:
        evidence_docs = list(dict.fromkeys(doc_id for doc_id, _ in q.evidence))
        if q.expected_abstain:
            assert q.gold_doc_ids == []
            assert q.forbidden_doc_ids == evidence_docs
        else:
            assert q.gold_doc_ids == evidence_docs
            assert q.forbidden_doc_ids == []
        assert set(q.gold_doc_ids) | set(q.forbidden_doc_ids) <= docs


def test_distractors_are_wrong_answers(corpus: OrrinCorpus) -> None:
    for q in corpus.questions:
        assert q.answer not in q.distractor_answers, q.id


# --- documents ------------------------------------------------------------------------------------


def test_documents_are_markdown_with_sections(corpus: OrrinCorpus) -> None:
    for doc in corpus.documents:
        assert doc.text.startswith(f"# {doc.title}\n\n"), doc.id
        assert "\n## " in doc.text, doc.id
        assert doc.source == f"{doc.id}.md"


def test_policies_are_long_with_several_sections(corpus: OrrinCorpus) -> None:
    policies = [d for d in corpus.documents if d.metadata["doc_type"] == "policy"]
    assert len(policies) >= 10
    for doc in policies:
        assert len(doc.text.split()) >= 300, doc.id
        assert doc.text.count("\n## ") >= 5, doc.id


def test_metadata_is_complete(corpus: OrrinCorpus) -> None:
    docs = {d.id: d for d in corpus.documents}
    for doc in corpus.documents:
        meta = doc.metadata
        assert {"doc_type", "acl", "version", "effective_date", "department"} <= set(meta), doc.id
        assert isinstance(meta["acl"], list) and meta["acl"], doc.id
        assert isinstance(meta["version"], int)
        date.fromisoformat(meta["effective_date"])
        if "superseded_by" in meta:
            newer = docs[meta["superseded_by"]].metadata
            assert newer["effective_date"] > meta["effective_date"]
            assert newer["version"] > meta["version"]
            assert newer["supersedes"] == doc.id
    assert sum("superseded_by" in d.metadata for d in corpus.documents) >= 2


def test_expense_policies_share_section_names_and_differ_in_numbers(corpus: OrrinCorpus) -> None:
    policies = [d for d in corpus.documents if d.id.startswith("policy-expense-")]
    assert len(policies) == 6
    headings = {tuple(re.findall(r"^## (.+)$", d.text, re.M)) for d in policies}
    assert len(headings) == 1
    assert {"Purpose", "Scope", "Limits", "Receipts", "Approvals", "Exceptions"} <= set(headings.pop())
    receipts = [re.search(r"required for any single expense above (\$[\d,]+)", d.text) for d in policies]
    assert all(receipts) and len({m.group(1) for m in receipts if m}) == 6
    # The Receipts section reads the same in every policy once the numbers are masked.
    masked = {re.sub(r"\d[\d,]*", "N", d.text.split("## Receipts")[1].split("##")[0]) for d in policies}
    assert len(masked) == 1


def test_section_answers_identify_one_policy(corpus: OrrinCorpus) -> None:
    policies = [d for d in corpus.documents if d.id.startswith("policy-expense-")]
    for q in corpus.questions_of_type("section"):
        (doc_id, sentence) = q.evidence[0]
        holders = [d.id for d in policies if sentence in d.text]
        assert holders == [doc_id], q.id
        assert len(q.distractor_answers) >= 3


def test_incident_codes_come_in_look_alike_pairs(corpus: OrrinCorpus) -> None:
    codes = corpus.entities["error_codes"]
    assert len(codes) >= 12
    by_digits = Counter("".join(sorted(code)) for code in codes)
    assert all(n == 2 for n in by_digits.values())
    for q in corpus.questions_of_type("literal"):
        code = re.search(r"E-\d{4}", q.text)
        assert code and code.group(0) in corpus.document(q.gold_doc_ids[0]).text


def test_root_cause_sentences_do_not_name_the_code(corpus: OrrinCorpus) -> None:
    """A small chunk holding the root cause has lost the code (Lecture 3, §2.3)."""
    for fact in corpus.facts:
        if fact.fact_id.endswith("#root_cause"):
            assert not re.search(r"E-\d{4}", fact.sentence)


def test_multihop_needs_two_documents(corpus: OrrinCorpus) -> None:
    questions = corpus.questions_of_type("multihop")
    assert len(questions) >= 10
    for q in questions:
        site_doc, team_doc = q.gold_doc_ids
        assert len(q.gold_doc_ids) == 2 and len(q.evidence) == 2
        assert q.bridge and q.bridge in q.evidence[0][1] and q.bridge not in q.text
        code = re.search(r"SS-\d{3}", q.text)
        assert code and code.group(0) not in corpus.document(team_doc).text
        assert q.answer not in corpus.document(site_doc).text


def test_decommissioned_look_alikes_exist(corpus: OrrinCorpus) -> None:
    closed = [d for d in corpus.documents if d.metadata.get("status") == "decommissioned"]
    active = {d.metadata["site_code"] for d in corpus.documents if d.metadata.get("status") == "active"}
    assert closed
    for doc in closed:
        digits = sorted(doc.metadata["site_code"])
        assert any(sorted(code) == digits for code in active)


def test_it_paraphrases_share_no_word_with_the_page_title(corpus: OrrinCorpus) -> None:
    questions = [q for q in corpus.questions_of_type("paraphrase") if q.gold_doc_ids[0].startswith("it-")]
    assert len(questions) >= 10
    for q in questions:
        title = set(re.findall(r"[a-z]+", corpus.document(q.gold_doc_ids[0]).title.lower()))
        words = {w for w in re.findall(r"[a-z]+", q.text.lower()) if len(w) > 3}
        assert not words & title, (q.id, words & title)


def test_version_questions_expect_the_current_version(corpus: OrrinCorpus) -> None:
    docs = {d.id: d for d in corpus.documents}
    facts = {f.fact_id: f for f in corpus.facts}
    by_sentence = {(f.doc_id, f.sentence): f for f in corpus.facts}
    questions = corpus.questions_of_type("version")
    assert len(questions) >= 10
    for q in questions:
        (doc_id,) = q.gold_doc_ids
        current = docs[doc_id]
        assert "superseded_by" not in current.metadata
        old = docs[current.metadata["supersedes"]]
        assert old.metadata["superseded_by"] == doc_id
        key = by_sentence[q.evidence[0]].fact_id.split("#")[1]
        stale = facts[f"{old.id}#{key}"]
        assert q.answer not in stale.sentence
        assert q.distractor_answers == [stale.value]


def test_permission_questions(corpus: OrrinCorpus) -> None:
    docs = {d.id: d for d in corpus.documents}
    questions = corpus.questions_of_type("permission")
    abstain = [q for q in questions if q.expected_abstain]
    answered = [q for q in questions if not q.expected_abstain]
    assert len(abstain) >= 5 and len(answered) >= 5
    public_text = "\n".join(d.text for d in corpus.documents if readable(d.metadata["acl"], ["all"]))
    for q in abstain:
        assert "hr" not in q.user_groups
        assert all(docs[d].metadata["acl"] == ["hr"] for d in q.forbidden_doc_ids)
        assert q.answer not in public_text  # the answer is nowhere an ordinary user may read
    for q in answered:
        assert "hr" in q.user_groups
        assert all(docs[d].metadata["acl"] == ["hr"] for d in q.gold_doc_ids)
    assert {q.text for q in abstain} == {q.text for q in answered}


def test_gold_documents_are_readable_by_the_asker(corpus: OrrinCorpus) -> None:
    docs = {d.id: d for d in corpus.documents}
    for q in corpus.questions:
        assert all(readable(docs[d].metadata["acl"], q.user_groups) for d in q.gold_doc_ids), q.id


def test_injection_questions_have_planted_distractors(corpus: OrrinCorpus) -> None:
    text = "\n".join(d.text for d in corpus.documents)
    questions = corpus.questions_of_type("injection")
    assert len(questions) >= 10
    assert "Ignore previous instructions" in text
    for q in questions:
        assert q.distractor_answers, q.id
        assert all(d in text for d in q.distractor_answers), q.id
        assert not any(d in q.evidence[-1][1] for d in q.distractor_answers), q.id
    # Some injection questions are answered on another page than the planted one.
    assert any(not q.gold_doc_ids[0].startswith(("faq-", "bulletin-", "wiki-", "news-")) for q in questions)


# --- the training world ---------------------------------------------------------------------------


def test_training_world_is_disjoint(corpus: OrrinCorpus, train: OrrinCorpus) -> None:
    assert corpus.world == "eval" and corpus.company == "Orrin Grid"
    assert train.world == "train"
    for kind, names in corpus.entities.items():
        assert names, kind
        assert not set(names) & set(train.entities[kind]), kind
    train_text = "\n".join(d.text for d in train.documents)
    eval_text = "\n".join(d.text for d in corpus.documents)
    for kind in ("company", "people", "teams", "sites", "error_codes"):
        assert not [n for n in corpus.entities[kind] if n in train_text], kind
        assert not [n for n in train.entities[kind] if n in eval_text], kind
    assert "Orrin" not in train_text


def test_training_world_has_the_same_structure(corpus: OrrinCorpus, train: OrrinCorpus) -> None:
    def shape(world: OrrinCorpus) -> Counter[str]:
        return Counter(d.metadata["doc_type"] for d in world.documents)

    assert shape(train) == shape(corpus)
    assert train.counts() == corpus.counts()
    answers = {q.id: q.answer for q in corpus.questions}
    differing = sum(q.answer != answers[q.id] for q in train.questions)
    assert differing > len(train.questions) // 2
