"""``ragline serve``: the HTTP API and web page over one index, models loaded once (see ragline.server)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.text import Text

from ragline.cli.common import (
    add_config_flag,
    add_store_flag,
    index_location,
    opened_store,
    positive_int,
    query_config,
)
from ragline.errors import ConfigError
from ragline.progress import stderr


def served_engine(args: argparse.Namespace, verb: str, freshness: bool = True) -> Any:
    """The engine a server runs: ``--store``, else the index rule of `ask` (else the built-in demo index), and
    the pipeline config.

    ``freshness`` installs the check that lists files changed on disk since the last sync (the embedded
    index's: another store records no source files).
    """
    from ragline.freshness import stale_files
    from ragline.index import Index
    from ragline.server.engine import Engine

    store = opened_store(args)
    location = index_location(args)
    if store is not None:
        index, builtin = store[0], False
        stderr.print(Text(f"{verb} {store[1]}", style="dim"))
    elif location is not None:
        index, builtin = Index.open(location), False
    else:
        from ragline.corpora.builtin import orrin_index

        index, _ = orrin_index()
        builtin = True
        stderr.print(
            Text(
                f"{verb} the built-in Orrin Grid demo corpus ({index.path}): no --index, $RAGLINE_INDEX "
                "or ./ragline-index",
                style="yellow",
            )
        )
    config = query_config(args, index)
    checker = stale_files if freshness and not builtin and isinstance(index, Index) else None
    return Engine(index, config, builtin=builtin, stale_files=checker)


def key_ring(path: str) -> Any:
    """The keys of the keys file ``path``; a missing file or one without a live key is an error."""
    from ragline.server.keys import KeyRing

    if not Path(path).is_file():
        raise ConfigError(
            f"--keys {path}: no such file; make it with `ragline keys add NAME --groups all --keys {path}`"
        )
    keys = KeyRing(path)
    if not len(keys):
        raise ConfigError(f"--keys {path} has no live key: add one with `ragline keys add NAME --groups ...`")
    return keys


def required_keys(args: argparse.Namespace) -> Any:
    """``--keys``'s key ring; serving without one is an error."""
    if not args.keys:
        raise ConfigError(
            "ragline serve needs --keys FILE: nothing answers without a key. Make one with "
            "`ragline keys add NAME --groups all --keys FILE`"
        )
    return key_ring(args.keys)


def build_server(args: argparse.Namespace) -> Any:
    """The app ``args`` describe: the index rule of `ask`, the pipeline config, the keys file, the limits."""
    from ragline.server.app import create_app
    from ragline.server.shapes import ServerSettings

    keys = required_keys(args)
    engine = served_engine(args, "serving")
    settings = ServerSettings(
        max_body_bytes=int(args.max_body_mb * 1024 * 1024),
        timeout_s=args.timeout,
        rate_per_minute=args.rate_limit,
        cors_origins=tuple(args.cors_origin or ()),
        eval_root=Path(args.eval_root) if args.eval_root else None,
    )
    return create_app(engine, keys, settings)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ragline.server.logs import configure

    configure(args.log_level)
    if args.workers > 1:
        return _serve_workers(args)
    app = build_server(args)
    _announce(args)
    uvicorn.run(app, host=args.host, port=args.port, log_config=None, access_log=False, timeout_keep_alive=5)
    return 0


def _announce(args: argparse.Namespace) -> None:
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        stderr.print(
            Text(f"listening on {args.host}: this server speaks plain HTTP; put TLS in front of it", style="yellow")
        )
    workers = f", {args.workers} worker processes" if args.workers > 1 else ""
    stderr.print(f"ragline serve: http://{args.host}:{args.port}/ (API docs at /docs{workers})")


def _serve_workers(args: argparse.Namespace) -> int:
    """``--workers N``: uvicorn's worker processes, each building the app from these arguments
    (``ragline.server.workers``), the rate limits counted in one file they all open."""
    import os
    import tempfile

    import uvicorn

    from ragline.server.workers import worker_environment

    required_keys(args)  # a missing keys file or store fails here, once, before any worker starts
    opened = opened_store(args)
    if opened is not None:
        opened[0].close()
    with tempfile.TemporaryDirectory(prefix="ragline-serve-") as tmp:
        os.environ.update(worker_environment(args, Path(tmp) / "limits.sqlite"))
        _announce(args)
        uvicorn.run(
            "ragline.server.workers:app",
            factory=True,
            workers=args.workers,
            host=args.host,
            port=args.port,
            log_config=None,
            access_log=False,
            timeout_keep_alive=5,
        )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="HTTP API, OpenAI-compatible endpoint and web page (needs --keys)",
        description="Serve one index over HTTP: ask (streamed), search, documents, status, "
        "indexing and eval runs, /v1/chat/completions, and a page at /. The index is --index, else "
        "$RAGLINE_INDEX, else ./ragline-index, else the built-in Orrin Grid demo index.",
    )
    p.add_argument("--index", help="index directory (default: $RAGLINE_INDEX, else ./ragline-index)")
    add_store_flag(p, "serve")
    p.add_argument("--keys", metavar="FILE", help="API keys file from `ragline keys add` (required)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (8000)")
    p.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help="worker processes (1); each loads the pipeline, keys and rate limits are shared between them",
    )
    p.add_argument("--reader", metavar="SPEC", help="override the config's reader, e.g. extractive")
    p.add_argument("--retriever", metavar="SPEC", help="override the config's retriever (bm25, dense, hybrid)")
    p.add_argument(
        "--rate-limit", type=float, default=120.0, metavar="N", help="requests a minute per key (120; 0: off)"
    )
    p.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds a request may take (120)")
    p.add_argument("--max-body-mb", type=float, default=10.0, metavar="MB", help="largest request body (10)")
    p.add_argument("--cors-origin", action="append", metavar="URL", help="allow this browser origin (off by default)")
    p.add_argument("--eval-root", metavar="DIR", help="datasets the API may run `ragline eval` on (off without it)")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    add_config_flag(p, "pipelines/default.toml (hybrid retrieval, the rule then the span reader read 5 sources)")
    p.set_defaults(func=cmd_serve)
