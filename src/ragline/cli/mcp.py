"""``ragline mcp``: the index as tools for an assistant, over the Model Context Protocol (ragline.server.mcp_tools).

The server acts as one principal, named when it starts: ``--groups``, ``--principals FILE --as USER``, or
``--keys FILE`` with the key in ``$RAGLINE_API_KEY`` (so it stays out of the process list). Over stdio
(the default) stdout carries the protocol alone; progress and warnings go to stderr.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from rich.text import Text

from ragline.cli.common import add_config_flag, add_principal_flags, add_store_flag, principal_of
from ragline.cli.serve import key_ring, served_engine
from ragline.errors import ConfigError
from ragline.principals import ANYONE, Principal
from ragline.progress import stderr

KEY_ENV = "RAGLINE_API_KEY"
WHO = "give --groups G, --principals FILE --as USER, or --keys FILE (with the key in $RAGLINE_API_KEY)"


def mcp_principal(args: argparse.Namespace) -> Principal:
    """The one principal this server acts as; there is no unrestricted default."""
    if args.keys:
        if args.groups is not None or args.group or args.as_user:
            raise ConfigError(f"--keys names the principal: give it alone, not with --groups or --as ({WHO})")
        keys = key_ring(args.keys)
        entry = keys.authenticate(os.environ.get(KEY_ENV))
        if entry is None:
            raise ConfigError(f"--keys {args.keys}: ${KEY_ENV} is missing, wrong or revoked")
        return entry.principal
    principal = principal_of(args)
    if principal is ANYONE:
        raise ConfigError(f"ragline mcp acts as one principal: {WHO}")
    return principal


def cmd_mcp(args: argparse.Namespace) -> int:
    from ragline.server.mcp_tools import build_mcp

    principal = mcp_principal(args)
    # No freshness check: its list of changed files would name documents this principal may not read.
    engine = served_engine(args, "answering from", freshness=False)
    server = build_mcp(engine, principal)
    groups = ", ".join(principal.groups or ())
    if args.transport == "stdio":
        stderr.print(f"ragline mcp: stdio, as {principal.name} (groups {groups})")
        server.run("stdio")
    else:
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            stderr.print(
                Text(
                    f"listening on {args.host}: whoever reaches this port acts as {principal.name} (no per-request "
                    "key), over plain HTTP",
                    style="yellow",
                )
            )
        stderr.print(f"ragline mcp: http://{args.host}:{args.port}/mcp, as {principal.name} (groups {groups})")
        server.run("streamable-http", host=args.host, port=args.port)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="tools (search, ask, lookup, status) for an assistant over MCP, as one principal",
        description="Serve one index to an assistant over the Model Context Protocol: tools search, ask, lookup "
        "and status, and a resource per document (ragline://documents/{doc_id}), acting as one principal. The "
        "index is --index, else $RAGLINE_INDEX, else ./ragline-index, else the built-in Orrin Grid demo index.",
    )
    p.add_argument("--index", help="index directory (default: $RAGLINE_INDEX, else ./ragline-index)")
    add_store_flag(p, "answer from")
    p.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio", help="stdio (default) or HTTP")
    p.add_argument("--host", default="127.0.0.1", help="address for streamable-http (127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port for streamable-http (8000)")
    p.add_argument("--keys", metavar="FILE", help=f"act as the key in ${KEY_ENV}, from this keys file")
    add_principal_flags(p, "act")
    p.add_argument("--reader", metavar="SPEC", help="override the config's reader, e.g. extractive")
    p.add_argument("--retriever", metavar="SPEC", help="override the config's retriever (bm25, dense, hybrid)")
    add_config_flag(p, "pipelines/default.toml (hybrid retrieval, the rule then the span reader read 5 sources)")
    p.set_defaults(func=cmd_mcp)
