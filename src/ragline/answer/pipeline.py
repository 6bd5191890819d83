"""Question in, answer with citations out: transform -> retrieve (filter and version policy inside) -> fuse ->
rerank -> expand -> guard -> compress -> assemble context (order, budget) -> read.

Two readers behind one interface: the deterministic ``extractive`` reader (no LLM: isolates what
retrieval changes, as the lecture does) and ``llm`` (any ``ragline.models.llm`` backend, prompted to
answer only from numbered sources and cite them). Built from specs::

    extractive                       extractive:threshold=0.5
    llm                              llm:model=local:smollm2-135m,max_tokens=96

Retrieval runs as the asking user: the filter (an ACL clause, say) applies inside retrieval, so a
forbidden document never reaches the context. The version policy (``ragline.answer.version_policy``:
``current`` by default, ``as-of=DATE``, ``all``) is a filter inside retrieval too: under ``current`` a
document whose successor is indexed is never retrieved, so the sources cannot conflict on a value the
newer version changed. A question about change ("what changed ...") retrieves every version and is
answered from the values that differ, citing both versions. Sources that still disagree are listed in
``answer.details["conflicts"]``; when the best sources tie and contradict each other, the answer states both
sides, not the one that happened to rank first (``tied_conflict_answer``). ``RAGPipeline.stream`` is the one
answering path: ``answer``, ``ragline ask`` and the server all read through it. A query with no
searchable terms retrieves nothing (see ``empty_query_reason``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragline.answer.context import Context, build_context
from ragline.answer.extractive import ExtractiveReader
from ragline.answer.prompt import (
    OUTPUTS,
    SHORT_MODES,
    answer_from_response,
    build_messages,
    closed_after,
    read_constrained,
    stream_constrained,
)
from ragline.answer.questions import FULL, SHORT, answer_kind
from ragline.answer.recency import DATE_ORDER_DEPTH, newest_first, recency_ask, without_cue
from ragline.answer.version_policy import VersionPolicy
from ragline.answer.versions import annotate_conflicts, given_answer, is_change_question
from ragline.components import build, register
from ragline.config import PipelineConfig
from ragline.errors import ConfigError
from ragline.index.bm25 import BM25Params
from ragline.index.filters import FilterLike, restrict
from ragline.index.store import Index
from ragline.retrieve.base import empty_query_reason, hits_for
from ragline.retrieve.fusion import fuse, rank
from ragline.retrieve.registry import build_retriever
from ragline.retrieve.transforms import weighted_queries
from ragline.roles import Compressor, Expander, Guard, Query, QueryTransform, ReaderRole, Reranker, RetrieverRole
from ragline.store.base import Collection
from ragline.types import Answer, Hit

LLMLike = Any  # a ragline.models.llm backend (local llama.cpp, an OpenAI-compatible server, a cached one)


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


@register("reader", "extractive")
class ExtractiveAnswerReader(Reader):
    """Extracts the best-scoring span of the sources (no LLM); abstains below a calibrated threshold."""

    name = "extractive"

    def __init__(self, **params: Any) -> None:
        self.reader = ExtractiveReader(**params)

    def read(self, question: str, context: Context) -> Answer:
        return self.reader.read(question, context)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, **self.reader.config()}


@register("reader", "span")
class SpanAnswerReader(Reader):
    """A trained span reader (``ragline train reader``): the best span of the top sources, or no answer."""

    name = "span"

    def __init__(self, **params: Any) -> None:
        from ragline.answer.span_reader import SpanReader

        self.reader = SpanReader(**params)

    def read(self, question: str, context: Context) -> Answer:
        return self.reader.read(question, context)

    def config(self) -> dict[str, Any]:
        return self.reader.config()


@register("reader", "llm")
class LLMReader(Reader):
    """An LLM (local llama.cpp or an OpenAI-compatible server) answering from numbered sources, citing them.

    ``output=json`` (the default) constrains the reply to an answer and the numbers of its sources
    (``prompt.read_constrained``), falling back to free text with ``[n]`` markers when the backend takes no
    schema; ``output=text`` is that free-text prompt. ``short=auto`` asks factoid and yes/no questions for a
    few words (then the supporting sentence, in ``details["sentence"]``), ``on`` always, ``off`` never.
    """

    name = "llm"

    def __init__(
        self,
        model: str | None = None,
        max_tokens: int = 128,
        llm: LLMLike | None = None,
        output: str = "json",
        short: str = "auto",
    ) -> None:
        if output not in OUTPUTS or short not in SHORT_MODES:
            raise ConfigError(
                f"reader llm: output must be one of {', '.join(OUTPUTS)} and short one of "
                f"{', '.join(SHORT_MODES)}; got output={output!r}, short={short!r}"
            )
        if llm is None:
            from ragline.models.llm import CachedLLM, load_llm

            llm = CachedLLM(load_llm(model))
        self.llm, self.max_tokens, self.output, self.short = llm, max_tokens, output, short
        self._constrained = output == "json"  # off for good once the backend says it takes no schema

    def _kind(self, question: str) -> str:
        return (answer_kind(question) if self.short == "auto" else FULL) if self.short != "on" else SHORT

    def _read_constrained(self, question: str, context: Context) -> Answer | None:
        """The schema-constrained answer, or None when the backend takes no schema (then plain text)."""
        from ragline.models.llm import StructuredOutputUnsupported

        if not self._constrained:
            return None
        try:
            kind = self._kind(question)
            return read_constrained(
                self.llm, question, context, self.max_tokens, kind, self.llm.id, **self._scope(context)
            )
        except StructuredOutputUnsupported:
            self._constrained = False
            return None

    def _scope(self, context: Context) -> dict[str, Any]:
        """A cached reply is keyed by the ACLs of the sources it was written from (``acl_scope``)."""
        from ragline.models.llm import CachedLLM
        from ragline.models.llm.cache import acl_scope

        if not isinstance(self.llm, CachedLLM):
            return {}
        return {"scope": acl_scope(s.hit.metadata.get("acl") for s in context.sources)}

    def read(self, question: str, context: Context) -> Answer:
        constrained = self._read_constrained(question, context)
        if constrained is not None:
            return constrained
        reply = self.llm.chat(build_messages(question, context), max_tokens=self.max_tokens, **self._scope(context))
        return answer_from_response(reply, context, reader=self.llm.id, question=question)

    def stream(self, question: str, context: Context) -> Iterator[str | Answer]:
        if self._constrained:
            from ragline.models.llm import StructuredOutputUnsupported

            kind = self._kind(question)
            try:  # a server that refuses the schema does so before the first piece
                yield from stream_constrained(
                    self.llm, question, context, self.max_tokens, kind, self.llm.id, **self._scope(context)
                )
                return
            except StructuredOutputUnsupported:
                self._constrained = False
        pieces = []
        messages = build_messages(question, context)
        # closed with this generator: a caller that stops reading stops the model generating
        with closed_after(self.llm.stream(messages, max_tokens=self.max_tokens, **self._scope(context))) as stream:
            for piece in stream:
                pieces.append(piece)
                yield piece
        yield answer_from_response("".join(pieces), context, reader=self.llm.id, question=question)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.llm.id,
            "max_tokens": self.max_tokens,
            "output": self.output,
            "short": self.short,
        }


def build_reader(spec: str | Mapping[str, Any], llm: LLMLike | None = None) -> Reader:
    """A registered reader: ``extractive[:threshold=...]``, ``span[:model=trained:NAME,top_k=5]`` or
    ``llm[:model=SPEC,max_tokens=N]``.

    ``llm`` passes an already built model to readers that take one.
    """
    return build("reader", spec, llm=llm)


@dataclass
class Prepared:
    """Everything before the reader for one question (all of it reads the index): the context the reader
    reads, and ``answer`` where no reader is needed (a change question answered from the versions that
    differ, or tied sources that contradict each other; ``context`` is then the sources it cites)."""

    context: Context
    answer: Answer | None = None


@dataclass
class RAGPipeline:
    """Retrieval and reading with one configuration; ``answer`` runs it for one question.

    Stages, in order: each query transform's queries (else the question) are retrieved with the
    filter and the version policy inside the retriever and fused; the reranker (if any) reorders
    ``rerank_depth`` candidates down to ``k``; the expander (if any) widens chunks to passages; the
    compressor (if any) keeps each hit's best sentences within ``compress_budget`` tokens; then the
    context is ordered and cut to ``budget`` tokens, and the reader answers. Components are objects
    (``retriever`` may also be a spec); ``from_config`` builds them all from a ``PipelineConfig``.
    ``index`` is the embedded ``Index`` or any store's ``Collection`` (``ragline.store``).
    """

    index: Index | Collection
    reader: ReaderRole | None
    retriever: str | Mapping[str, Any] | RetrieverRole = "hybrid"  # a spec or a built retriever
    k: int = 5
    budget: int = 1500
    order: str = "rank"
    transforms: Sequence[QueryTransform] = ()
    transform_fuser: str = "rrf"
    reranker: Reranker | None = None
    rerank_depth: int = 50
    expander: Expander | None = None
    guard: Guard | None = None  # screens hits for injected instructions before the reader
    compressor: Compressor | None = None  # keeps each hit's best sentences before the context
    compress_budget: int = 200
    versions: VersionPolicy | str = "current"  # which versions retrieval may return (ragline.answer.version_policy)
    dates: str = "order"  # "the most recent X": read the newest dated X (ragline.answer.recency) | off
    retriever_obj: RetrieverRole = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.versions = VersionPolicy.parse(self.versions)
        spec = self.retriever
        self.retriever_obj = build_retriever(spec, self.index) if isinstance(spec, (str, Mapping)) else spec

    @classmethod
    def from_config(
        cls, config: PipelineConfig, index: Index | Collection, llm: LLMLike | None = None, reader: bool = True
    ) -> RAGPipeline:
        """Every component of ``config`` built over ``index`` (``llm``: a model the reader may share).

        ``reader=False`` (or ``reader = "none"`` in the config) builds retrieval only: ``rank`` and
        ``retrieve`` work, ``answer`` does not.
        """
        bm25 = BM25Params(**{**index.settings.bm25.to_dict(), **config.index.bm25})
        deps = {"index": index, "bm25": bm25, "llm": llm}
        stage = config
        return cls(
            index,
            build("reader", stage.read.reader, **deps) if reader and stage.read.enabled else None,
            retriever=build_retriever(stage.retrieve.retriever, index, bm25),
            k=stage.retrieve.k,
            budget=stage.order.budget,
            order=stage.order.order,
            transforms=[build("query_transform", t, **deps) for t in stage.transform.transforms],
            transform_fuser=stage.transform.fuser,
            reranker=build("reranker", stage.rerank.reranker, **deps) if stage.rerank.reranker else None,
            rerank_depth=stage.rerank.depth,
            expander=build("expander", stage.expand.expander, **deps) if stage.expand.expander else None,
            guard=build("guard", stage.guard.guard, **deps) if stage.guard.guard else None,
            compressor=build("compressor", stage.compress.compressor, **deps) if stage.compress.compressor else None,
            compress_budget=stage.compress.budget,
            versions=stage.retrieve.versions,
            dates=stage.retrieve.dates,
        )

    @property
    def name(self) -> str:
        return self.retriever_obj.name if not (self.transforms or self.reranker) else "pipeline"

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> list[tuple[str, float]]:
        """The first and second stage as a retriever: (id, score) of the best ``k`` (no expansion, no reading)."""
        hits = self._second_stage(query, self._first_stage(query, self._depth(k), filter), k)
        return [(h.doc_id, h.score) for h in hits]

    def retrieve(self, question: str, filter: FilterLike = None) -> list[Hit]:
        """The hits the reader will see, best first (before the context budget); none for an empty query."""
        return self._retrieve(question, filter)[0]

    def _retrieve(self, question: str, filter: FilterLike) -> tuple[list[Hit], str | None]:
        """``retrieve``'s hits and how they were chosen besides relevance (None: by relevance alone).

        The version policy filters inside retrieval, so the reranker's ``k`` are all admissible versions;
        a question about change retrieves every version. A question about the newest or oldest of something
        (``dates = "order"``) is read from that dated document among ``DATE_ORDER_DEPTH`` candidates.
        """
        ask = recency_ask(question) if self.dates == "order" else None
        depth = max(self._depth(self.k), DATE_ORDER_DEPTH) if ask else self._depth(self.k)
        hits = self._first_stage(question, depth, filter, versions=self._policy_for(question))
        dated = newest_first(hits, ask, self.index.settings.analyzer) if ask else None
        hits = self._second_stage(question, dated[0] if dated else hits[: self._depth(self.k)], self.k)
        if self.expander is not None:
            hits = self.expander.expand(question, hits)
        return (self.guard.screen(question, hits) if self.guard is not None else hits), dated[1] if dated else None

    def _depth(self, k: int) -> int:
        return max(self.rerank_depth, k) if self.reranker is not None else k

    def _policy_for(self, question: str) -> VersionPolicy:
        policy = VersionPolicy.parse(self.versions)
        return VersionPolicy("all") if policy.enabled and is_change_question(question) else policy

    def _first_stage(
        self, question: str, depth: int, filter: FilterLike, versions: VersionPolicy | None = None
    ) -> list[Hit]:
        """Transform -> retrieve each query (the filter and version policy inside) -> fuse: the best ``depth``."""
        if empty_query_reason(question, self.index.settings.analyzer):
            return []
        policy = VersionPolicy.parse(self.versions) if versions is None else versions
        filter = restrict(filter, policy.restriction(self.index))
        # A transform that reads documents (RM3) reads them under this filter; a HyDE query carries a vector.
        queries = [(Query.of(q), w) for t in self.transforms for q, w in weighted_queries(t, question, filter)]
        queries = queries or [(Query(question), 1.0)]
        if len(queries) == 1 and queries[0][0].vector is None:
            return self.retriever_obj.search(queries[0][0].text, depth, filter)
        runs = [dict(self.retriever_obj.rank_query(q, depth, filter)) for q, _ in queries]
        return hits_for(self.index, rank(fuse(self.transform_fuser, runs, weights=[w for _, w in queries]), depth))

    def _second_stage(self, question: str, hits: list[Hit], k: int) -> list[Hit]:
        return self.reranker.rerank(question, hits, k) if self.reranker is not None else hits[:k]

    def context(self, question: str, filter: FilterLike = None) -> Context:
        """The numbered sources the reader sees: the retrieved hits, compressed (if configured), within budget."""
        hits, chosen_by = self._retrieve(question, filter)
        context = build_context(hits, self.budget, self.order)  # type: ignore[arg-type]
        context.chosen_by = chosen_by
        if self.compressor is None or not context.sources:
            return context
        # Compress the sources the uncompressed context chose (duplicates and the budget decided on whole
        # chunks): two chunks shortened to the same sentence must not become duplicates of each other, so
        # the reader sees the same sources, numbered alike, with or without compression.
        chosen = sorted(context.hits, key=lambda h: h.rank)
        shortened = self.compressor.compress(question, chosen, self.compress_budget)
        compressed = build_context(shortened, self.budget, self.order, near_duplicate=None)  # type: ignore[arg-type]
        compressed.dropped, compressed.chosen_by = context.dropped + compressed.dropped, chosen_by
        return compressed

    def prepare(self, question: str, filter: FilterLike = None) -> Prepared:
        """The context of ``question`` and, where no reader is needed, its answer (see ``Prepared``)."""
        context = self.context(question, filter)
        reader = self.reader.name if self.reader is not None else "none"
        answer, context = given_answer(question, context, self.versions, reader, self.index, filter)
        return Prepared(context, answer)

    def stream(
        self, question: str, filter: FilterLike = None, prepared: Prepared | None = None
    ) -> Iterator[str | tuple[Answer, Context]]:
        """The one answering path (``answer``, ``ragline ask``, the server): the answer's text in pieces as the
        reader makes them, then ``(answer, context)``, the sources' disagreements annotated.

        ``prepared``: this question's ``prepare``, made before (the server retrieves under its index lock,
        then reads). A conflict note the annotation appends comes as a last piece, so the pieces make the
        answer's text. Closing the stream closes the reader's (an LLM stops generating).
        """
        if self.reader is None:
            raise ConfigError('this pipeline has no reader (reader = "none"): it ranks, it does not answer')
        reader = self.reader
        pieces: Iterator[str | Answer]
        if getattr(reader, "retrieves", False):  # an agent: it retrieves hop by hop, the filter inside
            retrieving: Any = reader  # the reader role reads a context; an agent's answer() retrieves it too
            restriction = restrict(filter, self._policy_for(question).restriction(self.index))
            agent, held = retrieving.answer(question, restriction)
            given, context = given_answer(question, held, self.versions, reader.name, self.index, filter)
            pieces = iter([agent.text, agent])
        else:
            prepared = self.prepare(question, filter) if prepared is None else prepared
            given, context = prepared.answer, prepared.context
            # Sources chosen by date: the reader asks them the question without its cue ("the most recent")
            asked = without_cue(question) if context.chosen_by else question
            pieces = reader.stream(asked, context) if given is None else iter(())
        if given is not None:  # answered without the reader's word: the sources it cites are the answer
            yield given.text
            yield given, context
            return
        answer = None
        with closed_after(pieces):
            for piece in pieces:
                if isinstance(piece, str):
                    if piece:
                        yield piece
                else:
                    answer = piece
        assert answer is not None
        if context.chosen_by:
            answer.details["chosen_by"] = context.chosen_by
        said = answer.text
        answer = annotate_conflicts(answer, context, question)
        if answer.text != said and answer.text.startswith(said):
            yield answer.text[len(said) :]
        yield answer, context

    def answer(self, question: str, filter: FilterLike = None) -> tuple[Answer, Context]:
        """``stream``'s answer and context, whole."""
        *_, last = self.stream(question, filter)
        assert isinstance(last, tuple)
        return last

    def config(self) -> dict[str, Any]:
        reader = self.reader.config() if self.reader is not None else None
        out: dict[str, Any] = {
            "retriever": self.retriever_obj.config(),
            "reader": reader,
            "k": self.k,
            "budget": self.budget,
            "order": self.order,
        }
        if self.transforms:
            out["transforms"] = [t.config() for t in self.transforms]
            out["transform_fuser"] = self.transform_fuser
        if self.reranker is not None:
            out["reranker"] = {**self.reranker.config(), "depth": self.rerank_depth}
        if self.expander is not None:
            out["expander"] = self.expander.config()
        if self.guard is not None:
            out["guard"] = self.guard.config()
        if self.compressor is not None:
            out["compressor"] = {**self.compressor.config(), "budget": self.compress_budget}
        out["versions"] = str(self.versions)
        return out
