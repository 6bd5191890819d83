"""Communities of an entity graph and their reports, recomputed only where the chunks changed.

**Communities.** Leiden (``leidenalg`` on ``igraph``, the ``graph`` extra) runs on each connected component
of the entity graph (co-occurrence counts as weights), then again inside each community larger than
``max_community``, down to ``levels`` levels: level 0 is the coarsest. Leiden's communities are connected,
so none spans two components; running it per component makes each component's partition depend on that
component alone. A component is named by a digest of its entity keys and its weighted relations; one whose
digest the previous graph holds keeps its previous partition (no Leiden run), so a changed document
re-partitions only the components its entities and relations belong to.

**Reports**: per community and per ACL of its chunks, the sentences that name the most of its entities,
headed by those entities (extractive); or, with a writer (``reporter=llm``, ``graph.py``), the configured LLM's
report written from those sentences alone, each of its sentences kept only when every term of it is in them and
cited to the one that shares the most (``ragline.structures.written``), the extractive report when none is.
A report is derived text, built **per ACL**: it carries the
intersection of its sources' groups (:func:`~ragline.structures.graph.derived_acl`) and the chunk id behind
each sentence. Its id is content-addressed (level and member keys), and it is rebuilt only when its
community's members, or a chunk naming one of them (id, content, metadata), changed; otherwise the previous
report is kept as it was.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragline.errors import ConfigError
from ragline.progress import track
from ragline.text.sentences import split_sentences
from ragline.types import Document

if TYPE_CHECKING:
    from ragline.structures.graph import EntityGraph
    from ragline.structures.written import LLMWriter

Partition = list[list[list[str]]]  # level -> community -> entity keys


@dataclass
class Report:
    """A community's report for one ACL: text, the chunk behind each sentence, and the groups it carries."""

    id: str
    level: int
    community: int
    title: str
    sentences: list[str]
    sources: list[str]  # chunk id per sentence
    acl: list[str] | None  # None: no source has an ACL
    digest: str = ""  # what the report was built from (``communities.reports`` keeps it while unchanged)

    @property
    def text(self) -> str:
        return self.title + "\n" + "\n".join(self.sentences)


def derived_acl(metadatas: Iterable[Mapping[str, Any]]) -> list[str] | None:
    """The ACL of text derived from sources with these metadata: the intersection of their groups.

    None when no source has an ``acl`` (derived text is then as open as its sources); a source without one
    counts as no group, so with one restricted source the intersection is empty and the text is visible
    only where no restriction applies, exactly like such a source.
    """
    groups: set[str] | None = None
    any_acl = False
    for metadata in metadatas:
        acl = metadata.get("acl")
        any_acl |= acl is not None
        mine = {str(a) for a in (acl if isinstance(acl, (list, tuple)) else [] if acl is None else [acl])}
        groups = mine if groups is None else groups & mine
    return sorted(groups or ()) if any_acl else None


def _digest(parts: Sequence[Any]) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:16]


def components(graph: EntityGraph) -> list[list[int]]:
    """Connected components of the entity graph (entities with a relation), ordered by their first key."""
    parent = list(range(len(graph.keys)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in graph.relations:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    related = {e for pair in graph.relations for e in pair}
    groups: dict[int, list[int]] = defaultdict(list)
    for e in sorted(related):
        groups[find(e)].append(e)
    return sorted((sorted(m, key=lambda e: graph.keys[e]) for m in groups.values()), key=lambda m: graph.keys[m[0]])


def component_digest(graph: EntityGraph, members: Sequence[int]) -> str:
    """What a component's partition depends on: its entity keys and its relations with their weights."""
    inside = set(members)
    edges = sorted(
        (*sorted((graph.keys[a], graph.keys[b])), len(ev))
        for (a, b), ev in graph.relations.items()
        if a in inside and b in inside
    )
    return _digest([sorted(graph.keys[e] for e in members), edges])


def _leiden(graph: EntityGraph, members: list[int], seed: int) -> list[list[int]]:
    try:
        import igraph as ig
        import leidenalg
    except ImportError as exc:  # pragma: no cover - the graph extra is part of make setup
        raise ConfigError("graph communities need igraph and leidenalg: pip install 'ragline[graph]'") from exc
    where = {e: i for i, e in enumerate(members)}
    edges, weights = [], []
    for (a, b), evidence in graph.relations.items():
        if a in where and b in where:
            edges.append((where[a], where[b]))
            weights.append(float(len(evidence)))
    g = ig.Graph(n=len(members), edges=edges)
    g.es["weight"] = weights
    part = leidenalg.find_partition(g, leidenalg.ModularityVertexPartition, weights="weight", seed=seed)
    return [[members[i] for i in block] for block in part if len(block) > 1]


def partition_component(
    graph: EntityGraph, members: list[int], levels: int, max_community: int, seed: int
) -> Partition:
    """One component's communities per level, as entity keys (level 0 Leiden on it, then splits of large ones)."""
    out: list[list[list[int]]] = []
    groups = [members]
    for level in range(max(1, levels)):
        split: list[list[int]] = []
        for block in groups:
            split += [block] if level > 0 and len(block) <= max_community else _leiden(graph, block, seed)
        out.append(split)
        groups = split
    return [[[graph.keys[e] for e in block] for block in level_blocks] for level_blocks in out]


def communities(
    graph: EntityGraph,
    levels: int = 2,
    max_community: int = 12,
    seed: int = 0,
    previous: Mapping[str, Partition] | None = None,
) -> tuple[list[list[list[int]]], dict[str, Partition], int]:
    """Communities per level (level 0 the coarsest), the partition kept per component digest, Leiden runs.

    A component whose digest is in ``previous`` (same keys and weighted relations, same settings) keeps
    that partition; only the others are partitioned again.
    """
    key_no = {k: i for i, k in enumerate(graph.keys)}
    kept: dict[str, Partition] = {}
    out: list[list[list[int]]] = [[] for _ in range(max(1, levels))]
    runs = 0
    for members in components(graph):
        digest = _digest([component_digest(graph, members), levels, max_community, seed])
        partition = (previous or {}).get(digest)
        if partition is None:
            partition = partition_component(graph, members, levels, max_community, seed)
            runs += 1
        kept[digest] = partition
        for level, blocks in enumerate(partition):
            out[level] += [[key_no[k] for k in block] for block in blocks]
    return out, kept, runs


def reports(
    graph: EntityGraph,
    docs: Sequence[Document],
    per_report: int = 6,
    previous: Sequence[Report] = (),
    write: LLMWriter | None = None,
) -> tuple[list[Report], int]:
    """Reports per community and ACL, extractive or by ``write``; those whose digest ``previous`` holds are kept.
    Also: how many were built."""
    old: dict[str, list[Report]] = defaultdict(list)
    for r in previous:
        if r.digest:
            old[r.digest].append(r)
    sentence_texts: dict[int, list[str]] = {}
    entity_chunks = graph.entity_chunks()
    written_by = ["llm"] if write is not None else []  # an extractive report's digest is as it was
    out: list[Report] = []
    built = 0
    every = [
        (level, number, members)
        for level, blocks in enumerate(graph.communities)
        for number, members in enumerate(blocks)
    ]
    for level, number, members in track(every, "graph: community reports by the LLM", shown=write is not None):
        inside = set(members)
        chunks = sorted({c for e in members for c in entity_chunks[e]})
        sources = [
            (graph.chunk_ids[c], docs[c].hash, [[graph.keys[e] for e in s] for s in graph.mentions[c]]) for c in chunks
        ]
        digest = _digest([level, per_report, sorted(graph.keys[e] for e in members), sources, *written_by])
        if digest in old:
            out += [Report(**{**r.__dict__, "community": number}) for r in old[digest]]
            continue
        built += 1
        name = f"report:{level}.{_digest(sorted(graph.keys[e] for e in members))[:10]}"
        by_acl: dict[tuple[str, ...] | None, list[tuple[int, int, int, int]]] = defaultdict(list)
        for c in chunks:
            if c not in sentence_texts:
                sentence_texts[c] = [docs[c].text[s[0] : s[1]] for s in split_sentences(docs[c].text)]
            acl = derived_acl([docs[c].metadata])
            for s, ids in enumerate(graph.mentions[c]):
                named = len(inside.intersection(ids))
                if named and s < len(sentence_texts[c]):
                    by_acl[None if acl is None else tuple(acl)].append((-named, c, s, named))
        for acl_key, candidates in by_acl.items():
            chosen = sorted(candidates)[:per_report]
            chosen.sort(key=lambda t: (t[1], t[2]))  # the collection's order reads better
            heads = Counter(e for _, c, s, _ in chosen for e in graph.mentions[c][s] if e in inside)
            title = "Community: " + ", ".join(graph.names[e] for e, _ in heads.most_common(8))
            acl = None if acl_key is None else list(acl_key)
            texts = [sentence_texts[c][s] for _, c, s, _ in chosen]
            chunk_ids = [graph.chunk_ids[c] for _, c, _, _ in chosen]
            if write is not None:
                texts, chunk_ids = write.grounded(title, texts, chunk_ids, acl)
            suffix = "" if acl_key is None else f"@{'+'.join(acl_key) or '-'}"
            out.append(Report(name + suffix, level, number, title, texts, chunk_ids, acl, digest))
    return out, built
