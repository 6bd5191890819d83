"""The RAPTOR tree: its parameters, its nodes, and how it is stored beside the index (``structures/raptor``).

``nodes.json`` (one record per node: id, level, ACL partition, text, children, sources, quoted
sentences), ``vectors.npy`` (one L2-normalized row per node) and ``manifest.json`` (see
``ragline.structures.base``), written atomically.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ragline.errors import ConfigError, CorruptIndexError
from ragline.structures.base import (
    FORMAT,
    MANIFEST,
    atomic_structure,
    now_iso,
    read_manifest,
    structure_dir,
    write_array,
    write_json,
)

NAME = "raptor"
REDUCERS = ("umap", "none")
SUMMARIZERS = ("extractive", "llm")
MODES = ("collapsed", "traversal")


@dataclass(frozen=True)
class RaptorParams:
    """How a tree is built (part of its manifest: a tree built otherwise is rebuilt, not reused)."""

    reduce: str = "none"
    summarizer: str = "extractive"
    max_children: int = 8
    max_components: int = 12
    threshold: float = 0.3
    sentences: int = 5
    umap_dim: int = 8
    rebuild_fraction: float = 0.3
    seed: int = 0

    def __post_init__(self) -> None:
        if self.reduce not in REDUCERS:
            raise ConfigError(f"raptor: reduce must be one of {', '.join(REDUCERS)}, got {self.reduce!r}")
        if self.summarizer not in SUMMARIZERS:
            raise ConfigError(f"raptor: summarizer must be one of {', '.join(SUMMARIZERS)}, got {self.summarizer!r}")
        if int(self.max_children) < 2:
            raise ConfigError(f"raptor: max_children must be >= 2, got {self.max_children}")
        if not 0.0 < float(self.threshold) <= 1.0:
            raise ConfigError(f"raptor: threshold (soft membership) must be in (0, 1], got {self.threshold}")
        if int(self.sentences) < 1:
            raise ConfigError(f"raptor: sentences (per extractive summary) must be >= 1, got {self.sentences}")

    @classmethod
    def of(cls, params: dict[str, Any]) -> RaptorParams:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(params) - known)
        if unknown:
            accepted = ", ".join(sorted(known))
            raise ConfigError(f"raptor: unknown parameter(s) {', '.join(unknown)}; accepted: {accepted}")
        types = {"reduce": str, "summarizer": str, "threshold": float, "rebuild_fraction": float}
        return cls(**{k: types.get(k, int)(v) for k, v in params.items()})


@dataclass
class Node:
    """A leaf (``level`` 0: a chunk, ``id`` is the chunk id) or a summary of its ``children``.

    ``sources``: the chunk ids it was derived from; ``quoted``: (sentence, chunk id) of an extractive
    summary, in order; ``acl``: the ACL partition it belongs to (JSON of the sorted groups).
    """

    id: str
    level: int
    acl: str
    text: str = ""
    children: list[int] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    quoted: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class RaptorTree:
    params: RaptorParams
    nodes: list[Node]
    vectors: np.ndarray  # one L2-normalized row per node
    sources: dict[str, str]  # chunk id -> content hash
    cost: dict[str, Any] = field(default_factory=dict)
    work: dict[str, int] = field(default_factory=dict)  # partitions kept / updated / built, summaries redone

    @property
    def roots(self) -> list[int]:
        child = {c for node in self.nodes for c in node.children}
        return [i for i in range(len(self.nodes)) if i not in child]

    def levels(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for node in self.nodes:
            out[node.level] = out.get(node.level, 0) + 1
        return dict(sorted(out.items()))


# --- storage -----------------------------------------------------------------------------------------


def save_tree(index_path: Any, tree: RaptorTree) -> dict[str, Any]:
    manifest = {
        "structure": NAME,
        "format": FORMAT,
        "params": asdict(tree.params),
        "sources": tree.sources,
        "built_at": now_iso(),
        "cost": tree.cost,
        "updated": tree.work,
        "nodes": len(tree.nodes),
        "levels": {str(k): v for k, v in tree.levels().items()},
    }
    with atomic_structure(index_path, NAME) as tmp:
        write_json(tmp / "nodes.json", [asdict(node) for node in tree.nodes])
        write_array(tmp / "vectors.npy", tree.vectors)
        write_json(tmp / MANIFEST, manifest)
    return manifest


def load_tree(index_path: Any) -> RaptorTree | None:
    manifest = read_manifest(index_path, NAME)
    if manifest is None:
        return None
    folder = structure_dir(index_path, NAME)
    try:
        records = json.loads((folder / "nodes.json").read_text(encoding="utf-8"))
        vectors = np.load(folder / "vectors.npy", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise CorruptIndexError(f"{folder}: unreadable RAPTOR tree ({exc}); rebuild it: --structure raptor") from exc
    nodes = [Node(**{**r, "quoted": [tuple(q) for q in r["quoted"]]}) for r in records]
    if len(nodes) != len(vectors):
        raise CorruptIndexError(f"{folder}: {len(nodes)} nodes but {len(vectors)} vectors; rebuild it")
    return RaptorTree(RaptorParams.of(manifest["params"]), nodes, vectors, manifest["sources"], manifest["cost"])
