"""Derived index structures: what they share (sources, staleness, atomic storage, the builders by name).

A structure (a RAPTOR tree, an entity graph) is built from an index's live chunks and stored beside
the index in ``INDEX_DIR/structures/NAME/`` with a ``manifest.json``::

    {"structure": NAME, "format": 1, "params": {...}, "sources": {chunk id: content hash, ...},
     "built_at": ISO time, "cost": {"llm_calls", "tokens", "seconds"}, ...}

It is stale when the index's live chunks or their content hashes differ from ``sources``. Writes are
atomic (a temporary folder, fsynced, renamed over the old one), so a crash leaves the previous
structure or none, never half of one. ``BUILDERS`` maps each structure's name to the function that
builds (or brings up to date) and stores it; ``ragline index --structure NAME`` and ``ragline status``
loop over it, so a new structure adds one entry and nothing else.

Derived text (a summary, a report) is read only by a principal who may read every chunk it was
derived from: a retriever over it evaluates the caller's filter on its source chunks inside the
search, before the top k, like every retriever.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import ConfigError, CorruptIndexError
from ragline.fsutil import fsync_directory, fsync_file
from ragline.index.filters import FilterLike, parse_filter

FORMAT = 1
MANIFEST = "manifest.json"

# name -> builder(index, params) -> manifest; filled by the structure modules when imported (``builders``)
BUILDERS: dict[str, Callable[..., dict[str, Any]]] = {}
# the modules that register a builder, imported the first time the builders are asked for
MODULES = ("ragline.structures.raptor", "ragline.structures.graph")


def register_builder(name: str) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    def wrap(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        BUILDERS[name] = fn
        return fn

    return wrap


def builders() -> dict[str, Callable[..., dict[str, Any]]]:
    """Every structure's builder by name (importing the modules that define them)."""
    import importlib

    for module in MODULES:
        importlib.import_module(module)
    return dict(BUILDERS)


def structure_names() -> list[str]:
    return sorted(builders())


@dataclass
class Cost:
    """What building cost: LLM calls, their tokens, and wall-clock seconds."""

    llm_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    started: float = field(default_factory=time.perf_counter, repr=False)

    def charge(self, model: Any, misses: int, texts: Sequence[str], extra_tokens: int = 0) -> None:
        """One request, when ``model`` (a ``CachedLLM`` whose ``misses`` stood at ``misses`` before it) answered
        it itself rather than its reply cache: a call, and the tokens of ``texts`` (prompt and reply) plus
        ``extra_tokens``. A re-sync's cost is then what it paid."""
        if model.misses > misses:
            self.llm_calls += 1
            self.tokens += sum(model.count_tokens(t) for t in texts) + extra_tokens

    def stop(self) -> dict[str, Any]:
        self.seconds = round(time.perf_counter() - self.started, 3)
        return {"llm_calls": self.llm_calls, "tokens": self.tokens, "seconds": self.seconds}


def live_sources(index: Any) -> dict[str, str]:
    """Every live chunk id of ``index`` -> its content hash (what a structure records as ``sources``)."""
    out: dict[str, str] = {}
    for segment, dead in zip(index.segments, index.deleted):
        hashes = segment.hashes
        for row in np.flatnonzero(~dead):
            out[segment.ids[int(row)]] = hashes[int(row)]
    return out


def allowed_ids(index: Any, filter: FilterLike) -> set[str] | None:
    """Live ids a search under ``filter`` may return (None: no filter, every live id)."""
    node = parse_filter(filter)
    if node is None:
        return None
    out: set[str] = set()
    for si, segment in enumerate(index.segments):
        mask = index.live_mask(si, node)
        rows = range(len(segment)) if mask is None else np.flatnonzero(mask)
        out.update(segment.ids[int(row)] for row in rows)
    return out


def structure_dir(index_path: str | Path, name: str) -> Path:
    return Path(index_path) / "structures" / name


def read_manifest(index_path: str | Path | None, name: str) -> dict[str, Any] | None:
    """The stored manifest of structure ``name`` (None: not built, or an in-memory index)."""
    if index_path is None:
        return None
    path = structure_dir(index_path, name) / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CorruptIndexError(f"{path}: unreadable structure manifest ({exc})") from exc
    if manifest.get("structure") != name or manifest.get("format") != FORMAT:
        raise CorruptIndexError(f"{path}: not a format-{FORMAT} {name!r} structure; rebuild it with --structure {name}")
    return dict(manifest)


def staleness(index: Any, manifest: dict[str, Any]) -> dict[str, int]:
    """Chunks added, changed and removed since the structure was built (all 0: fresh)."""
    now, then = live_sources(index), manifest.get("sources", {})
    return {
        "added": sum(1 for i in now if i not in then),
        "changed": sum(1 for i, h in now.items() if i in then and then[i] != h),
        "removed": sum(1 for i in then if i not in now),
    }


def structure_status(index: Any) -> list[dict[str, Any]]:
    """Each structure stored beside ``index``: its name, when built, and whether it is stale."""
    out = []
    for name in structure_names():
        manifest = read_manifest(getattr(index, "path", None), name)
        if manifest is None:
            continue
        delta = staleness(index, manifest)
        out.append({"structure": name, "built_at": manifest.get("built_at"), "stale": any(delta.values()), **delta})
    return out


def build_structure(index: Any, name: str, params: dict[str, Any] | None = None, **deps: Any) -> dict[str, Any]:
    """Build or bring up to date structure ``name`` of ``index``; return its manifest."""
    table = builders()
    if name not in table:
        raise ConfigError(f"unknown structure {name!r}; choose from {', '.join(sorted(table))}")
    return table[name](index, dict(params or {}), **deps)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextmanager
def atomic_structure(index_path: str | Path, name: str) -> Iterator[Path]:
    """Yield an empty temporary folder; on success it replaces ``INDEX_DIR/structures/NAME`` in one rename.

    Every file written in it is fsynced by ``write_json``/``write_array``; the folder and its parent are
    fsynced around the rename. On an error the temporary folder goes and the old structure stays.
    """
    final = structure_dir(index_path, name)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.tmp-", dir=final.parent))
    try:
        yield tmp
        fsync_directory(tmp)
        old = None
        if final.exists():
            old = final.parent / f".{name}.old-{os.getpid()}"
            shutil.rmtree(old, ignore_errors=True)
            os.rename(final, old)
        os.rename(tmp, final)
        fsync_directory(final.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json(path: Path, data: Any) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, ensure_ascii=False)
        fsync_file(handle)


def write_array(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as handle:
        np.save(handle, array, allow_pickle=False)
        fsync_file(handle)
