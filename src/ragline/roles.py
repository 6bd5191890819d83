"""The roles of a pipeline as small typed Protocols (the shape Haystack 2.x gives its components).

Each role works on ids, scores and ``Hit``s, not on a concrete index, so a component written for one
store serves another. A class need not inherit anything to play a role: having the method is enough
(``isinstance(x, Reranker)`` checks it at run time). Components register by role and name in
``ragline.components``; the pipeline (``ragline.answer.pipeline.RAGPipeline``) calls them in this order:

    transform -> retrieve (each query) -> fuse -> rerank -> expand -> guard -> compress -> order -> read

Queries are typed (``Query``): a text and, where a transform made one, a vector in the index embedder's
space. A retriever declares the kinds it takes (``takes``); ``rank_query`` gives it the one it takes.
``build`` (``ragline.components``) checks what it built against its role's Protocol (``PROTOCOLS``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # types only: importing them at run time would tie this module to the index
    import numpy as np

    from ragline.answer.context import Context
    from ragline.index.filters import FilterLike
    from ragline.types import Answer, Document, Hit

Ranked = list[tuple[str, float]]  # (doc id, score), best first
TEXT, VECTOR = "text", "vector"  # the kinds of query a retriever can take


@dataclass(frozen=True, eq=False)
class Query:
    """A query as retrievers take it: ``text`` for the legs that match or embed words, and ``vector`` (when a
    transform made one, HyDE's) for the legs that search the index embedder's vectors."""

    text: str
    vector: np.ndarray | None = None

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset((TEXT, VECTOR)) if self.vector is not None else frozenset((TEXT,))

    @staticmethod
    def of(query: str | Query) -> Query:
        """``query`` as a ``Query`` (a plain string is a text query)."""
        return query if isinstance(query, Query) else Query(query)


@runtime_checkable
class RetrieverRole(Protocol):
    """Ranks document ids for a query; ``filter`` applies inside, before the top ``k``.

    ``takes`` holds the query kinds it ranks by (``TEXT``, ``VECTOR``); ``rank_query`` ranks a typed query
    by its vector where it takes one and the query has one, else by its text.
    """

    name: str
    takes: frozenset[str]

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked: ...

    def rank_query(self, query: Query, k: int = 10, filter: FilterLike = None) -> Ranked: ...

    def search(self, query: str, k: int = 10, filter: FilterLike = None) -> list[Hit]: ...

    def config(self) -> dict[str, Any]: ...


@runtime_checkable
class FuserRole(Protocol):
    """Combines runs (doc id -> score, one per retriever or query) into one mapping."""

    def __call__(self, runs: Sequence[Mapping[str, float]], **params: Any) -> dict[str, float]: ...


@runtime_checkable
class QueryTransform(Protocol):
    """Turns a query into one or more weighted queries (expansion, multi-query, HyDE, decomposition); a query
    that carries a vector (HyDE's) is a ``Query``, the others plain text."""

    def transform(self, query: str) -> list[tuple[str | Query, float]]: ...

    def config(self) -> dict[str, Any]: ...


@runtime_checkable
class Reranker(Protocol):
    """Reorders a first stage's hits for the query and keeps the best ``k``."""

    def rerank(self, query: str, hits: list[Hit], k: int) -> list[Hit]: ...

    def config(self) -> dict[str, Any]: ...


@runtime_checkable
class Expander(Protocol):
    """Maps small retrieved chunks to the larger text around them (small-to-big), within a budget."""

    def expand(self, query: str, hits: list[Hit]) -> list[Hit]: ...

    def config(self) -> dict[str, Any]: ...


@runtime_checkable
class ReaderRole(Protocol):
    """Answers a question from a context alone, citing its numbered sources."""

    name: str  # the reader's name in results and provenance

    def read(self, question: str, context: Context) -> Answer: ...

    def stream(self, question: str, context: Context) -> Iterator[str | Answer]: ...

    def config(self) -> dict[str, Any]: ...


@runtime_checkable
class ChunkerRole(Protocol):
    """Cuts a document into chunks (each a ``Document`` with exact character spans)."""

    def chunk(self, document: Document) -> list[Document]: ...


@runtime_checkable
class Contextualizer(Protocol):
    """Adds context to a document's chunks before indexing (and may return vectors for them)."""

    def contextualize(self, document: Document, chunks: list[Document]) -> tuple[list[Document], Any]: ...


@runtime_checkable
class Grader(Protocol):
    """Scores how well each hit answers a (sub-)question: the agent's "is this good enough?"."""

    def grade(self, question: str, hits: list[Hit]) -> list[float]: ...


@runtime_checkable
class Guard(Protocol):
    """Screens retrieved hits before the reader: annotates or drops instruction-like (injected) text."""

    def screen(self, question: str, hits: list[Hit]) -> list[Hit]: ...

    def config(self) -> dict[str, Any]: ...


@runtime_checkable
class Compressor(Protocol):
    """Shortens each hit to its sentences that best answer the question, within ``budget`` tokens in all.

    Every hit keeps at least one sentence, so the sources (and what a citation ``[n]`` points at) stay
    the same; kept text is verbatim.
    """

    def compress(self, question: str, hits: list[Hit], budget: int) -> list[Hit]: ...

    def config(self) -> dict[str, Any]: ...


@runtime_checkable
class ProbeRole(Protocol):
    """A failure mode ``ragline doctor`` measures (``ragline.doctor.base.Probe``): ``run(doctor_run)`` gives its
    report row, ``rank`` its place in the report; ``embedded_only`` says why it cannot run on a store other than
    the embedded index ('' when it can)."""

    name: str
    rank: int
    fix: str
    embedded_only: str

    def run(self, doctor_run: Any) -> Any: ...


@runtime_checkable
class ExperimentRole(Protocol):
    """A lecture experiment ``ragline experiment NAME`` runs (``ragline.eval.experiments.Experiment``):
    ``run(args)`` gives its JSON payload, or, with ``own_output``, prints its result and gives the exit status."""

    name: str
    own_output: bool
    configs: bool

    def run(self, args: Any) -> Any: ...


# role (as ``ragline.components.ROLES`` names it) -> the Protocol what ``build`` makes for it must satisfy
PROTOCOLS: dict[str, type] = {
    "retriever": RetrieverRole,
    "fuser": FuserRole,
    "query_transform": QueryTransform,
    "reranker": Reranker,
    "expander": Expander,
    "reader": ReaderRole,
    "chunker": ChunkerRole,
    "contextualizer": Contextualizer,
    "grader": Grader,
    "guard": Guard,
    "compressor": Compressor,
    "probe": ProbeRole,
    "experiment": ExperimentRole,
}


def missing_members(component: Any, role: str) -> list[str]:
    """The members of ``role``'s Protocol that ``component`` lacks (none for a role without a Protocol)."""
    protocol = PROTOCOLS.get(role)
    if protocol is None:
        return []
    members = set(getattr(protocol, "__annotations__", {}))
    members |= {name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_")}
    if "__call__" in vars(protocol):
        members.add("__call__")
    return sorted(name for name in members if not hasattr(component, name))
