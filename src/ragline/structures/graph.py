"""The entity graph of a collection (GraphRAG): entities and relations per chunk, communities, reports.

Built from an index's live chunks, no LLM needed (``extractor=rules``, see ``entities.py``):

1. **Entities and relations per chunk.** Each chunk's sentences give entity names; two entities named in
   one sentence are related (co-occurrence; the ``llm`` extractor adds the relations the model states).
   An extraction is kept by the chunk's content hash, so a rebuild extracts only changed chunks.
2. **Entity resolution.** Names with one :func:`~ragline.structures.entities.entity_key` are one entity
   (case, punctuation, a leading article and a trailing parenthetical do not count); entities whose names'
   embeddings are close are linked by synonym edges (:func:`embedding_synonyms`, used by ``ppr``), not merged.
3. **Communities** (``communities.py``): Leiden on each connected component of the entity graph, then inside
   each community larger than ``max_community``, down to ``levels`` levels (level 0 the coarsest). Only the
   components a change touched are partitioned again.
4. **A report per community** (``communities.py``): the sentences that name the most of the community's
   entities, headed by those entities (``reporter=extractive``), or the configured LLM's report written from
   those sentences only, kept sentence by sentence where the sentences state it (``reporter=llm``). A report
   is derived text, so it is built **per ACL**: the community's sentences are grouped by their chunk's
   ``acl`` and each group gets its own report (and its own LLM request, cached under that ACL), which
   carries the intersection of its sources' groups (``derived_acl``; here all are equal) and the chunk
   ids behind each sentence. A principal who cannot read a chunk never reads a report built from it. Which
   entities form a community is decided over the whole collection (the partition, not its text, sees every
   chunk). A report whose community and chunks did not change is kept from the previous build.

Stored beside the index in ``structures/graph/`` (``manifest.json`` as every derived structure's, and
``graph.json``), written to a temporary folder first and renamed into place.
"""

from __future__ import annotations

import json
import time
import weakref
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import ConfigError, CorruptIndexError
from ragline.progress import track
from ragline.structures.base import (
    FORMAT,
    MANIFEST,
    Cost,
    atomic_structure,
    live_sources,
    now_iso,
    read_manifest,
    register_builder,
    staleness,
    structure_dir,
    write_json,
)
from ragline.structures.communities import Partition, Report, communities, reports
from ragline.structures.communities import derived_acl as derived_acl  # re-exported: where callers look for it
from ragline.structures.entities import Extraction, entity_key, make_extractor
from ragline.structures.written import REPORT, LLMWriter
from ragline.types import Document

NAME = "graph"


@dataclass
class EntityGraph:
    """Chunks, entities, their mentions per sentence, relations, communities and reports."""

    chunk_ids: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # entity keys (normalized names)
    names: list[str] = field(default_factory=list)  # the most frequent surface name of each
    mentions: list[list[list[int]]] = field(default_factory=list)  # chunk -> sentence -> entity ids
    relations: dict[tuple[int, int], list[int]] = field(default_factory=dict)  # (a < b) -> chunk numbers
    labels: dict[tuple[int, int], list[str]] = field(default_factory=dict)  # stated relations (llm)
    communities: list[list[list[int]]] = field(default_factory=list)  # level -> community -> entity ids
    reports: list[Report] = field(default_factory=list)
    extractions: dict[str, Any] = field(default_factory=dict)  # chunk hash -> stored extraction
    partitions: dict[str, Partition] = field(default_factory=dict)  # component digest -> its communities
    rebuilt: dict[str, int] = field(default_factory=dict)  # this build: components partitioned, reports, LLM calls

    def chunk_entities(self, chunk: int) -> list[int]:
        return list(dict.fromkeys(e for sentence in self.mentions[chunk] for e in sentence))

    def entity_chunks(self) -> list[list[int]]:
        """Entity id -> the chunks that name it."""
        out: list[list[int]] = [[] for _ in self.keys]
        for c in range(len(self.chunk_ids)):
            for e in self.chunk_entities(c):
                out[e].append(c)
        return out


REPORTERS = ("extractive", "llm")


def _extraction_record(extraction: Extraction) -> dict[str, Any]:
    return {"sentences": [names for _, names in extraction.sentences], "relations": extraction.relations}


def build_graph(
    documents: Iterable[Document],
    extractor: str = "rules",
    llm: Any = None,
    levels: int = 2,
    max_community: int = 12,
    report_sentences: int = 6,
    previous: EntityGraph | None = None,
    seed: int = 0,
    reporter: str = "extractive",
) -> EntityGraph:
    """The entity graph of ``documents`` (chunks); ``previous``'s extractions are reused by content hash."""
    if reporter not in REPORTERS:
        raise ConfigError(f"graph reporter={reporter!r}; choose one of {', '.join(REPORTERS)}")
    ex = make_extractor(extractor, llm=llm)
    report_cost = Cost()
    write = LLMWriter(llm, report_cost, REPORT) if reporter == "llm" else None
    cache = previous.extractions if previous is not None else {}
    graph = EntityGraph()
    surface: dict[str, Counter[str]] = defaultdict(Counter)
    key_ids: dict[str, int] = {}
    docs = list(documents)

    def entity(name: str) -> int:
        key = entity_key(name)
        surface[key][name] += 1
        if key not in key_ids:
            key_ids[key] = len(graph.keys)
            graph.keys.append(key)
        return key_ids[key]

    # an LLM reads each new chunk (seconds a call on two cores): say how far it is
    for chunk_no, doc in enumerate(track(docs, "graph: entities by the LLM", shown=extractor == "llm")):
        digest = f"{extractor}:{doc.hash}"
        record = cache.get(digest)
        if record is None:
            record = _extraction_record(ex.extract(doc.text, doc.title))
        graph.extractions[digest] = record
        graph.chunk_ids.append(doc.id)
        per_sentence = [list(dict.fromkeys(entity(n) for n in names)) for names in record["sentences"]]
        graph.mentions.append(per_sentence)
        for ids in per_sentence:
            for i, a in enumerate(ids):
                for b in ids[i + 1 :]:
                    pair = (min(a, b), max(a, b))
                    evidence = graph.relations.setdefault(pair, [])
                    if not evidence or evidence[-1] != chunk_no:
                        evidence.append(chunk_no)
        for source, label, target in record["relations"]:
            a, b = entity(source), entity(target)
            if a != b:
                pair = (min(a, b), max(a, b))
                graph.labels.setdefault(pair, []).append(label)
                graph.relations.setdefault(pair, [])
                if chunk_no not in graph.relations[pair]:
                    graph.relations[pair].append(chunk_no)
    graph.names = [surface[k].most_common(1)[0][0] for k in graph.keys]
    graph.communities, graph.partitions, runs = communities(
        graph, levels, max_community, seed, previous.partitions if previous is not None else None
    )
    previous_reports = previous.reports if previous is not None else ()
    graph.reports, built = reports(graph, docs, report_sentences, previous_reports, write)
    graph.rebuilt = {"components": len(graph.partitions), "components_partitioned": runs, "reports_built": built}
    # the model calls of the extractor (uncached) and of the reports, and their tokens (0 without an LLM)
    extract_cost = getattr(ex, "cost", None) or Cost()
    graph.rebuilt.update(
        llm_calls=extract_cost.llm_calls + report_cost.llm_calls,
        tokens=extract_cost.tokens + report_cost.tokens,
        report_llm_calls=report_cost.llm_calls,
        # reports with a sentence of the LLM's kept, and those left extractive (none of its sentences stated)
        llm_reports_kept=write.kept if write is not None else 0,
        llm_reports_extractive=write.fallbacks if write is not None else 0,
        fallbacks=getattr(ex, "fallbacks", 0),
    )
    return graph


# -- storage beside the index -------------------------------------------------------------------------


def to_json(graph: EntityGraph) -> dict[str, Any]:
    """The graph as the JSON value `graph.json` holds."""
    return {
        "chunk_ids": graph.chunk_ids,
        "keys": graph.keys,
        "names": graph.names,
        "mentions": graph.mentions,
        "relations": [[a, b, ev] for (a, b), ev in graph.relations.items()],
        "labels": [[a, b, ls] for (a, b), ls in graph.labels.items()],
        "communities": graph.communities,
        "reports": [r.__dict__ for r in graph.reports],
        "extractions": graph.extractions,
        "partitions": graph.partitions,
    }


def from_json(data: Mapping[str, Any]) -> EntityGraph:
    return EntityGraph(
        chunk_ids=list(data["chunk_ids"]),
        keys=list(data["keys"]),
        names=list(data["names"]),
        mentions=data["mentions"],
        relations={(a, b): ev for a, b, ev in data["relations"]},
        labels={(a, b): ls for a, b, ls in data["labels"]},
        communities=data["communities"],
        reports=[Report(**r) for r in data["reports"]],
        extractions=data["extractions"],
        partitions=data.get("partitions", {}),
    )


def save_graph(
    graph: EntityGraph,
    index_dir: str | Path,
    params: Mapping[str, Any],
    sources: Mapping[str, str],
    cost: Mapping[str, Any],
) -> dict[str, Any]:
    """Write the graph and its manifest atomically beside the index (``atomic_structure``); the manifest."""
    manifest = {
        "structure": NAME,
        "format": FORMAT,
        "params": dict(params),
        "sources": dict(sources),
        "built_at": now_iso(),
        "cost": dict(cost),
        "nodes": len(graph.keys),  # entities
        "relations": len(graph.relations),
        "communities": [len(level) for level in graph.communities],
    }
    with atomic_structure(index_dir, NAME) as tmp:
        write_json(tmp / "graph.json", to_json(graph))
        write_json(tmp / MANIFEST, manifest)
    return manifest


def load_graph(index_dir: str | Path) -> EntityGraph | None:
    path = structure_dir(index_dir, NAME) / "graph.json"
    if read_manifest(index_dir, NAME) is None or not path.exists():
        return None
    try:
        return from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"{path}: unreadable entity graph ({exc}); rebuild it: --structure graph") from exc


def is_stale(index: Any) -> bool | None:
    """Whether the stored graph differs from the index's live chunks (None: no graph stored)."""
    manifest = read_manifest(index.path, NAME) if index.path else None
    if manifest is None:
        return None
    return any(staleness(index, manifest).values())


def build_structure(index: Any, extractor: str = "rules", llm: Any = None, **params: Any) -> EntityGraph:
    """Build or sync the graph of an index on disk; unchanged chunks' extractions are reused."""
    started = time.perf_counter()
    docs = list(index.documents())
    previous = load_graph(index.path) if index.path else None
    graph = build_graph(docs, extractor=extractor, llm=llm, previous=previous, **params)
    cost = {"seconds": round(time.perf_counter() - started, 3), **graph.rebuilt}
    if index.path:
        save_graph(graph, index.path, {"extractor": extractor, **params}, live_sources(index), cost)
    return graph


@register_builder(NAME)
def build_graph_structure(index: Any, params: dict[str, Any], llm: Any = None) -> dict[str, Any]:
    """``ragline index --structure graph``: build or sync the stored graph of an on-disk ``index``; its manifest."""
    if index.path is None:
        raise ConfigError("an entity graph is stored beside an index on disk; this index is in memory")
    settings = dict(params)
    build_structure(index, extractor=str(settings.pop("extractor", "rules")), llm=llm, **settings)
    return read_manifest(index.path, NAME) or {}


_memo: weakref.WeakKeyDictionary[Any, tuple[int, tuple[str, str], EntityGraph]] = weakref.WeakKeyDictionary()


def graph_for(index: Any, extractor: str = "rules", llm: Any = None, reporter: str = "extractive") -> EntityGraph:
    """The graph of ``index`` now: the stored one when it is current and built alike, else built in memory (kept
    per commit).

    Kept beside the index object (weakly: it goes with the index), so two indexes never share one.
    """
    kept = _memo.get(index)
    how = (extractor, reporter)
    if kept is None or kept[:2] != (index.generation, how):
        manifest = read_manifest(index.path, NAME) if index.path else None
        params = manifest["params"] if manifest is not None else {}
        alike = (params.get("extractor", "rules"), params.get("reporter", "extractive")) == how
        current = manifest is not None and not any(staleness(index, manifest).values())
        stored = load_graph(index.path) if alike and current else None
        before = kept[2] if kept is not None and kept[1] == how else None
        graph = (
            stored
            if stored is not None
            else build_graph(index.documents(), extractor=extractor, llm=llm, previous=before, reporter=reporter)
        )
        _memo[index] = kept = (index.generation, how, graph)
    return kept[2]


def embedding_synonyms(keys: Sequence[str], embedder: Any, threshold: float) -> list[tuple[int, int, float]]:
    """Pairs of entity keys whose name embeddings have cosine >= ``threshold`` (synonym edges)."""
    if len(keys) < 2:
        return []
    vectors = np.asarray(embedder.embed_passages(list(keys)), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    out = []
    for start in range(0, len(keys), 1024):
        sims = vectors[start : start + 1024] @ vectors.T
        rows, cols = np.nonzero(sims >= threshold)
        out += [(int(start + r), int(c), float(sims[r, c])) for r, c in zip(rows, cols) if start + r < c]
    return out
