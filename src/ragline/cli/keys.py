"""``ragline keys add|list|revoke``: the API keys of ``ragline serve`` (digests in a keys file)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragline.cli.common import emit_json
from ragline.progress import stderr


def cmd_keys(args: argparse.Namespace) -> int:
    from ragline.server.keys import add_key, read_keys, revoke_key

    if args.action == "add":
        groups = [g.strip() for g in (args.groups or "").split(",") if g.strip()]
        key = add_key(args.keys, args.name, groups, admin=args.admin)
        sys.stdout.write(key + "\n")  # alone on stdout, once: only its digest is stored
        stderr.print(
            Text(
                f"key for {args.name} (groups {', '.join(groups)}{', admin' if args.admin else ''}) "
                f"added to {args.keys}; it is shown only now",
                style="dim",
            )
        )
        return 0
    if args.action == "revoke":
        count = revoke_key(args.keys, args.name)
        stderr.print(f"revoked {count} key(s) named {args.name} in {args.keys}")
        return 0
    entries = [k.public() for k in read_keys(args.keys)]
    if args.output == "json":
        emit_json({"keys": entries})
        return 0
    table = Table(title=Text(f"{len(entries)} keys in {args.keys}"))
    for column in ("name", "groups", "admin", "created", "revoked"):
        table.add_column(column)
    for k in entries:
        table.add_row(
            k["name"], ", ".join(k["groups"]), "yes" if k["admin"] else "", k["created_at"], k["revoked_at"] or ""
        )
    Console().print(table)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "keys",
        help="API keys of `ragline serve`: add (printed once), list, revoke",
        description="Each key maps to a principal (its name and ACL groups); the keys file holds SHA-256 digests only.",
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="make a key for NAME and print it (alone on stdout, once)")
    add.add_argument("name")
    add.add_argument("--groups", required=True, help="the ACL groups the key's principal reads, e.g. all,hr")
    add.add_argument("--admin", action="store_true", help="may also index documents and start eval runs")
    listing = actions.add_parser("list", help="the keys (names, groups, rights; never the keys)")
    listing.add_argument("--output", choices=("table", "json"), default="table")
    revoke = actions.add_parser("revoke", help="revoke the keys named NAME (a running server stops accepting them)")
    revoke.add_argument("name")
    for action in (add, listing, revoke):
        action.add_argument("--keys", required=True, metavar="FILE", help="the keys file (created by the first add)")
        action.set_defaults(func=cmd_keys)
