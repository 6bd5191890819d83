"""Question in, answer with citations out: retrieve -> drop superseded -> assemble context -> read.

Two readers behind one interface: the deterministic ``extractive`` reader (no LLM: isolates what
retrieval changes, as the lecture does) and ``llm`` (any ``ragline.models.llm`` backend, prompted to
answer only from numbered sources and cite them). Built from specs::

    extractive                       extractive:threshold=0.5
    llm                              llm:model=local:smollm2-135m,max_tokens=96

Retrieval runs as the asking user: the filter (an ACL clause, say) applies inside retrieval, so a
forbidden document never reaches the context. When a document and the version that supersedes it
are both retrieved, the superseded one is dropped: the sources then cannot conflict on a value the
newer version changed (the prompt also tells the model to prefer the newest version). A query with
no searchable terms retrieves nothing (see ``empty_query_reason``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ragline.answer.context import Context, build_context, document_id
from ragline.answer.extractive import ExtractiveReader
from ragline.answer.prompt import answer_from_response, build_messages
from ragline.errors import ConfigError
from ragline.index.filters import FilterLike
from ragline.index.store import Index
from ragline.retrieve.registry import build_retriever
from ragline.specs import parse_spec
from ragline.text import Analyzer
from ragline.types import Answer, Hit


class Reader(ABC):
    name: str = "reader"

    @abstractmethod
    def read(self, question: str, context: Context) -> Answer:
        """The answer to ``question`` from ``context`` alone."""

    def stream(self, question: str, context: Context) -> Iterator[str | Answer]:
        """Pieces of the answer as they come, then the final ``Answer`` (default: all at once)."""
        answer = self.read(question, context)
        yield answer.text
        yield answer

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


class ExtractiveAnswerReader(Reader):
    name = "extractive"

    def __init__(self, **params: Any) -> None:
        self.reader = ExtractiveReader(**params)

    def read(self, question: str, context: Context) -> Answer:
        return self.reader.read(question, context)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, **self.reader.config()}


class LLMReader(Reader):
    name = "llm"

    def __init__(self, model: str | None = None, max_tokens: int = 128, llm: Any = None) -> None:
        if llm is None:
            from ragline.models.llm import CachedLLM, load_llm

            llm = CachedLLM(load_llm(model))
        self.llm, self.max_tokens = llm, max_tokens

    def read(self, question: str, context: Context) -> Answer:
        reply = self.llm.chat(build_messages(question, context), max_tokens=self.max_tokens)
        return answer_from_response(reply, context, reader=self.llm.id, question=question)

    def stream(self, question: str, context: Context) -> Iterator[str | Answer]:
        pieces = []
        for piece in self.llm.stream(build_messages(question, context), max_tokens=self.max_tokens):
            pieces.append(piece)
            yield piece
        yield answer_from_response("".join(pieces), context, reader=self.llm.id, question=question)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.llm.id, "max_tokens": self.max_tokens}


def build_reader(spec: str, llm: Any = None) -> Reader:
    """``extractive[:threshold=...]`` or ``llm[:model=SPEC,max_tokens=N]`` (``llm`` passes a built model)."""
    name, params = parse_spec(spec, "reader spec")
    if name == "extractive":
        return ExtractiveAnswerReader(**params)
    if name == "llm":
        return LLMReader(params.pop("model", None), llm=llm, **params)
    raise ConfigError(f"unknown reader {name!r}; choose extractive or llm")


def empty_query_reason(query: str, analyzer: Analyzer) -> str | None:
    """Why ``query`` retrieves nothing, or None when it has terms to search for.

    A blank query, or one of stopwords and punctuation only, has no terms: BM25 scores nothing and a
    dense retriever would return the nearest neighbours of an empty embedding, that is arbitrary
    documents. Saying "no results, and why" is the honest answer for every retriever.
    """
    if not query.strip():
        return "the query is empty"
    if not analyzer(query):
        return f"the query {query.strip()!r} has no searchable terms (only stopwords or punctuation)"
    return None


def drop_superseded(hits: list[Hit]) -> list[Hit]:
    """Hits without those whose document's ``superseded_by`` successor was retrieved too."""
    retrieved = {document_id(h) for h in hits}
    return [h for h in hits if h.metadata.get("superseded_by") not in retrieved]


@dataclass
class RAGPipeline:
    """Retrieval and reading with one configuration; ``answer`` runs it for one question."""

    index: Index
    reader: Reader
    retriever: str = "hybrid"
    k: int = 5
    budget: int = 1500
    order: str = "rank"
    retriever_obj: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.retriever_obj = build_retriever(self.retriever, self.index)

    def context(self, question: str, filter: FilterLike = None) -> Context:
        if empty_query_reason(question, self.index.settings.analyzer):
            return build_context([], self.budget, self.order)  # type: ignore[arg-type]
        hits = drop_superseded(self.retriever_obj.search(question, self.k, filter))
        return build_context(hits, self.budget, self.order)  # type: ignore[arg-type]

    def answer(self, question: str, filter: FilterLike = None) -> tuple[Answer, Context]:
        context = self.context(question, filter)
        return self.reader.read(question, context), context

    def config(self) -> dict[str, Any]:
        return {"retriever": self.retriever_obj.config(), "reader": self.reader.config(), "k": self.k,
                "budget": self.budget, "order": self.order}  # fmt: skip
