"""Which document versions retrieval may return: ``VersionPolicy``, a filter tree over version links.

A document states its place in a version chain with metadata: ``effective_date`` (ISO date),
``superseded_by`` (the id of its successor) and/or ``supersedes`` (the id of its predecessor). A
``VersionPolicy`` turns that into a filter tree applied inside retrieval, like the ACL restriction,
so the ``k`` hits a reader sees are all admissible:

    current          a document whose successor is in the index is not retrieved (the default)
    as-of=2025-01-31 the version in effect on that day: nothing effective later, nothing whose
                     successor was already in effect then (undated documents stay)
    all              every version (no version handling: the unfixed arm of a measurement)

Every search runs this; answering from versions (change questions, conflicting sources) is
``ragline.answer.versions``, which ``ragline search`` does not load (nor the context it works on).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ragline.errors import ConfigError
from ragline.index.filters import Compare, Node, Not, Or
from ragline.types import document_id_of

POLICIES = ("current", "as-of=DATE", "all")


def versions_policy(text: str) -> str:
    """``text`` checked as a policy and written canonically (``--versions`` and config values)."""
    return str(VersionPolicy.parse(text))


@dataclass(frozen=True)
class VersionPolicy:
    """``current``, ``as-of`` a date, or ``all``; ``restriction(index)`` is its filter tree."""

    mode: str = "current"  # current | as-of | all
    as_of: str | None = None  # ISO date, for as-of

    @classmethod
    def parse(cls, spec: str | VersionPolicy | None) -> VersionPolicy:
        if isinstance(spec, VersionPolicy):
            return spec
        text = (spec or "current").strip().lower()
        if text in ("current", "all"):
            return cls(text)
        name, sep, value = text.partition("=")
        if name.strip() in ("as-of", "as_of") and sep:
            day = value.strip()
            try:
                date.fromisoformat(day)
            except ValueError:
                raise ConfigError(f"versions as-of={day!r}: not an ISO date; write e.g. as-of=2025-06-30") from None
            return cls("as-of", day)
        raise ConfigError(f"versions {spec!r}: expected one of {', '.join(POLICIES)}")

    def __str__(self) -> str:
        return f"as-of={self.as_of}" if self.mode == "as-of" else self.mode

    @property
    def enabled(self) -> bool:
        """Whether this policy handles versions at all (``all`` does not)."""
        return self.mode != "all"

    def restriction(self, index: Any) -> Node | None:
        """The filter tree that keeps only admissible versions in ``index`` (the embedded index or any
        collection; None: no restriction)."""
        if self.mode == "all":
            return None
        graph = version_graph(index)
        if self.mode == "current":
            hidden = graph.superseded(lambda successor: True)
            dated_later = None
        else:
            day = self.as_of or ""
            hidden = graph.superseded(
                lambda successor: (graph.effective.get(successor) or "") <= day and successor in graph.effective
            )
            dated_later = Compare("effective_date", ">", (day,))
        clauses: list[Node] = []
        if hidden:
            values = tuple(sorted(hidden))
            # chunks carry their document's id as doc_id; a whole document indexed alone may not, but then
            # its own superseded_by names a live successor, which the second clause catches
            clauses.append(Compare("doc_id", "in", values))
            successors = tuple(sorted({s for d in hidden for s in graph.successors.get(d, ())}))
            if successors:
                clauses.append(Compare("superseded_by", "in", successors))
        if dated_later is not None:
            clauses.append(dated_later)
        if not clauses:
            return None
        return Not(clauses[0] if len(clauses) == 1 else Or(tuple(clauses)))


@dataclass
class VersionGraph:
    """Version links among the live documents of an index (document ids, not chunk ids)."""

    live: set[str] = field(default_factory=set)
    effective: dict[str, str] = field(default_factory=dict)
    successors: dict[str, set[str]] = field(default_factory=dict)  # document -> the documents that supersede it

    def superseded(self, counts: Any) -> set[str]:
        """Documents with a live successor for which ``counts(successor)`` holds."""
        return {d for d, nexts in self.successors.items() if any(s in self.live and counts(s) for s in nexts)}


# per store object (weakly: a closed index's entry goes with it), the graph of its current generation
_GRAPHS: weakref.WeakKeyDictionary[Any, tuple[int, VersionGraph]] = weakref.WeakKeyDictionary()


def version_graph(store: Any) -> VersionGraph:
    """The version links of the live documents of ``store`` (the embedded index or any collection), read
    from its metadata iterator once per generation."""
    from ragline.store.base import as_collection

    collection = as_collection(store)
    generation = collection.generation
    cached = _GRAPHS.get(store)
    if cached is not None and cached[0] == generation:
        return cached[1]
    graph = VersionGraph()
    for doc_id, meta in collection.metadata():
        doc = str(meta.get("doc_id") or document_id_of(doc_id))
        graph.live.add(doc)
        if meta.get("effective_date"):
            graph.effective[doc] = str(meta["effective_date"])
        if meta.get("superseded_by"):
            graph.successors.setdefault(doc, set()).add(str(meta["superseded_by"]))
        if meta.get("supersedes"):
            graph.successors.setdefault(str(meta["supersedes"]), set()).add(doc)
    _GRAPHS[store] = (generation, graph)
    return graph
