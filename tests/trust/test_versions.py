"""Versions policy (current | as-of=DATE | all) inside retrieval, change questions, and conflicting sources."""

from __future__ import annotations

import pytest

from ragline.answer.context import build_context
from ragline.answer.pipeline import RAGPipeline, build_reader
from ragline.answer.version_policy import VersionPolicy
from ragline.answer.versions import (
    about_answer,
    conflict_note,
    find_conflicts,
    is_change_question,
    reader_answer,
)
from ragline.config import PipelineConfig, load_config
from ragline.errors import ConfigError
from ragline.index import Index, IndexSettings
from ragline.index.filters import acl_filter
from ragline.types import Document


def _index(docs: list[Document]) -> Index:
    index = Index.create(None, IndexSettings())
    index.add(docs)
    index.commit()
    return index


def _policy_docs() -> list[Document]:
    return [
        Document("leave-2024", "Employees receive 20 days of annual leave each year.", "Leave policy",
                 {"effective_date": "2024-01-01", "superseded_by": "leave-2026", "acl": ["all"]}),
        Document("leave-2026", "Employees receive 25 days of annual leave each year.", "Leave policy",
                 {"effective_date": "2026-01-01", "supersedes": "leave-2024", "acl": ["all"]}),
        Document("travel", "The travel per diem is 40 dollars.", "Travel", {"acl": ["all"]}),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("policy", "expected"),
    [("current", {"leave-2026"}), ("all", {"leave-2024", "leave-2026"}),
     ("as-of=2025-06-30", {"leave-2024"}), ("as-of=2023-06-30", set()), ("as-of=2026-02-01", {"leave-2026"})],
)  # fmt: skip
def test_policy_filters_inside_retrieval(policy: str, expected: set[str]) -> None:
    index = _index(_policy_docs())
    pipeline = RAGPipeline(index, None, retriever="bm25", k=2, versions=policy)
    got = {h.doc_id for h in pipeline.retrieve("how many days of annual leave")} - {"travel"}
    assert got == expected


def test_current_keeps_an_old_version_whose_successor_is_not_indexed() -> None:
    index = _index(_policy_docs()[:1])
    assert [h.doc_id for h in RAGPipeline(index, None, retriever="bm25").retrieve("annual leave")] == ["leave-2024"]


def test_policy_parse_and_config() -> None:
    assert str(VersionPolicy.parse("AS-OF=2025-01-31")) == "as-of=2025-01-31"
    with pytest.raises(ConfigError, match="ISO date"):
        VersionPolicy.parse("as-of=yesterday")
    with pytest.raises(ConfigError, match="versions"):
        PipelineConfig.from_dict({"retrieve": {"versions": "newest"}})
    assert PipelineConfig.from_dict({"retrieve": {}}).retrieve.versions == "current"  # schema 1 without the key
    config = PipelineConfig.from_dict({"retrieve": {"versions": "all"}})
    assert PipelineConfig.from_dict(config.to_dict()) == config


def test_change_question_cites_both_versions() -> None:
    index = _index(_policy_docs())
    pipeline = RAGPipeline(index, build_reader("extractive"), retriever="bm25", k=3)
    answer, _ = pipeline.answer("What changed in the annual leave policy?")
    assert {c.doc_id for c in answer.citations} == {"leave-2024", "leave-2026"}
    assert "20 days" in answer.text and "25 days" in answer.text
    assert answer.text.index("20 days") < answer.text.index("25 days")  # old, then current


def _chunked_versions(acl_2026: list[str], chunker: str = "fixed:size=12,overlap=0") -> Index:
    from ragline.ingest.pipeline import IngestConfig, build_index

    text = ("Employees receive {days} days of annual leave each year. Requests go to the team lead.\n\n"
            "Parking at the depot costs {fee} dollars a day for every employee.")  # fmt: skip
    docs = [Document("leave-2024", text.format(days=20, fee=5), "Leave policy",
                     {"effective_date": "2024-01-01", "superseded_by": "leave-2026", "acl": ["all"]}),
            Document("leave-2026", text.format(days=25, fee=8), "Leave policy",
                     {"effective_date": "2026-01-01", "supersedes": "leave-2024", "acl": acl_2026})]  # fmt: skip
    return build_index(docs, IngestConfig(chunker), IndexSettings())


@pytest.mark.parametrize("chunker", ["fixed:size=12,overlap=0", "fixed:size=7,overlap=3"])
def test_change_question_reads_both_versions_whole_when_retrieval_returns_a_part(chunker: str) -> None:
    index = _chunked_versions(["all"], chunker)
    pipeline = RAGPipeline(index, build_reader("extractive"), retriever="bm25", k=1)  # one chunk retrieved
    assert len(pipeline.context("What changed in the annual leave policy?")) == 1
    answer, context = pipeline.answer("What changed in the annual leave policy?", acl_filter(["all"]))
    assert {c.doc_id for c in answer.citations} == {"leave-2024", "leave-2026"}
    assert "20 days" in answer.text and "25 days" in answer.text
    assert "5 dollars" in answer.text and "8 dollars" in answer.text  # the parts retrieval did not return
    assert all(c.n <= len(context) for c in answer.citations)  # cited from the context returned
    # each version put back whole from its chunks, once, overlaps and all
    assert [s.text for s in context.sources][0].count("annual leave") == 1
    assert "Parking at the depot costs 5 dollars a day" in context.sources[0].text


def test_change_question_adds_no_version_the_asker_may_not_read() -> None:
    index = _chunked_versions(["hr"])
    pipeline = RAGPipeline(index, build_reader("extractive"), retriever="bm25", k=1)
    answer, context = pipeline.answer("What changed in the annual leave policy?", acl_filter(["all"]))
    assert all(s.hit.document_id == "leave-2024" for s in context.sources)
    assert "25" not in answer.text and "leave-2026" not in {c.doc_id for c in answer.citations}


def test_change_questions_are_recognised_narrowly() -> None:
    assert is_change_question("What changed between the 2024 and 2026 policy?")
    assert is_change_question("What are the differences between the old and new rota?")
    assert not is_change_question("How much notice is needed to change a remote work schedule?")


def test_unlinked_sources_that_disagree_are_flagged_as_a_conflict() -> None:
    docs = [Document("a", "The travel per diem is 40 dollars a day.", "Travel", {}),
            Document("b", "The travel per diem is 55 dollars a day.", "Travel FAQ", {})]  # fmt: skip
    index = _index(docs)
    context = build_context(index.search("travel per diem", 2), 1500, "rank")
    conflicts = find_conflicts(context)
    assert [c.kind for c in conflicts] == ["conflict"]
    answer, _ = RAGPipeline(index, build_reader("extractive"), retriever="bm25", k=2).answer("What is the per diem?")
    assert answer.details["conflicts"][0]["kind"] == "conflict"
    assert any("disagree" in n for n in answer.details["notes"])


def test_unlinked_conflict_is_said_in_the_answer_text_citing_both_sources() -> None:
    docs = [Document("a", "The travel per diem is 40 dollars a day.", "Travel", {}),
            Document("b", "The travel per diem is 55 dollars a day.", "Travel FAQ", {})]  # fmt: skip
    pipeline = RAGPipeline(_index(docs), build_reader("extractive:threshold=0"), retriever="bm25", k=2)
    answer, _ = pipeline.answer("What is the travel per diem a day?")
    assert not answer.abstained
    note = answer.details["note"]
    assert answer.text.endswith(note) and note.startswith("Note: the sources disagree")
    assert "40" in note and "55" in note and "[1]" in note and "[2]" in note
    assert {c.doc_id for c in answer.citations} == {"a", "b"}  # both sides cited, not merged into one value


def test_three_sources_that_disagree_are_one_clause_naming_each_source_once() -> None:
    docs = [Document("a", "The travel per diem is 40 dollars a day.", "Travel", {}),
            Document("b", "The travel per diem is 55 dollars a day.", "Travel FAQ", {}),
            Document("c", "The travel per diem is 70 dollars a day.", "Travel wiki", {})]  # fmt: skip
    pipeline = RAGPipeline(_index(docs), build_reader("extractive:threshold=0"), retriever="bm25", k=3)
    answer, _ = pipeline.answer("What is the travel per diem a day?")
    note = answer.details["note"]
    assert note.count("the sources disagree") == 1 and note.count("no version metadata") == 1
    assert [note.count(f"[{n}] states") for n in (1, 2, 3)] == [1, 1, 1]
    assert all(value in note for value in ("40 dollars", "55 dollars", "70 dollars"))
    own = reader_answer(answer)  # what the reader said, for graders
    assert own.text and note not in own.text and len(own.citations) == 1


def test_two_versions_in_the_context_are_said_in_the_answer_current_one_named() -> None:
    # versions = "all": both versions reach the reader, so the answer must say which is current
    pipeline = RAGPipeline(_index(_policy_docs()), build_reader("extractive"), retriever="bm25", k=2, versions="all")
    answer, context = pipeline.answer("How many days of annual leave do employees receive?")
    note = answer.details["note"]
    old = next(s.n for s in context.sources if s.hit.doc_id == "leave-2024")
    new = next(s.n for s in context.sources if s.hit.doc_id == "leave-2026")
    assert f"[{old}] (2024-01-01, older version) states 20" in note
    assert f"[{new}] (2026-01-01, current) states 25" in note
    assert note.index(f"[{old}]") < note.index(f"[{new}]")  # the current value last, preferred
    assert {c.doc_id for c in answer.citations} == {"leave-2024", "leave-2026"}
    assert "25 days" in reader_answer(answer).text


def test_the_note_names_the_disagreement_the_answer_takes_a_side_in() -> None:
    text = "The travel per diem is {} dollars a day. The hotel cap is {} dollars a night."
    docs = [Document("a", text.format(40, 120), "Travel", {}), Document("b", text.format(55, 150), "FAQ", {})]
    context = build_context(_index(docs).search("travel per diem hotel cap", 2), 1500, "rank")
    conflicts = find_conflicts(context)
    assert len(conflicts) == 2
    (chosen,) = about_answer(conflicts, "40 dollars")
    assert "per diem" in chosen.a_text and conflict_note([chosen], context).count("states") == 2
    assert "$" not in conflict_note([chosen], context) and "40 dollars" in conflict_note([chosen], context)
    assert about_answer(conflicts, "something else") == []  # the sources disagree on what the answer does not say


def test_documents_naming_different_things_are_no_conflict() -> None:
    text = "The incident was rated severity {}. The first alert for error {} came at {} UTC."
    docs = [Document("e-2925", text.format(1, "E-2925", "12:31"), "Incident Report E-2925: outage", {}),
            Document("e-2952", text.format(2, "E-2952", "02:56"), "Incident Report E-2952: outage", {})]  # fmt: skip
    context = build_context(_index(docs).search("incident severity alert", 2), 1500, "rank")
    assert find_conflicts(context) == []
    same = [Document("a", text.format(1, "E-2925", "12:31"), "Incident Report E-2925", {}),
            Document("b", text.format(2, "E-2925", "12:31"), "Incident E-2925 review", {})]  # fmt: skip
    context = build_context(_index(same).search("incident severity alert", 2), 1500, "rank")
    assert [(c.a_values, c.b_values) for c in find_conflicts(context)] == [(("1",), ("2",))]


def test_no_note_without_a_conflict_and_none_on_an_abstention() -> None:
    pipeline = RAGPipeline(_index(_policy_docs()), build_reader("extractive"), retriever="bm25", k=2)
    answer, _ = pipeline.answer("How many days of annual leave do employees receive?")  # current only
    assert "note" not in answer.details and "Note:" not in answer.text
    docs = [Document("a", "The travel per diem is 40 dollars a day.", "Travel", {}),
            Document("b", "The travel per diem is 55 dollars a day.", "Travel FAQ", {})]  # fmt: skip
    strict = RAGPipeline(_index(docs), build_reader("extractive:threshold=0.99"), retriever="bm25", k=2)
    answer, _ = strict.answer("What is the per diem?")
    assert answer.abstained and answer.details["conflicts"] and "note" not in answer.details


@pytest.mark.models
def test_llm_reader_answer_says_the_conflict_and_cites_both() -> None:
    from ragline.models.llm import load_llm

    llm = load_llm("local:smollm2-135m", n_ctx=1024)
    try:
        docs = [Document("a", "The travel per diem is 40 dollars a day.", "Travel", {}),
                Document("b", "The travel per diem is 55 dollars a day.", "Travel FAQ", {})]  # fmt: skip
        reader = build_reader("llm", llm=llm)
        pipeline = RAGPipeline(_index(docs), reader, retriever="bm25", k=2)
        answer, _ = pipeline.answer("What is the travel per diem a day?")
    finally:
        llm.close()
    if answer.abstained:  # the tiny model may decline; the conflict is then in the details only
        assert answer.details["conflicts"]
        return
    assert answer.text.endswith(answer.details["note"]) and "disagree" in answer.details["note"]
    assert {c.doc_id for c in answer.citations} == {"a", "b"}


def test_different_things_with_different_values_are_no_conflict() -> None:
    docs = [Document("a", "Substation Harlow North has a capacity of 40 MW.", "Harlow", {}),
            Document("b", "Substation Ferrin East has a capacity of 60 MW.", "Ferrin", {})]  # fmt: skip
    context = build_context(_index(docs).search("substation capacity", 2), 1500, "rank")
    assert find_conflicts(context) == []


@pytest.mark.slow
def test_orrin_version_questions_current_and_what_changed() -> None:
    from ragline.corpora.builtin import orrin_index

    index, corpus = orrin_index()
    config = load_config("extractive").with_overrides(retrieve={"retriever": "bm25"})
    pipeline = RAGPipeline.from_config(config, index)
    questions = [q for q in corpus.questions if q.type == "version"]
    assert questions
    for q in questions:  # under `current` no superseded version reaches the reader
        hits = pipeline.retrieve(q.text)
        assert all(not h.metadata.get("superseded_by") for h in hits), q.text
        answer, _ = pipeline.answer(q.text)
        assert not any(d in answer.text for d in q.distractor_answers), (q.text, answer.text)
    answer, _ = pipeline.answer("What changed between the 2024 and 2026 remote work policy?")
    assert {"policy-remote-work-2024", "policy-remote-work-2026"} <= {c.doc_id for c in answer.citations}
    weak = RAGPipeline.from_config(config.with_overrides(retrieve={"versions": "all"}), index)
    assert any(h.metadata.get("superseded_by") for q in questions for h in weak.retrieve(q.text))


def test_a_commit_that_adds_a_successor_hides_the_old_version() -> None:
    index = _index(_policy_docs()[:1])
    pipeline = RAGPipeline(index, None, retriever="bm25")
    assert [h.doc_id for h in pipeline.retrieve("annual leave")] == ["leave-2024"]
    index.add(_policy_docs()[1:2])
    index.commit()  # a new generation: the version links are read again
    assert [h.doc_id for h in pipeline.retrieve("annual leave")] == ["leave-2026"]
