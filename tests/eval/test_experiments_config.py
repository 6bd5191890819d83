"""``ragline experiment`` end to end: ``--config A --config B`` as rows of readers and dense-transfer; flags checked
before a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main

DOCUMENTS = {
    "korelir": ("Korelir", "The capital of Korelir is Kelmiren. Korelir lies in the north."),
    "mermir": ("Mermir", "The capital of Mermir is Ostavel. Mermir borders the sea."),
    "vantor": ("Vantor", "The capital of Vantor is Drusk. Vantor is a mountain country."),
    "cafeteria": ("Cafeteria", "The cafeteria serves lunch from noon and closes at three."),
}
QUESTIONS = [
    ("q1", "What is the capital of Korelir?", "Kelmiren", "korelir"),
    ("q2", "What is the capital of Mermir?", "Ostavel", "mermir"),
    ("q3", "What is the capital of Vantor?", "Drusk", "vantor"),
]


def _qa_folder(root: Path) -> Path:
    """A questions folder in the layout of ``squad_v2_dev_subset``: passages, queries, qrels, answers."""
    folder = root / "tiny-qa"
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as out:
        for doc_id, (title, text) in DOCUMENTS.items():
            out.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w") as out:
        for qid, text, _, _ in QUESTIONS:
            out.write(json.dumps({"_id": qid, "text": text}) + "\n")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{qid}\t{doc}\t1\n" for qid, _, _, doc in QUESTIONS)
    )
    with (folder / "questions.jsonl").open("w") as out:
        for qid, text, answer, doc in QUESTIONS:
            out.write(json.dumps({"id": qid, "question": text, "answers": [answer], "supporting_ids": [doc]}) + "\n")
    return folder


def _configs(root: Path) -> list[str]:
    """Two small configs that share a retriever spec (bm25) and differ in k and reader."""
    one = root / "bm25-k1.toml"
    one.write_text('schema = 1\nname = "bm25-k1"\n[retrieve]\nretriever = "bm25"\nk = 1\n'
                   '[read]\nreader = "extractive:top_k=1"\n')  # fmt: skip
    three = root / "bm25-k3.yaml"
    three.write_text("schema: 1\nname: bm25-k3\nretrieve:\n  retriever: bm25\n  k: 3\nread:\n  reader: extractive\n")
    return [str(one), str(three)]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_readers_runs_each_config_as_a_row_beside_the_built_in_ones(tmp_path, capsys) -> None:
    folder, configs = _qa_folder(tmp_path), _configs(tmp_path)
    payload = _run(["experiment", "readers", "--dataset", str(folder), "--closed-book", "0",
                    "--config", configs[0], "--config", configs[1], "--output", "json"], capsys)  # fmt: skip
    rows = payload["rows"]
    assert {"config bm25-k1", "config bm25-k3", "RAG bm25 k=1", "oracle passage"} <= set(rows)
    expected = {
        "retriever": "bm25",
        "k": 1,
        "versions": "current",
        "filter": "inside",
        "freshness": "check",
        "dates": "order",
    }
    assert rows["config bm25-k1"]["config"]["retrieve"] == expected
    assert rows["config bm25-k3"]["config"]["retrieve"]["k"] == 3
    assert payload["provenance"]["configs"] == configs
    # Each question names its country's capital in one passage: BM25's top 1 is it, and the whole pipeline
    # with k 1 answers as the experiment's own "BM25 top 1, extractive reader" row does.
    assert rows["config bm25-k1"]["by_type"]["all"] == rows["RAG bm25 k=1"]["by_type"]["all"]
    assert rows["config bm25-k1"]["by_type"]["all"]["n"] == len(QUESTIONS)


def test_dense_transfer_keeps_two_configs_with_one_retriever_apart(tmp_path, capsys) -> None:
    folder, configs = _qa_folder(tmp_path), _configs(tmp_path)
    payload = _run(["experiment", "dense-transfer", "--dataset", str(folder), "--config", configs[0],
                    "--config", configs[1], "--output", "json"], capsys)  # fmt: skip
    rows = payload["by_retriever"]
    assert set(rows) == {"bm25", "dense", "hybrid", "config bm25-k1", "config bm25-k3"}
    # Both configs retrieve with BM25 over the same index: the same ranking as the built-in bm25 row.
    assert rows["config bm25-k1"]["all"] == rows["config bm25-k3"]["all"] == rows["bm25"]["all"]


def test_an_experiment_without_pipeline_rows_refuses_a_config(tmp_path, capsys) -> None:
    argv = ["experiment", "scorers", "--dataset", str(_qa_folder(tmp_path)), "--config", _configs(tmp_path)[0]]
    assert main(argv) == 2
    assert "takes no pipeline configs" in capsys.readouterr().err


def test_a_plot_the_experiment_lacks_is_refused_before_it_runs(tmp_path, capsys) -> None:
    # The dataset folder does not exist: running the probe first would fail on it instead.
    argv = ["experiment", "embedding-probe", "--dataset", str(tmp_path / "missing"), "--plot", str(tmp_path / "p.png")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--plot" in err and "has no plot" in err
    assert not (tmp_path / "p.png").exists()


def test_rag_sequence_needs_an_llm(tmp_path, capsys) -> None:
    assert main(["experiment", "rag-sequence", "--dataset", str(_qa_folder(tmp_path)), "--llm", "none"]) == 2
    assert "needs an LLM reader" in capsys.readouterr().err


def test_rag_sequence_runs_a_dataset_end_to_end(tmp_path, capsys, monkeypatch) -> None:
    """``ragline experiment rag-sequence --dataset DIR``: every row graded on the sampled questions, k calls a
    question for RAG-Sequence. The model is a stand-in that answers "Kelmiren" from every passage (p 0.5) and
    from the concatenated context. Planted fault checked: passing --k as the question count (3 questions
    instead of 2 per --questions) fails the counts."""
    import math

    from llm_fakes import FakeLLM
    from ragline.answer import pipeline
    from ragline.models.llm import ScoredReply

    class Scoring(FakeLLM):
        def chat_scored(self, messages, max_tokens=256, seed=0, stop=None):
            self.calls.append(list(messages))
            return ScoredReply("Kelmiren", (math.log(0.5),))

    fake = Scoring(lambda *a: json.dumps({"answer": "Kelmiren", "sources": [1]}), structured=True)
    monkeypatch.setattr(pipeline, "build_reader", lambda spec: pipeline.LLMReader(llm=fake))
    payload = _run(["experiment", "rag-sequence", "--dataset", str(_qa_folder(tmp_path)), "--questions", "2",
                    "--k", "3", "--output", "json"], capsys)  # fmt: skip
    assert payload["questions"] == 2 and payload["model_calls"] == {"concatenated": 2, "rag-sequence": 6}
    assert set(payload["rows"]) == {"concatenated", "rag-sequence", "rag-sequence, uniform p(z)", "top passage"}
    correct = [q["gold"] == "Kelmiren" for q in payload["per_question"]]
    assert payload["rows"]["rag-sequence"]["counts"]["correct"] == sum(correct)
