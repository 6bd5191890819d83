"""Synthetic queries: one per passage, cached and resumable, the chunk's ACL kept, round-trip filtered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_fakes import FakeLLM
from ragline.cli import main
from ragline.eval.datasets import load_beir
from ragline.models.llm import CachedLLM, LLMResponseCache
from ragline.retrieve.registry import build_retriever
from ragline.train.synthetic import (
    GENERATED_FILE,
    Passage,
    clean_question,
    corpus_passages,
    generate_queries,
    load_queries,
    passage_index,
    round_trip_filter,
    sample_passages,
    write_training_folder,
)
from ragline.types import Document

PASSAGES = [
    Passage("net#0", "net", "Network", "Network credentials expire every 120 days.", ["all"]),
    Passage("print#0", "print", "Printing", "Held print jobs are purged after 72 hours.", ["all"]),
    Passage("pay#0", "pay", "Payroll", "Salary bands are reviewed each March by the pay board.", ["hr"]),
]
QUESTIONS = {
    "credentials": "How often must I change my network credentials?",
    "print": "When are held print jobs purged?",
    "Salary": "When are salary bands reviewed?",
}


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch):
    """A reply cache of this test only: a model wrapped without one uses $RAGLINE_CACHE's."""
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))


def answer(messages, *_):
    """The question of the passage the prompt holds (a deterministic stand-in for the model)."""
    text = messages[-1]["content"]
    return next(question for word, question in QUESTIONS.items() if word in text)


def test_one_query_per_passage_with_the_passage_acl_and_none_asked_twice(tmp_path: Path):
    model = FakeLLM(answer)
    records = generate_queries(PASSAGES, CachedLLM(model, LLMResponseCache(tmp_path / "c")), tmp_path, progress=False)
    assert [r["query"] for r in records] == list(QUESTIONS.values())
    assert [r["acl"] for r in records] == [["all"], ["all"], ["hr"]]
    assert len(model.calls) == 3
    # A second run, even with an empty reply cache, reads the queries from the file and asks nothing.
    again = FakeLLM(answer)
    assert generate_queries(PASSAGES, again, tmp_path, progress=False) == records
    assert again.calls == []


def test_a_killed_run_resumes_with_the_passages_not_yet_written(tmp_path: Path):
    replies = [QUESTIONS["credentials"]]

    def dies_after_one(messages, *_):
        if not replies:
            raise KeyboardInterrupt  # the run is killed while waiting for the second reply
        return replies.pop()

    with pytest.raises(KeyboardInterrupt):
        generate_queries(PASSAGES, FakeLLM(dies_after_one), tmp_path, progress=False)
    assert [r["id"] for r in load_queries(tmp_path / GENERATED_FILE).values()] == ["net#0"]
    model = FakeLLM(answer)
    records = generate_queries(PASSAGES, model, tmp_path, progress=False)
    assert len(model.calls) == 2 and "credentials" not in model.calls[0][-1]["content"]
    assert [r["id"] for r in records] == ["net#0", "print#0", "pay#0"]
    # A torn last line (a kill in the middle of a write) is skipped, and its passage asked again.
    with (tmp_path / GENERATED_FILE).open("a") as file:
        file.write('{"key": "tor')
    assert len(load_queries(tmp_path / GENERATED_FILE)) == 3


def test_the_same_text_under_another_acl_is_asked_again_and_keeps_its_own_acl(tmp_path: Path):
    public = Passage("a#0", "a", "", "Held print jobs are purged after 72 hours.", ["all"])
    private = Passage("b#0", "b", "", "Held print jobs are purged after 72 hours.", ["hr"])
    model = FakeLLM(answer)
    records = generate_queries([public, private], model, tmp_path, progress=False)
    assert len(model.calls) == 2
    assert [(r["id"], r["acl"]) for r in records] == [("a#0", ["all"]), ("b#0", ["hr"])]


def test_round_trip_filter_keeps_queries_that_find_their_passage_under_its_acl(tmp_path: Path):
    records = [
        {"id": "net#0", "query": "network credentials expire", "acl": ["all"]},
        {"id": "print#0", "query": "salary bands pay board", "acl": ["all"]},  # about another passage
        {"id": "pay#0", "query": "salary bands reviewed", "acl": ["hr"]},
        {"id": "print#0", "query": None, "acl": ["all"]},  # the model wrote no question
    ]
    first = build_retriever("bm25", passage_index(PASSAGES))
    kept = round_trip_filter(records, first, depth=1)
    assert [(r["id"], r["rank"]) for r in kept] == [("net#0", 1), ("pay#0", 1)]


def test_the_training_folder_is_a_beir_folder_with_the_acl_kept(tmp_path: Path):
    records = [{"id": "net#0", "doc_id": "net", "query": "How often do I change my password?", "acl": ["all"]},
               {"id": "pay#0", "doc_id": "pay", "query": "When are salary bands reviewed?", "acl": ["hr"]}]  # fmt: skip
    counts = write_training_folder(PASSAGES, records, tmp_path)
    assert counts == {"passages": 3, "queries": 2}
    dataset = load_beir(tmp_path, "train")
    assert dataset.qrels == {"synthetic-00001": {"net#0": 1}, "synthetic-00002": {"pay#0": 1}}
    assert {doc.id: doc.metadata["acl"] for doc in dataset.corpus} == {"net#0": ["all"], "print#0": ["all"],
                                                                      "pay#0": ["hr"]}  # fmt: skip
    queries = [json.loads(line) for line in (tmp_path / "queries.jsonl").read_text().splitlines()]
    assert queries[1]["metadata"] == {"passage_id": "pay#0", "doc_id": "pay", "acl": ["hr"]}


def test_passages_are_chunks_with_their_document_and_acl_and_samples_nest():
    text = (
        "# Guide\n\n## Access\n\nThe gateway ends sessions after eight hours.\n\n"
        "## Keys\n\nRecovery keys come from the desk."
    )
    documents = [Document("guide", text, "Guide", {"acl": ["it"]})]
    passages = corpus_passages(documents, "structure:max_words=50")
    assert [p.doc_id for p in passages] == ["guide"] * len(passages) and len(passages) == 2
    assert all(p.acl == ["it"] for p in passages)
    many = [Passage(f"p{i}", "d", "", "some words of text here", None) for i in range(20)]
    assert sample_passages(many, 5, seed=1) == sample_passages(many, 8, seed=1)[:5]
    assert sorted(p.id for p in sample_passages(many, None)) == sorted(p.id for p in many)


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        ("Question: When do keys expire?", "When do keys expire?"),
        ("1. How long is a session?\nmore", "How long is a session?"),
        ('"Who runs SS-900?"', "Who runs SS-900?"),
        ("Yes.", None),
    ],  # fmt: skip
)
def test_clean_question(reply: str, question: str | None):
    assert clean_question(reply) == question


def test_cli_corpus_kinds_need_out_and_reject_trainer_flags(tmp_path: Path, capsys):
    assert main(["train", "queries", str(tmp_path)]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["train", "thesaurus", str(tmp_path), "--out", "t.txt", "--negatives", "3"]) == 2
    assert "--negatives" in capsys.readouterr().err
    assert main(["train", "embedder", str(tmp_path)]) == 2
    assert "--name" in capsys.readouterr().err
