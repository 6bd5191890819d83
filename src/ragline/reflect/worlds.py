"""The worlds the critics are trained and measured on: a built-in corpus's BM25 index and its questions,
with the closed-book questions (``ragline.corpora.closed_book``) asked of it too; and a QA dataset folder
(HotpotQA's, say) pooled into one index, where the critics, trained on the built-in worlds, are only measured."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragline.corpora.base import Question
from ragline.index import Index, IndexSettings

BM25_ONLY = IndexSettings(embedder=None, vector_index="flat")


@dataclass
class World:
    name: str
    index: Index
    questions: list[Question]
    reindex: Callable[[Any], Index] | None = None  # the same documents under another IngestConfig


def orrin_world(seed: int) -> World:
    """The Orrin world of ``seed`` (chunked as the default pipeline chunks) with its closed-book questions."""
    from ragline.corpora.builtin import orrin_index
    from ragline.corpora.closed_book import orrin_closed_book

    index, corpus = orrin_index(BM25_ONLY, seed=seed)
    reindex = lambda ingest: orrin_index(BM25_ONLY, ingest, seed)[0]  # noqa: E731
    return World(corpus.name, index, [*corpus.questions, *orrin_closed_book(seed)], reindex)


def countries_world(seed: int) -> World:
    """The English countries world of ``seed`` with its closed-book questions."""
    from ragline.corpora.builtin import DEFAULT_INGEST
    from ragline.corpora.closed_book import countries_closed_book
    from ragline.corpora.countries import build_countries
    from ragline.ingest.pipeline import build_index

    corpus = build_countries(seed)
    index = build_index(corpus.documents, DEFAULT_INGEST, BM25_ONLY)
    reindex = lambda ingest: build_index(corpus.documents, ingest, BM25_ONLY)  # noqa: E731
    return World(corpus.name, index, [*corpus.questions, *countries_closed_book(seed)], reindex)


def dataset_world(path: Any) -> World:
    """A BEIR or questions folder with a ``questions.jsonl`` (``ragline.eval.datasets``), every passage in one
    BM25 index chunked as the default pipeline chunks: its questions search the whole pool, not their own
    passages. It has no closed-book questions and no ACL (its questions carry no ``user_groups``)."""
    from ragline.corpora.builtin import DEFAULT_INGEST
    from ragline.errors import ConfigError
    from ragline.eval.datasets import load_dataset
    from ragline.eval.qa import QAQuestion
    from ragline.ingest.pipeline import build_index

    dataset = load_dataset(path)
    if not dataset.questions:
        raise ConfigError(f"{dataset.path} has no questions.jsonl: a reflection world needs questions with answers")
    questions = [QAQuestion.from_record(record) for record in dataset.questions]
    index = build_index(dataset.corpus, DEFAULT_INGEST, BM25_ONLY)
    reindex = lambda ingest: build_index(dataset.corpus, ingest, BM25_ONLY)  # noqa: E731
    return World(dataset.name, index, questions, reindex)  # type: ignore[arg-type]


def held_out(world: str, question: Question, share: int = 3) -> bool:
    """Whether ``question`` is among the held-out ``share`` tenths of ``world`` (a stable hash of its id)."""
    digest = hashlib.sha256(f"{world}:{question.id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 10 < share


def user_filter(question: Question) -> Any:
    """The asking user's filter: every retrieval of a question runs as its user (None: a dataset question
    names no user, and its dataset has no ACL)."""
    from ragline.index.filters import acl_filter

    return None if question.user_groups is None else acl_filter(question.user_groups)
