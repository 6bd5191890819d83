"""Exports: a BEIR folder and a Markdown folder, both read back exactly, both written atomically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ragline.corpora import Corpus, build_countries, build_orrin, export_beir, write_markdown_folder
from ragline.corpora.export import MARKER
from ragline.errors import ConfigError
from ragline.eval.datasets import load_beir, load_dataset


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return build_orrin()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def test_beir_round_trip(corpus: Corpus, tmp_path: Path) -> None:
    out = export_beir(corpus, tmp_path / "orrin")
    docs = read_jsonl(out / "corpus.jsonl")
    assert [(d["_id"], d["title"], d["text"], d["metadata"]) for d in docs] == [
        (d.id, d.title, d.text, d.metadata) for d in corpus.documents
    ]
    assert read_jsonl(out / "queries.jsonl") == [{"_id": q.id, "text": q.text} for q in corpus.questions]

    lines = (out / "qrels" / "test.tsv").read_text("utf-8").splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore"
    pairs = {tuple(line.split("\t")) for line in lines[1:]}
    expected = {(q.id, d, "1") for q in corpus.questions for d in q.gold_doc_ids}
    assert pairs == expected
    assert not {q for q, _, _ in pairs} & {q.id for q in corpus.questions if q.expected_abstain}

    records = read_jsonl(out / "questions.jsonl")
    assert len(records) == len(corpus.questions)
    for record, q in zip(records, corpus.questions, strict=True):
        assert record["id"] == q.id and record["question"] == q.text and record["type"] == q.type
        assert record["answers"] == [q.answer, *q.aliases]
        assert record["supporting_ids"] == q.gold_doc_ids
        assert record["user_groups"] == q.user_groups and record["expected_abstain"] == q.expected_abstain
        assert [(e["doc_id"], e["sentence"]) for e in record["evidence"]] == q.evidence
    assert json.loads((out / MARKER).read_text())["fingerprint"] == corpus.fingerprint()


def test_beir_export_loads_as_a_dataset(corpus: Corpus, tmp_path: Path) -> None:
    dataset = load_beir(export_beir(corpus, tmp_path / "orrin"))
    assert len(dataset.corpus) == len(corpus.documents)
    assert set(dataset.judged_queries) == {q.id for q in corpus.questions if q.gold_doc_ids}
    assert dataset.questions is not None and len(dataset.questions) == len(corpus.questions)


def test_markdown_folder_round_trip(corpus: Corpus, tmp_path: Path) -> None:
    out = write_markdown_folder(corpus, tmp_path / "md")
    assert len(list(out.glob("*.md"))) == len(corpus.documents)
    for doc in corpus.documents:
        raw = (out / f"{doc.id}.md").read_text("utf-8")
        assert raw.startswith("---\n")
        header, body = raw[4:].split("\n---\n", 1)
        meta = yaml.safe_load(header)
        assert list(meta)[:6] == ["title", "doc_type", "acl", "version", "effective_date", "superseded_by"]
        assert meta.pop("title") == doc.title
        assert meta.pop("superseded_by") == doc.metadata.get("superseded_by")
        assert meta == {k: v for k, v in doc.metadata.items() if k != "superseded_by"}
        assert body == doc.text


def test_markdown_folder_loads_as_a_questions_folder(corpus: Corpus, tmp_path: Path) -> None:
    dataset = load_dataset(write_markdown_folder(corpus, tmp_path / "md"))
    loaded = {d.id: d for d in dataset.corpus}
    assert set(loaded) == {d.id for d in corpus.documents}
    travel = loaded["policy-expense-travel"]
    assert travel.metadata["acl"] == ["all"] and travel.text == corpus.document("policy-expense-travel").text
    assert set(dataset.judged_queries) == {q.id for q in corpus.questions if q.gold_doc_ids}


def test_chinese_corpus_round_trips(tmp_path: Path) -> None:
    zh = build_countries(language="zh")
    docs = read_jsonl(export_beir(zh, tmp_path / "zh") / "corpus.jsonl")
    assert docs[0]["text"] == zh.documents[0].text
    body = (write_markdown_folder(zh, tmp_path / "zh-md") / f"{zh.documents[0].id}.md").read_text("utf-8")
    assert body.endswith(zh.documents[0].text)


def test_export_replaces_an_earlier_export_and_leaves_no_temporaries(corpus: Corpus, tmp_path: Path) -> None:
    target = tmp_path / "orrin"
    export_beir(build_countries(), target)
    export_beir(corpus, target)
    assert json.loads((target / MARKER).read_text())["corpus"] == corpus.name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["orrin"]


def test_export_refuses_to_replace_a_foreign_folder(corpus: Corpus, tmp_path: Path) -> None:
    target = tmp_path / "notes"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not an earlier corpus export"):
        export_beir(corpus, target)
    with pytest.raises(ConfigError):
        write_markdown_folder(corpus, target)
    assert (target / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes"]


def test_failed_export_keeps_the_previous_one(corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = export_beir(corpus, tmp_path / "orrin")
    before = (target / "corpus.jsonl").read_text("utf-8")

    def broken(path: Path, records: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("ragline.corpora.export._write_jsonl", broken)
    with pytest.raises(OSError, match="disk full"):
        export_beir(corpus, target)
    assert (target / "corpus.jsonl").read_text("utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["orrin"]
