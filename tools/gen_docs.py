"""Write the generated reference pages of the docs site: ``docs/cli.md`` and ``docs/config.md``.

    python tools/gen_docs.py          # rewrite both pages (``make docs-gen``)
    python tools/gen_docs.py --check  # exit 1 when a page differs from what the code generates

``docs/cli.md`` is every command's ``--help``, from the argparse parsers themselves (``ragline.cli``);
``docs/config.md`` is every key of a pipeline config (``ragline.config``: default and the comment beside the
field) and, for keys that name components, the registered components of that role with the first line of
their docstrings (``ragline.components``). A test runs ``--check``, so a new flag or component that is not in
the docs fails ``make test`` until the pages are regenerated.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
WIDTH = "100"  # argparse wraps help at $COLUMNS: fixed, so the page does not depend on the terminal

# (stage, key) -> the component role its spec names
ROLE_OF_KEY = {
    ("ingest", "chunker"): "chunker",
    ("ingest", "context"): "contextualizer",
    ("retrieve", "retriever"): "retriever",
    ("transform", "transforms"): "query_transform",
    ("transform", "fuser"): "fuser",
    ("rerank", "reranker"): "reranker",
    ("expand", "expander"): "expander",
    ("guard", "guard"): "guard",
    ("compress", "compressor"): "compressor",
    ("read", "reader"): "reader",
}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def cli_page() -> str:
    os.environ["COLUMNS"] = WIDTH
    from ragline.cli import COMMAND_NAMES, build_parser

    parser = build_parser()
    parser.prog = "ragline"
    out = [
        "# CLI reference",
        "",
        "Generated from the parsers' `--help` by `python tools/gen_docs.py` (`make docs-gen`); do not edit.",
        "",
        "```text",
        parser.format_help().rstrip(),
        "```",
    ]
    commands = _subparsers(parser)
    for name in sorted(COMMAND_NAMES):
        out += ["", f"## ragline {name}", "", "```text", commands[name].format_help().rstrip(), "```"]
        for child, sub in sorted(_subparsers(commands[name]).items()):
            out += ["", f"### ragline {name} {child}", "", "```text", sub.format_help().rstrip(), "```"]
    return "\n".join(out) + "\n"


def _field_comments(source: Path) -> dict[tuple[str, str], str]:
    """(class name, field name) -> the ``#`` comment on the field's line(s) in ``source``."""
    text = source.read_text(encoding="utf-8")
    lines = text.splitlines()
    comments: dict[tuple[str, str], str] = {}
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ClassDef):
            continue
        previous_end = node.lineno
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                above = [lines[i].strip() for i in range(previous_end, item.lineno - 1)]
                above = [line[1:].strip() for line in above if line.startswith("#")]
                own = lines[item.end_lineno - 1] if item.end_lineno else ""
                beside = own.split("  # ", 1)[1].strip() if "  # " in own else ""
                comment = " ".join([*above, beside]).strip()
                if comment:
                    comments[(node.name, item.target.id)] = comment
            previous_end = item.end_lineno or previous_end
    return comments


def _default(f: dataclasses.Field) -> object:  # type: ignore[type-arg]
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _toml_value(value: object) -> str:
    from ragline.config import _toml_value as toml

    return "(none)" if value is None else f"`{toml(value)}`"


def config_page() -> str:
    from ragline import components, config

    comments = _field_comments(Path(config.__file__))
    out = [
        "# Configuration reference",
        "",
        "Generated from `ragline.config` and the component registry by `python tools/gen_docs.py`",
        "(`make docs-gen`); do not edit. A pipeline file (TOML, YAML or JSON) has `schema`, `name`,",
        "`description` and one table per stage; every key has the default below. A component key takes a",
        'spec string (`"bm25:k1=0.9,b=0.4"`) or a table (`{name = "bm25", k1 = 0.9}`). The named pipelines',
        "are the files of `pipelines/` at the repository root (" + ", ".join(config.pipeline_names()) + ").",
    ]
    for stage, kind in config._STAGES.items():
        out += ["", f"## [{stage}]", "", "| key | default | meaning |", "| --- | --- | --- |"]
        for f in dataclasses.fields(kind):
            meaning = comments.get((kind.__name__, f.name), "")
            role = ROLE_OF_KEY.get((stage, f.name))
            if role:
                meaning = (meaning + "; " if meaning else "") + f"a {role.replace('_', ' ')} (below)"
            out.append(f"| `{f.name}` | {_toml_value(_default(f))} | {meaning.replace('|', '/')} |")
        for (key_stage, key), role in ROLE_OF_KEY.items():
            if key_stage != stage:
                continue
            out += ["", f"`{key}` takes a {role.replace('_', ' ')} ({components.ROLES[role][0]}):", ""]
            for name, component in sorted(components.components(role).items()):
                params, _ = components._parameters(component.factory)
                shown = ", ".join(sorted(params - {"index", "bm25", "llm", "embedder"}))
                summary = component.summary.replace("|", "/")
                out.append(f"- `{name}`" + (f" ({shown})" if shown else "") + (f": {summary}" if summary else ""))
    return "\n".join(out) + "\n"


PAGES = {"cli.md": cli_page, "config.md": config_page}


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--check", action="store_true", help="fail when a page is not what the code generates")
    check = args.parse_args(argv).check
    stale = []
    for name, make in PAGES.items():
        path = DOCS / name
        text = make()
        if check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"docs/{', docs/'.join(stale)} out of date: run `make docs-gen`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
