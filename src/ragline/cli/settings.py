"""Index settings from flags: a new index's defaults, an existing index's stamp, and flags that contradict it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ragline.cli.common import parse_fields
from ragline.corpora.builtin import DEFAULT_INGEST
from ragline.errors import ConfigError, IndexMismatchError
from ragline.index import IndexSettings
from ragline.index.store import MANIFEST
from ragline.text import Analyzer, get_analyzer

STAMPED_FLAGS = {
    "analyzer": "--analyzer",
    "fields": "--fields",
    "embedder": "--embedder",
    "vector_index": "--vector-index",
    "chunker": "--chunker",
    "context": "--context",
    "default_acl": "--default-acl",
    "bm25": "[index] bm25 of --config",
}


def _groups(spec: str, flag: str) -> tuple[str, ...]:
    groups = tuple(g.strip() for g in spec.split(",") if g.strip())
    if not groups:
        raise ConfigError(f"{flag}: no group names in {spec!r}; give them comma-separated, e.g. all,hr")
    return groups


def _given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The stamped settings the user gave: those of ``--config`` (all of them), then the flags given."""
    given: dict[str, Any] = {}
    if getattr(args, "config", None):
        from ragline.config import load_config

        config = load_config(args.config)
        settings = config.index.settings(config.ingest)
        given.update({name: getattr(settings, name) for name in STAMPED_FLAGS if name != "default_acl"})
    if args.analyzer is not None:
        given["analyzer"] = get_analyzer(args.analyzer)
    if args.fields is not None:
        given["fields"] = parse_fields(args.fields)
    if args.embedder is not None:
        given["embedder"] = None if args.embedder.lower() == "none" else args.embedder
    if args.vector_index is not None:
        given["vector_index"] = args.vector_index
    if args.chunker is not None:
        given["chunker"] = args.chunker
    if args.context is not None:
        given["context"] = args.context
    if args.default_acl is not None:
        given["default_acl"] = _groups(args.default_acl, "--default-acl")
    return given


def _stamped_settings(path: Path) -> IndexSettings | None:
    """The settings stamped in the index at ``path``; None when there is none (or it cannot be read:
    opening it then reports why)."""
    try:
        return IndexSettings.from_dict(json.loads((path / MANIFEST).read_text("utf-8"))["settings"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def describe_setting(name: str, value: Any) -> str:
    """A stamped setting as the user would write the flag."""
    if isinstance(value, Analyzer):
        return value.name
    if hasattr(value, "to_dict"):
        return json.dumps(value.to_dict())
    if name == "fields":
        return ",".join(f"{field}={weight:g}" for field, weight in value.items())
    if isinstance(value, (tuple, list)):
        return ",".join(value)
    return "none" if value is None else str(value)


def _same_setting(given: Any, stamped: Any) -> bool:
    # a group list read back from JSON is a list; the flag gives a tuple
    if isinstance(given, (tuple, list)) and isinstance(stamped, (tuple, list)):
        return tuple(given) == tuple(stamped)
    return bool(given == stamped)


def index_settings(args: argparse.Namespace, path: Path) -> IndexSettings:
    """The settings of `ragline index`: an existing index's stamp, or defaults, overridden by the flags given.

    A flag that contradicts the stamp is refused: mixing chunkers or embedders in one index would make
    its documents incomparable.
    """
    given = _given_settings(args)
    stamp = _stamped_settings(path)
    if stamp is None:
        chunker = given.get("chunker", DEFAULT_INGEST.chunker)
        from ragline.config import load_config

        default = load_config("default")  # a new index gets the default pipeline's [ingest] and [index]
        base = default.index.settings(default.ingest)
        defaults = {name: getattr(base, name) for name in STAMPED_FLAGS if name != "default_acl"}
        if chunker == "none":
            defaults["context"] = "none"
        return IndexSettings(**{**defaults, **given})
    changed = [
        (name, getattr(stamp, name, None), value)
        for name, value in given.items()
        if not _same_setting(value, getattr(stamp, name, None))
    ]
    if changed:
        differences = "; ".join(
            f"{name.replace('_', ' ')} {describe_setting(name, old)!r}, not {describe_setting(name, new)!r} "
            f"({STAMPED_FLAGS[name]})"
            for name, old, new in changed
        )
        raise IndexMismatchError(
            f"index {path} was built with other settings: {differences}. Leave the flag out to keep the index's "
            f"setting, give another --index, or delete {path} to rebuild it with the new one"
        )
    return stamp
