"""The remaining lecture experiments on real parts: Recall@k by type, knowledge update, readers, probes."""

from __future__ import annotations

import json
import random

from ragline.corpora.base import Question
from ragline.corpora.countries import build_countries
from ragline.eval.experiments import dense_transfer, embedding_probe, knowledge_update, readers
from ragline.eval.typed import hit_by_type
from ragline.index import Index, IndexSettings
from ragline.retrieve.registry import build_retriever
from ragline.types import Document


def test_hit_by_type_recall_needs_every_gold_document() -> None:
    index = Index.create(None, IndexSettings())
    texts = {"a": "the capital of Korelir is Kelmiren", "b": "Kelmiren lies on the Beluline",
             "c": "the cafeteria serves lunch"}  # fmt: skip
    index.add([Document(i, t, metadata={"acl": ["all"]}) for i, t in texts.items()])
    index.commit()
    question = Question("q", "capital of Korelir", "multihop", "Beluline", gold_doc_ids=["a", "b"])
    scores = hit_by_type(build_retriever("bm25", index), [question], ks=(1, 3))["multihop"]
    # Only "a" shares the question's words: Hit@3 counts it, Recall@3 needs "b" as well.
    assert scores["hit@3"] == 1.0 and scores["recall@3"] == 0.0
    assert scores["hit@1"] == 1.0 and "leaks" in scores


def test_knowledge_update_follows_the_document_and_the_news_does_not_win() -> None:
    """Planted fault: the news arm run without restoring the original documents (it then reads the edited ones,
    answers the new name, and still retrieves every news document among 200): the news arm's answers fail it."""
    payload = knowledge_update.run()
    json.dumps(payload)
    steps = payload["steps"]
    assert payload["questions"] == 40
    assert steps["before"]["rag"]["old"] > 0.9
    assert steps["edited"]["rag"]["new"] > 0.9  # the answer follows the edited document
    assert steps["edited"]["documents"] == 160  # replaced in place, nothing added or lost
    assert steps["news added"]["news_retrieved"] == 1.0 and steps["news added"]["documents"] == 200
    # The news arm: both passages in the top 5, and the reader keeps the old document's answer (not dates).
    assert steps["news added"]["rag"]["old"] > 0.9 and steps["news added"]["rag"]["new"] < 0.1
    # Superseded originals dropped before reading: the old name is gone (the news sentence is no answer span).
    assert steps["old marked superseded"]["rag"]["old"] == 0.0


def test_readers_oracle_and_rag_on_a_few_countries_questions() -> None:
    """Planted fault: a reader that always abstains (every row and sweep point at EM 0) fails here."""
    corpus = build_countries()
    corpus.questions = [q for q in corpus.questions if q.type == "direct"][:6]
    index = Index.create(None, IndexSettings())
    index.add(corpus.documents)
    index.commit()
    payload = readers.run(corpus, index, retrievers=("bm25",))
    json.dumps(payload)
    rows = payload["rows"]
    assert set(rows) == {"oracle passage", "RAG bm25 k=1", "RAG bm25 k=5"}
    assert rows["oracle passage"]["by_type"]["all"]["n"] == 6
    recalls = [row["recall"]["all"]["em"] for row in payload["sweep"]]
    assert [row["k"] for row in payload["sweep"]] == list(readers.SWEEP_KS)
    assert recalls == sorted(recalls)  # a deeper cut never loses a retrieved document
    # The reader answers: given the gold passage, most direct questions; given BM25's top k, as many as k grows.
    assert rows["oracle passage"]["by_type"]["all"]["em"] >= 0.5
    assert all(row["em"]["all"]["em"] >= 0.5 for row in payload["sweep"])
    assert rows["RAG bm25 k=5"]["by_type"]["all"]["em"] >= 0.5


def test_closed_book_sample_keeps_type_shares_and_is_fixed() -> None:
    questions = build_countries().questions
    first = readers.closed_book_sample(questions, 40)
    assert [q.id for q in first] == [q.id for q in readers.closed_book_sample(questions, 40)]
    assert {t: sum(q.type == t for q in first) for t in {q.type for q in questions}} == {
        "direct": 10, "paraphrase": 10, "multihop": 10, "arithmetic": 10}  # fmt: skip


def test_code_documents_have_near_twins_and_bm25_tells_them_apart() -> None:
    docs, queries = embedding_probe.code_documents()
    assert len(docs) == embedding_probe.N_CODES and len(queries) == len(docs)
    index = Index.create(None, IndexSettings())
    index.add(docs)
    index.commit()
    assert all(index.search_ids(text, 1)[0][0] == gold for text, gold in queries)
    assert embedding_probe._swap_digits("E-2952", random.Random(0)) in {"E-9252", "E-5922", "E-2592", "E-2925",
                                                                          "E-2259", "E-9522"}  # fmt: skip
    assert embedding_probe._swap_digits("E-1111", random.Random(0)) is None


def test_dense_transfer_types_questions_by_held_out_relation() -> None:
    workload = dense_transfer.countries_workload(None)
    types = {q.type for q in workload.queries}
    assert {"direct/held-out", "direct/seen", "paraphrase/held-out", "paraphrase/seen", "multihop"} <= types
    payload = dense_transfer.run(workload, ("bm25",))
    scores = payload["by_retriever"]["bm25"]
    assert scores["all"]["n"] == 160
    # Direct questions use the document's words: BM25 finds them; paraphrases lose it.
    assert scores["direct/seen"]["hit@1"] > scores["paraphrase/seen"]["hit@1"]


def test_explain_ranks_under_the_groups_of_the_asking_user(tmp_path, capsys) -> None:
    from ragline.cli import main

    index = Index.create(tmp_path / "idx", IndexSettings())
    index.add([Document("public", "meal limit travel policy", metadata={"acl": ["all"]}),
               Document("secret", "meal limit travel travel meal", metadata={"acl": ["hr"]})])  # fmt: skip
    index.commit()
    ranks = {}
    for groups in ("all,hr", "all"):
        assert main(["explain", "meal limit travel", "public", "--index", str(tmp_path / "idx"),
                     "--groups", groups, "--output", "json"]) == 0  # fmt: skip
        ranks[groups] = json.loads(capsys.readouterr().out)["bm25"]["rank"]
    # The hr document outranks it for an hr user; a user without hr does not see that document.
    assert ranks == {"all,hr": 2, "all": 1}
