"""``ragline doctor``: probe the failure modes of the lecture notes on a pipeline config."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from ragline.cli.common import emit_json, opened_store
from ragline.errors import ConfigError, InputError
from ragline.progress import stderr

DEFAULT_CONFIG = "recommended"


def probe_list() -> str:
    """The registered probes, one line each (``--help``), and why each that cannot run on a store cannot."""
    from ragline.doctor.runner import all_probes

    def item(name: str, text: str) -> str:
        return textwrap.fill(f"{name}: {text}", 100, initial_indent="  ", subsequent_indent="    ")

    lines = [item(probe.name, component_summary(probe.name)) for probe in all_probes()]
    lines += ["", "On a store other than the embedded index (--store milvus://...), these do not run:"]
    lines += [item(probe.name, probe.embedded_only) for probe in all_probes() if probe.embedded_only]
    return "\n".join(lines)


def component_summary(name: str) -> str:
    from ragline.components import component

    return component("probe", name).summary


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="probe the failure modes of RAG (recall ceiling, stale index, leaks, ...) on a pipeline config",
        description=textwrap.fill(
            "Each probe measures the unfixed and the fixed arm on the same questions and judges the "
            "configured pipeline with a confidence interval. Exits 0 once every probe ran (--fail-on-flag: 1 when "
            'any flags). This is the only command that runs [retrieve] filter = "after".',
            100,
        )
        + "\n\nprobes (registered: role probe):\n"
        + probe_list(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--config",
        metavar="FILE|NAME",
        default=DEFAULT_CONFIG,
        help=f"pipeline config under examination (default: {DEFAULT_CONFIG})",
    )
    p.add_argument(
        "--probes",
        metavar="FILE",
        help="probe file: questions, gold documents, principals (default: the built-in Orrin Grid one)",
    )
    p.add_argument(
        "--store",
        metavar="URI",
        help="run the probes on this collection instead of an index built from the probe file's documents: "
        "milvus://[user:password@]HOST:PORT/NAME, file://PATH or a folder, holding those documents (`ragline index "
        "DIR --store URI`); on a store other than the embedded index the probes listed above as such do not run",
    )
    p.add_argument("--only", metavar="NAMES", help="comma-separated probe names (default: all)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: a few questions of each type (its verdicts rest on small samples; not for a decision)",
    )
    p.add_argument(
        "--llm",
        metavar="SPEC",
        help="the LLM lost in the middle reads with when the configured reader is no LLM, e.g. "
        "openai:http://HOST:PORT/v1?model=NAME (default: the probe file's order_reader, the local LLM)",
    )
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown report here")
    p.add_argument("--html", metavar="FILE", help="write the self-contained HTML report (with plots) here")
    p.add_argument("--output", choices=("table", "json"), default="table", help="json: one line on stdout")
    p.add_argument("--fail-on-flag", action="store_true", help="exit 1 when any probe flags (for CI)")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from ragline.config import load_config
    from ragline.doctor.base import absent_gold
    from ragline.doctor.probefile import load_probe_file
    from ragline.doctor.report import html_page, markdown
    from ragline.doctor.runner import all_probes, run_doctor
    from ragline.index import Index
    from ragline.specs import format_spec

    wanted = {n.strip() for n in args.only.split(",") if n.strip()} if args.only else None
    unknown = sorted((wanted or set()) - {probe.name for probe in all_probes()})
    if unknown:  # before any work: a misspelt name would otherwise run nothing and report nothing
        names = ", ".join(repr(probe.name) for probe in all_probes())
        raise ConfigError(f"--only: no probe named {', '.join(map(repr, unknown))}; the probes are {names}")
    config = load_config(args.config)  # any filter placement: the doctor measures the unsafe one too
    probes = load_probe_file(args.probes)
    if args.llm:
        probes.order_reader = format_spec("llm", {"model": args.llm})
    store, store_name = opened_store(args) or (None, "")
    if store is not None:
        absent = absent_gold(store, probes)
        gold = {d for q in probes.questions for d in q.gold_doc_ids}
        if gold and len(absent) == len(gold):
            raise InputError(
                store_name,
                f"holds none of the probe file's {len(gold)} gold documents (e.g. {absent[0]!r}): index the "
                "probe file's documents into it first (ragline index DIR --store URI)",
            )
        refused = [p.name for p in all_probes() if p.embedded_only and wanted and p.name in wanted]
        if refused and not isinstance(store, Index):
            raise ConfigError(f"--only: {', '.join(map(repr, refused))} cannot run on {store_name} (see --help)")
        if absent:
            stderr.print(f"warning: {store_name} lacks {len(absent)} of {len(gold)} gold documents", markup=False)
    result = run_doctor(
        config,
        probes,
        log=lambda s: stderr.print(s, markup=False),
        only=None if wanted is None else wanted.__contains__,
        quick=args.quick,
        store=store,
        store_name=store_name,
    )
    if args.markdown:
        Path(args.markdown).write_text(markdown(result), encoding="utf-8")
    if args.html:
        Path(args.html).write_text(html_page(result), encoding="utf-8")
    if args.output == "json":
        emit_json(result)
    else:
        print(markdown(result), end="")
    flagged = any(p["status"] == "flag" for p in result["probes"])
    return 1 if args.fail_on_flag and flagged else 0
