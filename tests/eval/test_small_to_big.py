"""The small-to-big experiment: small chunks match, their parent sections carry the rest of the evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main
from ragline.errors import InputError
from ragline.eval.experiments import small_to_big
from ragline.eval.experiments.small_to_big import EvidenceQuestion, EvidenceSet
from ragline.types import Document

POLICY = (
    "# Travel\n\n## Meals\n\nMeals abroad are paid per day. The daily meal limit is set by the finance team. "
    "It is 40 euros.\n\n## Hotels\n\nHotels are booked through the travel desk. Rooms cost at most 120 euros.\n"
)
EVIDENCE = ("The daily meal limit is set by the finance team.", "It is 40 euros.")


def _set() -> EvidenceSet:
    spans = [("policy", POLICY.index(s), POLICY.index(s) + len(s)) for s in EVIDENCE]
    question = EvidenceQuestion("q1", "What is the daily meal limit?", "section", ["40 euros"], spans)
    return EvidenceSet("tiny", [Document("policy", POLICY, "Travel")], [question])


def _rows(budget: int) -> dict[str, dict]:
    result = small_to_big.run_set(_set(), budgets=(budget,), retrievers=("bm25",), embedder=None)
    return {row["arm"]: row for row in result["rows"]}


def test_the_section_carries_the_evidence_sentence_that_shares_no_word_with_the_question() -> None:
    rows = _rows(2000)
    # The small chunk that matches is the first evidence sentence; the second ("It is 40 euros.") shares
    # no word with the question, so only reading the parent section brings it (and the answer) in.
    assert rows["small"]["gold@1"] == rows["small+section"]["gold@1"] == 1.0
    assert rows["small"]["covered"] == 0.5 and rows["small"]["answer"] == 0.0
    assert rows["small+section"]["covered"] == 1.0 and rows["small+section"]["answer"] == 1.0
    assert rows["plain"]["covered"] == 1.0  # a plain chunk here is the whole section
    assert all("vs_plain" not in row for row in rows.values())  # one question: no paired test


def test_an_equal_budget_too_small_for_the_section_cuts_it_around_the_chunk() -> None:
    # 60 characters hold the matching sentence (48) but not it and the next one (64): the section is
    # clipped to a window around the chunk, and the plain chunk (the whole section) does not fit at all.
    rows = _rows(60)
    assert rows["small+section"]["covered"] == 0.5 and rows["small+section"]["hit"] == 1.0
    assert rows["plain"]["hit"] == 0.0 and rows["plain"]["passages_mean"] == 0.0


def _questions_folder(root: Path) -> Path:
    root.mkdir()
    (root / "meals.md").write_text(POLICY, encoding="utf-8")
    (root / "hotels.txt").write_text("Hotels are booked through the travel desk.", encoding="utf-8")
    questions = [
        {"id": "1", "question": "What is the daily meal limit?", "answers": ["40 euros"], "supporting_ids": ["meals"]},
        {"id": "2", "question": "Who books hotels?", "answers": ["the concierge"], "supporting_ids": ["hotels"]},
        {"id": "3", "question": "Is there a taxi limit?", "answers": [], "supporting_ids": []},
    ]
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return root


def test_a_questions_folder_gives_the_supporting_sentences_that_hold_an_answer(tmp_path: Path) -> None:
    evidence_set = small_to_big.dataset_set(str(_questions_folder(tmp_path / "qa")))
    # Question 2's answer is in no sentence of its document (skipped, counted); question 3 has no answer.
    assert [q.id for q in evidence_set.questions] == ["1"] and evidence_set.skipped == 1
    ((doc_id, start, end),) = evidence_set.questions[0].evidence
    document = next(d for d in evidence_set.documents if d.id == doc_id)
    assert document.text[start:end] == "It is 40 euros."


def test_a_retrieval_only_folder_is_refused_with_what_it_needs(tmp_path: Path) -> None:
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "title": "", "text": "meal limit"}) + "\n")
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "meal"}) + "\n")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    with pytest.raises(InputError, match="questions folder"):
        small_to_big.dataset_set(str(root))


def test_cli_runs_every_arm_and_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _questions_folder(tmp_path / "qa")
    argv = ["experiment", "small-to-big", "--dataset", str(folder), "--retriever", "bm25", "--output", "json"]
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    (result,) = payload["sets"]
    assert result["questions"] == 1
    arms = {(row["arm"], row["budget_chars"]) for row in result["rows"]}
    assert arms == {(arm, budget) for arm in small_to_big.ARMS for budget in small_to_big.BUDGETS}
