"""Building a RAPTOR tree: embed, reduce, cluster (Gaussian mixture by BIC, soft membership), summarize, recurse.

See ``ragline.structures.raptor`` for the method; this module holds the builder and the incremental
update of an ACL partition whose chunks changed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from ragline.index.segment import FIELD_TEXT
from ragline.progress import track
from ragline.structures.base import Cost, live_sources
from ragline.structures.raptor_tree import Node, RaptorParams, RaptorTree
from ragline.structures.written import SUMMARY, LLMWriter
from ragline.text.sentences import sentence_texts


class _Builder:
    def __init__(self, index: Any, params: RaptorParams, llm: Any = None) -> None:
        self.index, self.params, self.llm = index, params, llm
        self.cost = Cost()
        self.work = dict.fromkeys(("partitions_kept", "partitions_updated", "partitions_built", "summaries_redone"), 0)
        self.nodes: list[Node] = []
        self.vectors: list[np.ndarray] = []
        self.removed: set[int] = set()  # leaves of a previous tree whose chunk is gone or changed
        self.current_sources: dict[str, str] = {}
        self.writer: LLMWriter | None = None  # summarizer=llm, made on first use

    # vectors ---------------------------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.asarray(self.index.embedder.embed_passages(list(texts), progress=False), dtype=np.float32)

    def add(self, node: Node, vector: np.ndarray) -> int:
        self.nodes.append(node)
        self.vectors.append(vector.astype(np.float32))
        return len(self.nodes) - 1

    # clustering ------------------------------------------------------------------------------------
    def cluster(self, vectors: np.ndarray) -> list[list[int]]:
        """Groups of row numbers (overlapping: soft membership), none larger than ``max_children``."""
        n, p = len(vectors), self.params
        if n <= p.max_children:
            return [list(range(n))]
        points = self.reduce(vectors)
        groups = self.mixture(points)
        out: list[list[int]] = []
        for group in groups:
            if len(group) <= p.max_children:
                out.append(group)
            elif len(group) == n:  # the mixture did not split: cut by k-means into groups of the allowed size
                out.extend([group[i] for i in sub] for sub in self.kmeans(points[group]))
            else:
                out.extend([group[i] for i in sub] for sub in self.cluster(vectors[group]))
        return [g for g in out if g]

    def reduce(self, vectors: np.ndarray) -> np.ndarray:
        p = self.params
        if p.reduce == "none" or len(vectors) <= p.umap_dim + 2:
            return vectors
        import umap

        neighbours = max(2, min(len(vectors) - 1, int(math.sqrt(len(vectors)))))
        reducer = umap.UMAP(
            n_neighbors=neighbours, n_components=p.umap_dim, metric="cosine", random_state=p.seed, n_jobs=1
        )
        return np.asarray(reducer.fit_transform(vectors), dtype=np.float64)

    def mixture(self, points: np.ndarray) -> list[list[int]]:
        """A Gaussian mixture with the number of components of least BIC; soft membership by ``threshold``."""
        from sklearn.mixture import GaussianMixture

        p, n = self.params, len(points)
        covariance = "full" if points.shape[1] <= 16 else "spherical"
        best, best_bic = None, math.inf
        for k in range(1, min(p.max_components, n // 2) + 1):
            gm = GaussianMixture(k, covariance_type=covariance, random_state=p.seed, reg_covar=1e-4)
            gm.fit(points)
            bic = gm.bic(points)
            if bic < best_bic:
                best, best_bic = gm, bic
        assert best is not None
        posterior = best.predict_proba(points)
        chosen = posterior >= p.threshold
        chosen[np.arange(n), posterior.argmax(axis=1)] = True  # every node in at least its likeliest cluster
        return [np.flatnonzero(chosen[:, c]).tolist() for c in range(posterior.shape[1])]

    def kmeans(self, points: np.ndarray) -> list[list[int]]:
        from sklearn.cluster import KMeans

        n, p = len(points), self.params
        k = max(2, math.ceil(n / p.max_children))
        labels = KMeans(k, random_state=p.seed, n_init=3).fit_predict(points)
        groups = [np.flatnonzero(labels == c).tolist() for c in range(k)]
        if any(len(g) == n for g in groups):  # identical points: cut in order
            return [list(range(i, min(n, i + p.max_children))) for i in range(0, n, p.max_children)]
        return groups

    # summaries -------------------------------------------------------------------------------------
    def summarize(self, members: list[int], level: int, acl: str) -> int:
        nodes = [self.nodes[i] for i in members]
        sources = list(dict.fromkeys(s for node in nodes for s in node.sources))
        centroid = np.mean([self.vectors[i] for i in members], axis=0)
        centroid /= np.linalg.norm(centroid) or 1.0
        quoted = self.summary(nodes, centroid, acl)
        text = " ".join(sentence for sentence, _ in quoted)
        node = Node(f"raptor:{level}:{len(self.nodes)}", level, acl, text, list(members), sources, quoted)
        vector = self.embed([text])[0] if text else centroid
        return self.add(node, vector)

    def pairs_of(self, node: Node) -> list[tuple[str, str]]:
        """(sentence, chunk id) a summary may quote from ``node``: a chunk's sentences, a summary's quotes."""
        if node.level == 0:
            return [(s, node.id) for s in sentence_texts(self.chunk_text(node.id))]
        return list(node.quoted) or [(s, src) for s in sentence_texts(node.text) for src in node.sources[:1]]

    def indexed_text(self, chunk_id: str) -> str:
        """What the index embedded for the chunk (its vector comes from the embedding cache)."""
        doc = self.index.get(chunk_id)
        return "" if doc is None else FIELD_TEXT["body"](doc)

    def chunk_text(self, chunk_id: str) -> str:
        doc = self.index.get(chunk_id)
        return "" if doc is None else doc.text

    def central_sentences(self, nodes: list[Node], centroid: np.ndarray) -> list[tuple[str, str]]:
        pairs = list(dict.fromkeys(pair for node in nodes for pair in self.pairs_of(node)))
        seen: set[str] = set()
        unique = [pair for pair in pairs if not (pair[0] in seen or seen.add(pair[0]))]  # type: ignore[func-returns-value]
        if not unique:
            return []
        scores = self.embed([s for s, _ in unique]) @ centroid
        keep = sorted(np.argsort(-scores, kind="stable")[: self.params.sentences].tolist())
        return [unique[i] for i in keep]

    def summary(self, nodes: list[Node], centroid: np.ndarray, acl: str) -> list[tuple[str, str]]:
        """A summary's sentences, each with the chunk that states it: the central ones, or the LLM's from them."""
        quoted = self.central_sentences(nodes, centroid)
        return self.llm_summary(quoted, acl) if self.params.summarizer == "llm" and quoted else quoted

    def llm_summary(self, quoted: list[tuple[str, str]], acl: str) -> list[tuple[str, str]]:
        """The configured LLM's summary of the central sentences, each of its sentences with the chunk that states
        it (the central sentences themselves when the model states nothing they do)."""
        if self.writer is None:
            self.writer = LLMWriter(self.llm, self.cost, SUMMARY)
        sentences, sources = [s for s, _ in quoted], [c for _, c in quoted]
        kept, cited = self.writer.grounded("Passages on one topic", sentences, sources, json.loads(acl))
        return list(zip(kept, cited, strict=True))

    # one ACL partition -----------------------------------------------------------------------------
    def grow(self, current: list[int], acl: str) -> None:
        """Cluster and summarize ``current`` (node numbers) level by level up to one root."""
        level = max(self.nodes[i].level for i in current) if current else 0
        while len(current) > 1:
            level += 1
            groups = self.cluster(np.stack([self.vectors[i] for i in current]))
            if len(groups) >= len(current):  # no progress: put them all under one node in pieces
                step = self.params.max_children
                groups = [list(range(i, min(len(current), i + step))) for i in range(0, len(current), step)]
            # an LLM summary takes seconds on two cores: say how far it is
            todo = track(groups, f"raptor: LLM summaries of level {level}", shown=self.params.summarizer == "llm")
            current = [self.summarize([current[i] for i in group], level, acl) for group in todo]

    def build_partition(self, chunk_ids: list[str], acl: str) -> None:
        vectors = self.embed([self.indexed_text(cid) for cid in chunk_ids])
        leaves = [self.add(Node(cid, 0, acl, sources=[cid]), vectors[i]) for i, cid in enumerate(chunk_ids)]
        self.grow(leaves, acl)

    def copy_partition(self, tree: RaptorTree, members: list[int]) -> None:
        """Keep a previous tree's nodes of an unchanged partition (renumbered)."""
        renumber: dict[int, int] = {}
        for old in members:
            node = tree.nodes[old]
            renumber[old] = len(self.nodes)
            self.add(Node(**{**asdict(node), "children": []}), tree.vectors[old])
        for old in members:
            self.nodes[renumber[old]].children = [renumber[c] for c in tree.nodes[old].children]
            self.nodes[renumber[old]].quoted = [tuple(q) for q in tree.nodes[old].quoted]  # type: ignore[misc]

    def update_partition(self, tree: RaptorTree, members: list[int], chunk_ids: list[str], acl: str) -> None:
        """Remove gone chunks, add new ones to their nearest first-level cluster, re-summarize what they touch."""
        fresh = set(chunk_ids)
        self.copy_partition(tree, members)
        start = len(self.nodes) - len(members)
        part = list(range(start, len(self.nodes)))
        old_leaves = {self.nodes[i].id: i for i in part if self.nodes[i].level == 0}
        gone = {i for cid, i in old_leaves.items() if cid not in fresh or tree.sources.get(cid) != self._hash(cid)}
        added_ids = [cid for cid in chunk_ids if cid not in old_leaves or old_leaves[cid] in gone]
        first = [i for i in part if self.nodes[i].level == 1]
        touched: set[int] = set()
        for i in first:
            kept = [c for c in self.nodes[i].children if c not in gone]
            if len(kept) != len(self.nodes[i].children):
                self.nodes[i].children = kept
                touched.add(i)
        if added_ids:
            vectors = self.embed([self.indexed_text(cid) for cid in added_ids])
            new_leaves = [self.add(Node(cid, 0, acl, sources=[cid]), vectors[j]) for j, cid in enumerate(added_ids)]
            if first:
                centroids = np.stack([self._centroid(i) for i in first])
                for leaf in new_leaves:
                    target = first[int(np.argmax(centroids @ self.vectors[leaf]))]
                    self.nodes[target].children.append(leaf)
                    touched.add(target)
        for i in gone:  # a gone leaf stays in the list, unreferenced, and is dropped when the tree is compacted
            self.nodes[i].children = []
        # re-summarize touched clusters, then every ancestor, bottom up
        parents: dict[int, set[int]] = {}
        for i in part:
            for c in self.nodes[i].children:
                parents.setdefault(c, set()).add(i)
        frontier = touched
        while frontier:
            upper: set[int] = set()
            for i in sorted(frontier):
                self._resummarize(i)
                self.work["summaries_redone"] += 1
                upper |= parents.get(i, set())
            frontier = upper
        self.removed.update(gone)

    def _hash(self, chunk_id: str) -> str | None:
        return self.current_sources.get(chunk_id)

    def _centroid(self, i: int) -> np.ndarray:
        rows = [self.vectors[c] for c in self.nodes[i].children] or [self.vectors[i]]
        centroid = np.mean(rows, axis=0)
        return centroid / (np.linalg.norm(centroid) or 1.0)

    def _resummarize(self, i: int) -> None:
        node, members = self.nodes[i], self.nodes[i].children
        if not members:
            node.text, node.sources, node.quoted = "", [], []
            return
        children = [self.nodes[c] for c in members]
        node.sources = list(dict.fromkeys(s for child in children for s in child.sources))
        centroid = self._centroid(i)
        node.quoted = self.summary(children, centroid, node.acl)
        node.text = " ".join(s for s, _ in node.quoted)
        self.vectors[i] = (self.embed([node.text])[0] if node.text else centroid).astype(np.float32)

    def tree(self, sources: dict[str, str]) -> RaptorTree:
        """The nodes without the ones removed or emptied, renumbered."""
        drop = set(self.removed)
        drop |= {i for i, n in enumerate(self.nodes) if n.level > 0 and not n.children}
        keep = [i for i in range(len(self.nodes)) if i not in drop]
        renumber = {old: new for new, old in enumerate(keep)}
        nodes = []
        for old in keep:
            node = self.nodes[old]
            node.children = [renumber[c] for c in node.children if c in renumber]
            nodes.append(node)
        dim = self.vectors[0].shape[0] if self.vectors else 0
        vectors = np.stack([self.vectors[i] for i in keep]) if keep else np.zeros((0, dim), np.float32)
        if self.writer is not None:  # how many LLM summaries its sources state (the others are extractive)
            self.work.update(llm_summaries_kept=self.writer.kept, llm_summaries_extractive=self.writer.fallbacks)
        return RaptorTree(self.params, nodes, vectors.astype(np.float32), sources, self.cost.stop(), dict(self.work))


def partitions(index: Any, chunk_ids: Sequence[str]) -> dict[str, list[str]]:
    """Chunk ids by ACL (the JSON of the sorted groups; ``null`` for a chunk without one)."""
    out: dict[str, list[str]] = {}
    for chunk_id in chunk_ids:
        doc = index.get(chunk_id)
        acl = None if doc is None else doc.metadata.get("acl")
        key = json.dumps(sorted(str(g) for g in acl) if isinstance(acl, (list, tuple)) else acl)
        out.setdefault(key, []).append(chunk_id)
    return out


def build_tree(index: Any, params: RaptorParams, previous: RaptorTree | None = None, llm: Any = None) -> RaptorTree:
    """The RAPTOR tree of ``index``'s live chunks; parts of ``previous`` whose chunks are unchanged are kept."""
    sources = live_sources(index)
    builder = _Builder(index, params, llm)
    builder.current_sources = sources
    if previous is not None and previous.params != params:
        previous = None
    old_parts: dict[str, list[int]] = {}
    if previous is not None:
        for i, node in enumerate(previous.nodes):
            old_parts.setdefault(node.acl, []).append(i)
    for acl, chunk_ids in sorted(partitions(index, sorted(sources)).items()):
        members = old_parts.get(acl, [])
        if previous is None or not any(previous.nodes[i].level == 1 for i in members):
            builder.work["partitions_built"] += 1
            builder.build_partition(chunk_ids, acl)
            continue
        old = {previous.nodes[i].id for i in members if previous.nodes[i].level == 0}
        changed = set(chunk_ids) ^ old
        changed |= {c for c in set(chunk_ids) & old if previous.sources.get(c) != sources[c]}
        if not changed:
            builder.work["partitions_kept"] += 1
            builder.copy_partition(previous, members)
        elif len(changed) > params.rebuild_fraction * max(len(old), 1):
            builder.work["partitions_built"] += 1
            builder.build_partition(chunk_ids, acl)
        else:
            builder.work["partitions_updated"] += 1
            builder.update_partition(previous, members, chunk_ids, acl)
    return builder.tree(sources)
