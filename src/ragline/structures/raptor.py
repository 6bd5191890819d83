"""RAPTOR (Sarthi et al., 2024): a tree of cluster summaries over a collection's chunks, and its retriever.

Building: embed the chunks; reduce (UMAP, ``reduce=umap``, or the embeddings as they are,
``reduce=none``); cluster with a Gaussian mixture whose number of components is chosen by BIC, with
soft membership (a node joins every cluster whose posterior is at least ``threshold``); a cluster
larger than ``max_children`` is clustered again inside; write a summary per cluster, embed it, and
recurse on the summaries until one node is left. The default summary is extractive and needs no LLM:
the cluster's most central sentences (closest to the mean of its members' vectors), each one
remembered with the chunk it was quoted from; ``summarizer=llm`` asks the configured LLM to rewrite
those sentences (cached, scoped by the sources' ACLs) and keeps each sentence of its reply that they
state, with the chunk that states it (``ragline.structures.written``, as for community reports).

Permissions: chunks are partitioned by their ACL before clustering (one tree per ACL, so a public
chunk is never summarized together with an HR-only one), and at query time a node is a candidate
only when the caller's filter admits *every* chunk it was derived from, checked inside the search,
before the top k: nobody reads a summary of text they may not read.

Retrieval (``raptor`` retriever): ``mode=collapsed`` ranks every node of every level by cosine to
the query in one list; ``mode=traversal`` descends from the roots, keeping the ``beam`` best children
at each level. A retriever returns chunk ids, so a summary node stands for the chunks it quotes
(or that state the LLM's sentences), nearest to the query first: the reader reads those chunks,
and citations, ACLs and evaluation stay the same as for every retriever.

Freshness: the tree is stored beside the index (``structures/raptor``). Brought up to date, an ACL
partition whose chunks are unchanged is kept as it is; in one whose chunks changed, the removed
chunks leave their clusters, the added ones join the nearest first-level cluster, and only the
clusters they touched and their ancestors are summarized again (the whole partition is rebuilt when
more than ``rebuild_fraction`` of it changed).
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import numpy as np

from ragline.components import register
from ragline.errors import ConfigError
from ragline.index.filters import FilterLike
from ragline.retrieve.base import Ranked, Retriever
from ragline.roles import TEXT, VECTOR
from ragline.structures.base import allowed_ids, live_sources, register_builder
from ragline.structures.raptor_build import build_tree
from ragline.structures.raptor_tree import MODES, NAME, RaptorParams, RaptorTree, load_tree, save_tree

__all__ = ["RaptorRetriever", "build_raptor"]

# what a summary node hands on: the chunks its summary quotes (or that state its LLM sentences), or every chunk
# below it, the quoted ones first
EXPANSIONS = ("quoted", "sources")


@register_builder(NAME)
def build_raptor(index: Any, params: dict[str, Any], llm: Any = None) -> dict[str, Any]:
    """Build or bring up to date the stored tree of an on-disk ``index``; return its manifest."""
    if index.path is None:
        raise ConfigError("a RAPTOR tree is stored beside an index on disk; this index is in memory")
    previous = load_tree(index.path)
    tree = build_tree(index, RaptorParams.of(params), previous, llm)
    return save_tree(index.path, tree)


# --- retrieval ---------------------------------------------------------------------------------------


@register("retriever", NAME)
class RaptorRetriever(Retriever):
    """RAPTOR tree of cluster summaries: mode=collapsed (all levels ranked at once) or traversal (beam per level).

    Cosine between the query and every node; a node is a candidate only if the filter admits all its
    sources. A summary node stands for the chunks it quotes (``expand=quoted``) or for every chunk below
    it (``expand=sources``), nearest to the query first. ``reduce``, ``summarizer``, ``max_children``,
    ``threshold``, ``sentences`` (and the other ``RaptorParams``) say how the tree is built.

    The tree stored beside the index is used when it is fresh and built with the same parameters;
    otherwise one is built in memory on the first query (as ``ragline eval`` does on its in-memory index).
    """

    name = NAME
    needs_embeddings = True
    takes = frozenset((TEXT, VECTOR))  # a query's embedding, or HyDE's vector, against every node's

    def __init__(
        self,
        index: Any,
        mode: str = "collapsed",
        beam: int = 3,
        expand: str = "quoted",
        reduce: str = "none",
        summarizer: str = "extractive",
        max_children: int = 8,
        threshold: float = 0.3,
        sentences: int = 5,
        llm: Any = None,
        **build: Any,
    ) -> None:
        super().__init__(index)
        if mode not in MODES:
            raise ConfigError(f"raptor: mode must be one of {', '.join(MODES)}, got {mode!r}")
        if expand not in EXPANSIONS:
            raise ConfigError(f"raptor: expand must be one of {', '.join(EXPANSIONS)}, got {expand!r}")
        if int(beam) < 1:
            raise ConfigError(f"raptor: beam must be >= 1, got {beam}")
        self.mode, self.beam, self.expand, self.llm = mode, int(beam), expand, llm
        self.params = RaptorParams.of(
            {
                "reduce": reduce,
                "summarizer": summarizer,
                "max_children": max_children,
                "threshold": threshold,
                "sentences": sentences,
                **build,
            }
        )
        self._tree: RaptorTree | None = None
        self._generation: int | None = None

    @property
    def tree(self) -> RaptorTree:
        if self._tree is None or self._generation != self.index.generation:
            stored = load_tree(self.index.path) if self.index.path is not None else None
            if stored is not None and stored.params == self.params and stored.sources == live_sources(self.index):
                self._tree = stored
            else:
                self._tree = build_tree(self.index, self.params, stored, self.llm)
            self._generation = self.index.generation
        return self._tree

    def allowed_nodes(self, filter: FilterLike) -> np.ndarray:
        """Which nodes the filter admits: every source chunk live and admitted."""
        tree = self.tree
        allowed = allowed_ids(self.index, filter)
        live = set(tree.sources) if allowed is None else allowed
        return np.array([bool(n.sources) and all(s in live for s in n.sources) for n in tree.nodes], dtype=bool)

    def rank(self, query: str, k: int = 10, filter: FilterLike = None) -> Ranked:
        if not self.tree.nodes or k <= 0:
            return []
        return self.rank_vector(self.index.embedder.embed_queries([query])[0], k, filter)

    def rank_vector(self, vector: np.ndarray, k: int = 10, filter: FilterLike = None) -> Ranked:
        """The nodes nearest ``vector`` (the index embedder's space), as chunks: a question's embedding or a
        vector a transform made (HyDE's)."""
        tree = self.tree
        if not tree.nodes or k <= 0:
            return []
        scores = tree.vectors @ np.asarray(vector, dtype=np.float32)
        ok = self.allowed_nodes(filter)
        order = self._collapsed(scores, ok) if self.mode == "collapsed" else self._traversal(scores, ok, k)
        out: dict[str, float] = {}
        self.last_nodes: list[int] = []  # the nodes the ranking came from (what the ACL fuzz checks)
        leaf_score = {n.id: float(scores[i]) for i, n in enumerate(tree.nodes) if n.level == 0}
        last = math.inf
        for i in order:
            last = min(last, float(scores[i]))  # a chunk stands in for its node: scores never rise down the list
            self.last_nodes.append(i)
            for chunk_id in self._chunks_of(i, leaf_score):
                out.setdefault(chunk_id, last)
                if len(out) >= k:
                    return list(out.items())
        return list(out.items())

    def _collapsed(self, scores: np.ndarray, ok: np.ndarray) -> list[int]:
        candidates = np.flatnonzero(ok)
        return candidates[np.argsort(-scores[candidates], kind="stable")].tolist()

    def _traversal(self, scores: np.ndarray, ok: np.ndarray, k: int) -> list[int]:
        tree, out = self.tree, []  # type: RaptorTree, list[int]
        frontier = [i for i in tree.roots if ok[i]]
        while frontier and len(out) < k:
            frontier = sorted(frontier, key=lambda i: -scores[i])[: self.beam]
            upcoming = []
            for i in frontier:
                children = [c for c in tree.nodes[i].children if ok[c]]
                if tree.nodes[i].level == 0 or not children:
                    out.append(i)
                else:
                    upcoming.extend(children)
            frontier = upcoming
        return out

    def _chunks_of(self, i: int, leaf_score: dict[str, float]) -> list[str]:
        node = self.tree.nodes[i]
        if node.level == 0:
            return [node.id]
        quoted = sorted(dict.fromkeys(c for _, c in node.quoted), key=lambda s: -leaf_score.get(s, -1.0))
        rest = sorted((s for s in node.sources if s not in quoted), key=lambda s: -leaf_score.get(s, -1.0))
        if self.expand == "quoted" and quoted:
            return quoted
        return quoted + rest  # every source, the quoted ones first

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "mode": self.mode, "beam": self.beam, "expand": self.expand, **asdict(self.params)}
