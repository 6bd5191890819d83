"""Questions about the newest or oldest of something: answered from that dated document, inside the filter."""

from __future__ import annotations

import pytest

from ragline.answer.pipeline import RAGPipeline, build_reader
from ragline.answer.recency import (
    NEWEST,
    OLDEST,
    RecencyAsk,
    date_field,
    newest_first,
    recency_ask,
    without_cue,
)
from ragline.answer.support import asked_text
from ragline.config import PipelineConfig, load_config
from ragline.errors import ConfigError
from ragline.index import Index
from ragline.index.filters import acl_filter
from ragline.text.analyzer import get_analyzer
from ragline.types import Document, Hit

REPORTS = {  # id: (incident date, root cause, who may read it)
    "incident-a": ("2025-03-02", "a failed disk on db-1", ["all"]),
    "incident-b": ("2025-11-20", "an expired certificate on web-7", ["all"]),
    "incident-c": ("2025-06-11", "a full queue on mq-3", ["all"]),
    "incident-d": ("2025-12-30", "a leaked token on vault-2", ["security"]),  # the newest, restricted
}


@pytest.fixture(scope="module")
def reports() -> Index:
    index = Index.create(None)
    docs = [
        Document(
            doc_id,
            f"On {day} users saw errors. The root cause was {cause}. Service was restored the same day.",
            title=f"Incident report {doc_id}",
            metadata={"acl": acl, "incident_date": day, "effective_date": "2026-01-01"},
        )
        for doc_id, (day, cause, acl) in REPORTS.items()
    ]
    docs.append(
        Document(
            "incident-process",
            "How to declare an incident. The root cause of an incident is written up within five days.",
            title="Incident process",
            metadata={"acl": ["all"], "effective_date": "2026-02-01"},
        )
    )
    index.add(docs)
    index.commit()
    return index


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What was the root cause of the most recent incident?", RecencyAsk(NEWEST, "incident")),
        ("Which is the latest release?", RecencyAsk(NEWEST, "release")),
        ("When was the earliest outage?", RecencyAsk(OLDEST, "outage")),
        ("Which is the latest of them?", RecencyAsk(NEWEST, None)),
        ("最近的事故原因是什么?", RecencyAsk(NEWEST, "事故")),
        ("How long did incident E-2102 last?", None),  # a verb, not a cue
        ("What is the name of the last county?", None),  # an ordinal: a position in a list
        ("What was the first step?", None),
    ],
)
def test_recency_ask(question: str, expected: RecencyAsk | None) -> None:
    assert recency_ask(question) == expected


def test_the_reader_reads_the_question_without_its_cue_only_when_the_sources_were_chosen_by_date() -> None:
    """A source states the root cause, never that it is "the most recent"; elsewhere "oldest" stays a content
    word ("the oldest university" must be supported by a sentence that says so)."""
    assert without_cue("What was the root cause of the most recent incident?") == (
        "What was the root cause of the incident?"
    )
    assert "oldest" in asked_text("What is the oldest university in the city?")


def test_the_date_field_named_after_the_thing_asked_wins_over_a_more_common_one() -> None:
    hits = [
        Hit("r1", 1.0, 1, metadata={"incident_date": "2025-01-01", "effective_date": "2025-02-01"}),
        Hit("p1", 0.9, 2, metadata={"effective_date": "2025-03-01"}),
    ]
    assert date_field(hits, "incident") == "incident_date"
    assert date_field(hits, "policy") == "effective_date"  # none named after it: the most common
    assert date_field([Hit("x", 1.0, 1, metadata={"acl": ["all"]})], "incident") is None


def test_newest_and_oldest_document_among_the_hits() -> None:
    analyzer = get_analyzer("english")
    hits = [
        Hit(f"r{i}", 1.0 - i / 10, i, title="Incident report", text="text", metadata={"incident_date": day})
        for i, day in enumerate(["2025-05-01", "2025-09-01", "2025-01-01"], 1)
    ]
    newest = newest_first(hits, RecencyAsk(NEWEST, "incident"), analyzer)
    oldest = newest_first(hits, RecencyAsk(OLDEST, "incident"), analyzer)
    assert (
        newest
        and [h.doc_id for h in newest[0]] == ["r2"]
        and newest[1] == "date order: newest incident_date (2025-09-01)"
    )
    assert oldest and [h.doc_id for h in oldest[0]] == ["r3"]
    assert newest_first(hits, RecencyAsk(NEWEST, "invoice"), analyzer) is None  # no hit names the thing asked
    undated = [Hit("u", 1.0, 1, title="Incident", text="text")]
    assert newest_first(undated, RecencyAsk(NEWEST, "incident"), analyzer) is None


def test_the_most_recent_report_is_read_whatever_its_rank(reports: Index) -> None:
    """Planted fault: order by relevance (``dates = "off"``) and the answer is another report's cause."""
    pipeline = RAGPipeline(reports, build_reader("extractive"), retriever="bm25", k=2)
    answer, context = pipeline.answer("What was the root cause of the most recent incident?", acl_filter(["all"]))
    assert {s.doc_id for s in context.sources} == {"incident-b"}
    assert "expired certificate on web-7" in answer.text and answer.citations
    assert answer.details["chosen_by"] == "date order: newest incident_date (2025-11-20)"
    oldest, _ = pipeline.answer("What was the root cause of the earliest incident?", acl_filter(["all"]))
    assert "failed disk on db-1" in oldest.text
    plain = RAGPipeline(reports, build_reader("extractive"), retriever="bm25", k=2, dates="off")
    assert {s.doc_id for s in plain.context("What was the root cause of the most recent incident?").sources} != {
        "incident-b"
    }


def test_a_newer_report_the_user_cannot_read_is_never_chosen(reports: Index) -> None:
    """The filter runs inside retrieval: the restricted, newest report is not a candidate for a user without it."""
    pipeline = RAGPipeline(reports, build_reader("extractive"), retriever="bm25", k=2)
    question = "What was the root cause of the latest incident?"
    answer, context = pipeline.answer(question, acl_filter(["all"]))
    assert "incident-d" not in {s.doc_id for s in context.sources} and "vault-2" not in answer.text
    allowed, _ = pipeline.answer(question, acl_filter(["all", "security"]))
    assert "leaked token on vault-2" in allowed.text


def test_dates_setting_is_checked() -> None:
    assert load_config("default").retrieve.dates == "order"
    with pytest.raises(ConfigError, match="dates must be one of order, off"):
        PipelineConfig.from_dict({"retrieve": {"dates": "sometimes"}})
