"""Dataset loading: counts of the real bench sets against their README, and small folders for errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragline.errors import ConfigError, InputError
from ragline.eval.datasets import Dataset, load_beir, load_dataset

# The ``bench`` fixture (tests/conftest.py) is $RAGLINE_BENCH or ../shared/bench, or skips.
# From bench/README.md and each SOURCE.md: docs, queries, judged queries, qrels rows.
COUNTS = {
    ("scifact", "test"): (5183, 1109, 300, 339),
    ("scifact", "train"): (5183, 1109, 809, None),
    ("cranfield", "test"): (1400, 225, 225, 1612),
    ("cisi", "test"): (1460, 112, 76, 3114),
    ("npl", "test"): (11426, 93, 93, 2083),
    ("hotpotqa_train_hipporag_100", "test"): (994, 100, 100, 200),
    ("squad_v2_dev_subset", "test"): (173, 705, 705, 705),
}
QUESTION_COUNTS = {"hotpotqa_train_hipporag_100": 100, "squad_v2_dev_subset": 1407}

_loaded: dict[tuple[Path, str], Dataset] = {}


def load_once(folder: Path, split: str = "test") -> Dataset:
    """Each bench set is loaded once per session (scifact and npl take a fraction of a second)."""
    if (folder, split) not in _loaded:
        _loaded[folder, split] = load_dataset(folder, split)
    return _loaded[folder, split]


@pytest.mark.parametrize(("name", "split"), COUNTS)
def test_bench_counts_match_the_readme(bench: Path, name: str, split: str) -> None:
    docs, queries, judged, qrels_rows = COUNTS[name, split]
    dataset = load_once(bench / name, split)
    assert (dataset.name, dataset.split) == (name, split)
    assert len(dataset.corpus) == docs
    assert len(dataset.queries) == queries
    assert len(dataset.judged_queries) == judged
    if qrels_rows is not None:
        assert sum(len(judgments) for judgments in dataset.qrels.values()) == qrels_rows
    questions = QUESTION_COUNTS.get(name)
    assert (len(dataset.questions) if dataset.questions is not None else None) == questions


@pytest.mark.parametrize("name", sorted({name for name, _ in COUNTS}))
def test_file_hashes_match_source_md(bench: Path, name: str) -> None:
    dataset = load_once(bench / name)
    source = (bench / name / "SOURCE.md").read_text(encoding="utf-8")
    recorded = dict(re.findall(r"^- (\S+)\s+([0-9a-f]{64})\s", source, flags=re.MULTILINE))
    assert dataset.file_hashes == {path: recorded[path] for path in dataset.file_hashes}
    assert "corpus.jsonl" in dataset.file_hashes


def test_bench_records(bench: Path) -> None:
    cranfield = load_once(bench / "cranfield")
    assert {grade for judgments in cranfield.qrels.values() for grade in judgments.values()} == {1, 2, 3, 4}
    first_doc = cranfield.corpus[0]
    assert first_doc.id == "1" and first_doc.title.startswith("experimental investigation")
    assert any(doc.metadata for doc in cranfield.corpus)  # author/bib live in metadata
    hotpot = load_once(bench / "hotpotqa_train_hipporag_100")
    first = hotpot.questions[0]
    assert set(hotpot.qrels[first["id"]]) == set(first["supporting_ids"])
    assert load_once(bench / "scifact").splits == ["test", "train"]


def test_unknown_split_lists_the_available_ones(bench: Path) -> None:
    with pytest.raises(ConfigError, match=r"'dev'.*available: test, train"):
        load_beir(bench / "scifact", split="dev")


# --- small folders ---------------------------------------------------------------------


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")


def make_beir(root: Path) -> Path:
    write_jsonl(
        root / "corpus.jsonl",
        [
            {"_id": "d1", "title": "One", "text": "first", "metadata": {"year": 2001}},
            {"_id": 2, "text": "second"},  # integer id and no title: both tolerated
        ],
    )
    write_jsonl(root / "queries.jsonl", [{"_id": "q1", "text": "find one"}, {"_id": "q2", "text": "other"}])
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\t2\t0\n")
    return root


def test_load_beir_reads_documents_queries_and_qrels(tmp_path: Path) -> None:
    dataset = load_dataset(make_beir(tmp_path / "tiny"))
    assert [(doc.id, doc.title, doc.text, doc.metadata) for doc in dataset.corpus] == [
        ("d1", "One", "first", {"year": 2001}),
        ("2", "", "second", {}),
    ]
    assert dataset.queries == {"q1": "find one", "q2": "other"}
    assert dataset.qrels == {"q1": {"d1": 1, "2": 0}}
    assert dataset.judged_queries == {"q1": "find one"}
    assert dataset.questions is None
    assert sorted(dataset.file_hashes) == ["corpus.jsonl", "qrels/test.tsv", "queries.jsonl"]
    assert "corpus" not in repr(dataset)  # a repr must not print 5,000 documents


def test_hash_changes_with_any_file_read(tmp_path: Path) -> None:
    root = make_beir(tmp_path / "tiny")
    before = load_beir(root).hash
    assert load_beir(root).hash == before
    with open(root / "qrels" / "test.tsv", "a") as qrels:
        qrels.write("q2\td1\t1\n")
    assert load_beir(root).hash != before


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"_id": "d3", "text": "x"', "not valid JSON"),
        ('["d3", "x"]', "expected a JSON object, got list"),
        ('{"text": "x"}', "field '_id' is missing"),
        ('{"_id": "d3", "text": 7}', "must be strings"),
        ('{"_id": "d1", "text": "again"}', "id 'd1' appears twice"),
        ('{"_id": "d3", "text": "x", "metadata": [1]}', "field 'metadata' must be an object"),
    ],
)
def test_malformed_corpus_line_names_path_and_line(tmp_path: Path, line: str, reason: str) -> None:
    root = make_beir(tmp_path / "tiny")
    with open(root / "corpus.jsonl", "a") as corpus:
        corpus.write("\n" + line + "\n")  # line 3 is blank, the bad one is line 4
    with pytest.raises(InputError) as raised:
        load_beir(root)
    assert raised.value.source == f"{root / 'corpus.jsonl'}:4"
    assert reason in raised.value.reason


def test_qrels_query_without_text_is_an_input_error(tmp_path: Path) -> None:
    root = make_beir(tmp_path / "tiny")
    with open(root / "qrels" / "test.tsv", "a") as qrels:
        qrels.write("q9\td1\t1\n")
    with pytest.raises(InputError, match=r"1 of its queries are not in queries.jsonl.*q9"):
        load_beir(root)


def make_questions_folder(root: Path) -> Path:
    (root / "guides").mkdir(parents=True)
    (root / "intro.txt").write_text("ragline indexes folders", encoding="utf-8")
    (root / "guides" / "setup.md").write_text("# Setup\nrun make setup", encoding="utf-8")
    (root / ".hidden.txt").write_text("not a document", encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG")
    write_jsonl(
        root / "questions.jsonl",
        [
            {"id": "1", "question": "How?", "answers": ["make setup"], "supporting_ids": ["guides/setup"]},
            {"id": "2", "question": "What?", "supporting_ids": ["intro.txt", "guides/setup"]},
            {"id": "3", "question": "Unanswerable?", "answers": [], "supporting_ids": []},
        ],
    )
    return root


def test_questions_folder_derives_qrels_from_supporting_ids(tmp_path: Path) -> None:
    root = make_questions_folder(tmp_path / "docs")
    (root / "intro.txt.meta.json").write_text('{"team": "docs"}', encoding="utf-8")
    dataset = load_dataset(root)
    documents = {doc.id: (doc.source, doc.title, doc.metadata) for doc in dataset.corpus}
    assert documents == {
        "guides/setup": ("guides/setup.md", "Setup", {}),
        "intro": ("intro.txt", "intro", {"team": "docs"}),
    }
    assert dataset.qrels == {"1": {"guides/setup": 1}, "2": {"intro": 1, "guides/setup": 1}}
    assert list(dataset.judged_queries) == ["1", "2"]
    assert len(dataset.queries) == len(dataset.questions) == 3
    read = ["guides/setup.md", "intro.txt", "intro.txt.meta.json", "questions.jsonl"]
    assert sorted(dataset.file_hashes) == read


def test_questions_folder_fails_on_a_bad_or_ambiguous_document(tmp_path: Path) -> None:
    root = make_questions_folder(tmp_path / "docs")
    (root / "intro.md").write_text("same id as intro.txt", encoding="utf-8")
    with pytest.raises(InputError, match="would share the document id 'intro'"):
        load_dataset(root)
    (root / "intro.md").unlink()
    (root / "notes.md").write_bytes(bytes(range(128, 256)) * 2)  # no text encoding decodes this
    with pytest.raises(InputError, match="UTF-8") as raised:
        load_dataset(root)
    assert raised.value.source == str(root / "notes.md")


def test_questions_folder_rejects_unknown_supporting_ids_and_splits(tmp_path: Path) -> None:
    root = make_questions_folder(tmp_path / "docs")
    with pytest.raises(ConfigError, match="available: test"):
        load_dataset(root, split="train")
    with open(root / "questions.jsonl", "a") as questions:
        questions.write(json.dumps({"id": "4", "question": "?", "supporting_ids": ["missing"]}) + "\n")
    with pytest.raises(InputError) as raised:
        load_dataset(root)
    assert raised.value.source == f"{root / 'questions.jsonl'}:4"
    assert "'missing'" in raised.value.reason


def test_not_a_dataset(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such directory"):
        load_dataset(tmp_path / "absent")
    with pytest.raises(InputError, match="not a dataset"):
        load_dataset(tmp_path)
