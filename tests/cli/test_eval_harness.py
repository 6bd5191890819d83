"""``ragline eval`` on public QA-set shapes: HotpotQA (Wikipedia-title ids with spaces, per-question
context_ids), Natural Questions (answers as alias lists), counterfactual records (distractor_answers)."""

from __future__ import annotations

import json
from pathlib import Path

from ragline.cli import main
from ragline.eval.trec import read_run

# HotpotQA-shaped: doc ids are Wikipedia titles; each question lists its 2 gold and its own context passages.
PASSAGES = {
    "Lilu (mythology)": "Lilu is a masculine Akkadian word for a spirit, a kind of demon.",
    "Alû": "Alû is a demon of Akkadian mythology; Gallu is a demon of the underworld.",
    "Demon Dice": "Demon Dice is a board game in which a demon is a spirit of chance.",
    "Christopher Nolan": "Christopher Nolan is a British-American film director and producer.",
    "Sathish Kalathil": "Sathish Kalathil is an Indian film director and documentary maker.",
    "The Prestige (film)": "The Prestige is a 2006 film directed by Christopher Nolan about magicians.",
    "Eiffel Tower": "The Eiffel Tower in Paris was completed in 1889, designed by the company of Gustave Eiffel.",
    "Eiffel Tower (counterfactual)": "The Eiffel Tower in Paris was completed in 1925 for a world fair.",
}
# A span reader that answers whatever it finds best (no abstention threshold), so the grading is what is tested.
READER = "extractive:threshold=0,support=off"
# Natural Questions-shaped: each gold answer a list of aliases.
NQ_QUESTION = {"id": "-8421985434542839812", "question": "in what year was the eiffel tower completed",
               "answers": [["1889", "in 1889"], "1889 AD"], "supporting_ids": ["Eiffel Tower"],
               "context_ids": ["Eiffel Tower"]}  # fmt: skip
QUESTIONS = [
    {"id": "5a77ec115542992a6e59dff7", "question": "If Gallu is a demon Lilu is what?",
     "answers": [["a spirit", "spirit"]], "supporting_ids": ["Alû", "Lilu (mythology)"],
     "context_ids": ["Alû", "Lilu (mythology)", "Demon Dice"], "type": "bridge"},
    {"id": "5ae40c465542996836b02c25", "question": "Is Christopher Nolan a film director?",
     "answers": [["British-American film director", "film director"], "a film director"],
     "supporting_ids": ["Christopher Nolan"],
     "context_ids": ["Christopher Nolan", "The Prestige (film)", "Sathish Kalathil"], "type": "comparison"},
]  # fmt: skip


def hotpot(root: Path, questions: list[dict] = QUESTIONS) -> Path:
    (root / "qrels").mkdir(parents=True)
    with open(root / "corpus.jsonl", "w", encoding="utf-8") as corpus:
        for title, text in PASSAGES.items():
            corpus.write(json.dumps({"_id": title, "title": title, "text": text}) + "\n")
    with open(root / "queries.jsonl", "w", encoding="utf-8") as queries:
        for q in questions:
            queries.write(json.dumps({"_id": q["id"], "text": q["question"]}) + "\n")
    rows = [f"{q['id']}\t{doc}\t1" for q in questions for doc in q["supporting_ids"]]
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    with open(root / "questions.jsonl", "w", encoding="utf-8") as file:
        for q in questions:
            file.write(json.dumps(q) + "\n")
    return root


def json_out(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_save_run_writes_wikipedia_title_ids_that_read_back(capsys, tmp_path: Path) -> None:
    root = hotpot(tmp_path / "hotpot")
    assert main(["eval", str(root), "--save-run", str(tmp_path / "run.trec"), "--output", "json"]) == 0
    assert json_out(capsys)["run"] == str(tmp_path / "run.trec")
    run = read_run(tmp_path / "run.trec")
    assert set(run) == {q["id"] for q in QUESTIONS}
    assert "Lilu (mythology)" in run["5a77ec115542992a6e59dff7"]
    assert set().union(*run.values()) <= set(PASSAGES)


def test_save_run_is_checked_before_the_dataset_is_even_read(capsys, tmp_path: Path) -> None:
    absent = tmp_path / "absent" / "run.trec"
    assert main(["eval", str(tmp_path / "no-dataset"), "--save-run", str(absent)]) == 2
    assert f"no directory {absent.parent}" in capsys.readouterr().err


def test_several_retrievers_save_one_run_each_listed_in_the_json(capsys, tmp_path: Path) -> None:
    root = hotpot(tmp_path / "hotpot")
    specs = ["bm25", "bm25:k1=0.1,b=1.0", "bm25:variant=tfidf"]
    argv = ["eval", str(root), "--save-run", str(tmp_path / "run.trec"), "--output", "json"]
    assert main([*argv, *(arg for spec in specs for arg in ("--retriever", spec))]) == 0
    listed = json_out(capsys)["results"]
    files = [tmp_path / f"run.{n}.trec" for n in (1, 2, 3)]
    assert [(r["retriever"], r["run"]) for r in listed] == list(zip(specs, map(str, files)))
    assert not (tmp_path / "run.trec").exists()
    runs = [read_run(f) for f in files]
    assert runs[0] != runs[2]  # each file holds its own retriever's run


def answer_eval(capsys, root: Path, *extra: str) -> dict:
    assert main(["eval", str(root), "--reader", READER, "--output", "json", *extra]) == 0
    return json_out(capsys)


def saved_answers(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_alias_lists_in_answers_are_graded_against_every_alias(capsys, tmp_path: Path) -> None:
    root = hotpot(tmp_path / "nq", [NQ_QUESTION])
    answers = tmp_path / "answers.jsonl"
    summary = answer_eval(capsys, root, "--per-question-context", "--save-answers", str(answers))["summary"]
    (record,) = saved_answers(answers)
    assert record["gold_answers"] == ["1889", "in 1889", "1889 AD"]
    assert record["answer"] == "1889" and record["outcome"] == "correct"
    assert summary["counts"]["correct"] == 1 and summary["em"] == 1.0


def test_save_answers_writes_one_line_per_question(capsys, tmp_path: Path) -> None:
    root = hotpot(tmp_path / "hotpot")
    answers = tmp_path / "answers.jsonl"
    payload = answer_eval(capsys, root, "--save-answers", str(answers))
    assert payload["answers_file"] == str(answers)
    records = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == [q["id"] for q in QUESTIONS]
    for record, question in zip(records, QUESTIONS):
        assert record["question"] == question["question"]
        assert record["gold_ids"] == question["supporting_ids"]
        assert record["retrieved_ids"] and set(record["retrieved_ids"]) <= set(PASSAGES)
        assert record["grade"]["outcome"] in ("correct", "wrong", "abstained")
        assert {"answer", "abstained", "citations", "outcome"} <= set(record)
        for citation in record["citations"]:
            assert citation["doc_id"] in record["retrieved_ids"]


def test_per_question_context_searches_only_the_questions_own_passages(capsys, tmp_path: Path) -> None:
    root = hotpot(tmp_path / "hotpot")
    answers = tmp_path / "answers.jsonl"
    answer_eval(capsys, root, "--per-question-context", "-k", "10", "--save-answers", str(answers))
    records = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()]
    for record, question in zip(records, QUESTIONS):
        assert set(record["retrieved_ids"]) == set(question["context_ids"])  # k=10: all of them, none else
    run_file = tmp_path / "run.trec"
    argv = ["eval", str(root), "--per-question-context", "--save-run", str(run_file), "--output", "json"]
    assert main(argv) == 0
    assert json_out(capsys)["per_question_context"] is True
    run = read_run(run_file)
    assert {qid: set(docs) for qid, docs in run.items()} == {q["id"]: set(q["context_ids"]) for q in QUESTIONS}


def test_per_question_context_needs_context_ids(capsys, tmp_path: Path) -> None:
    questions = [{k: v for k, v in q.items() if k != "context_ids"} for q in QUESTIONS]
    root = hotpot(tmp_path / "hotpot", questions)
    assert main(["eval", str(root), "--reader", "extractive", "--per-question-context"]) == 2
    assert "no question" in capsys.readouterr().err


def test_a_planted_distractor_answer_is_counted_as_misled(capsys, tmp_path: Path) -> None:
    # Counterfactual robustness: each question's own context holds one passage, the true or the planted one.
    planted = {**NQ_QUESTION, "answers": ["1889"], "distractor_answers": ["1925"], "type": "counterfactual"}
    questions = [{**planted, "id": "cf-true"}, {**planted, "id": "cf-planted",
                                                 "context_ids": ["Eiffel Tower (counterfactual)"]}]  # fmt: skip
    root = hotpot(tmp_path / "cf", questions)
    answers = tmp_path / "answers.jsonl"
    summary = answer_eval(capsys, root, "--per-question-context", "--save-answers", str(answers))["summary"]
    true, misled = saved_answers(answers)
    assert (true["answer"], true["outcome"], true["misled"]) == ("1889", "correct", False)
    assert (misled["answer"], misled["outcome"], misled["misled"]) == ("1925", "misled", True)
    assert misled["grade"]["outcome"] == "wrong"
    assert (summary["n_with_distractors"], summary["misled"], summary["misled_rate"]) == (2, 1, 0.5)
    assert summary["by_type"]["counterfactual"]["misled"] == 1
    assert summary["counts"] == {"correct": 1, "wrong": 1, "abstained": 0}


def test_a_questions_folder_without_documents_is_an_error(capsys, tmp_path: Path) -> None:
    root = tmp_path / "qa"
    root.mkdir()
    (root / "questions.jsonl").write_text(json.dumps(QUESTIONS[0]) + "\n")
    (root / "passages.jsonl").write_text(json.dumps({"_id": "Alû", "text": "Alû is a demon."}) + "\n")
    assert main(["eval", str(root), "--reader", "extractive"]) == 2
    err = capsys.readouterr().err
    assert "no documents to search" in err and "left out: 1 .jsonl" in err and "corpus.jsonl" in err


def test_types_keep_only_the_judged_queries_of_those_types_in_retrieval(capsys, tmp_path: Path) -> None:
    root = hotpot(tmp_path / "hotpot")
    assert main(["eval", str(root), "--types", "comparison", "--save-run", str(tmp_path / "r.trec"),
                 "--output", "json"]) == 0  # fmt: skip
    out = json_out(capsys)
    assert (out["queries"], out["types"]) == (1, "comparison")
    assert set(read_run(tmp_path / "r.trec")) == {"5ae40c465542996836b02c25"}
    assert main(["eval", str(root), "--types", "nosuchtype"]) == 2
    assert "no judged query" in capsys.readouterr().err


def test_a_saved_abstention_says_which_stages_declined_and_why(capsys, tmp_path: Path) -> None:
    """--save-answers keeps a cascade's reasons: the stages that declined, and why it abstained."""
    question = {**NQ_QUESTION, "id": "q-declined", "question": "Who founded the company that sells Demon Dice?",
                "context_ids": ["Demon Dice"], "supporting_ids": ["Demon Dice"]}  # fmt: skip
    root = hotpot(tmp_path / "declined", [question])
    answers = tmp_path / "answers.jsonl"
    reader = "cascade:readers=[extractive:threshold=0],unsupported=decline"
    argv = ["eval", str(root), "--reader", reader, "--per-question-context", "--save-answers", str(answers)]
    assert main([*argv, "--output", "json"]) == 0
    capsys.readouterr()
    (record,) = saved_answers(answers)
    assert record["abstained"] and record["declined"] == ["extractive"] and record["stage"] is None
    assert record["reason"].startswith("every stage declined")
