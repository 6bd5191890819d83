"""``make regress``: run the figure regressions of ``benchmarks/regressions/*.toml`` and check each value.

Each TOML file is one figure family: the command that produces a JSON result (as BENCHMARKS.md quotes it:
``ragline ...`` or ``python benchmarks/...``, with ``{bench}`` for the benchmark data folder and ``{work}`` for
a scratch folder of this run), optional ``setup`` commands run before it, the dataset, the tier, the published
result file, and one ``[[check]]`` per figure: a ``path`` into the JSON, the ``expected`` value and how far the
value may move (``tolerance``, absolute, for deterministic effectiveness; ``ratio = [low, high]`` of
value / expected, for speed), with the published ``reference`` where there is one.

Tiers: ``ci`` (seconds to a minute each from an empty cache; ``make test`` runs it), ``nightly`` (minutes;
``make regress`` runs ci and nightly), ``manual`` (training, or longer than ~15 minutes; ``make regress
TIER=manual``), ``all``. The runner prints a pass/fail table with the drift, writes a result JSON with
provenance (``--results``, default ``benchmarks/results/regressions/``: ``TIER.json`` for the run and
``NAME.json``, the latest values of each regression), and exits 1 when a check fails; a failed check names
the command that reproduces it. ``--check-published`` checks the expected values against the published result
files instead of running anything (seconds); ``--markdown`` prints BENCHMARKS.md's generated tables.

Path syntax: dot-separated keys (``results.0.metrics.ndcg@10``); ``[key=value]`` picks the one element of a
list whose ``key`` equals ``value`` (``results[retriever=hybrid].metrics.ndcg@10``; the value may hold ``=``,
``,`` and ``.``); ``[key=value&key2=value2]`` needs both; ``[N]`` picks element N.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import ROOT, bench_root, command_argv

REGRESSIONS = ROOT / "benchmarks" / "regressions"
RESULTS = ROOT / "benchmarks" / "results" / "regressions"
TIERS = ("ci", "nightly", "manual")
RUN_TIERS = {"ci": ("ci",), "nightly": ("ci", "nightly"), "manual": ("manual",), "all": TIERS}


class RegressionError(ValueError):
    """A regression file that cannot be read, named with its file and field."""


@dataclass(frozen=True)
class Check:
    figure: str
    path: str
    expected: float
    tolerance: float | None = None
    ratio: tuple[float, float] | None = None
    reference: str = ""

    def ok(self, value: float) -> bool:
        if self.ratio is not None:
            low, high = self.ratio
            return self.expected != 0 and low <= value / self.expected <= high
        return math.isclose(value, self.expected, rel_tol=0.0, abs_tol=self.tolerance or 0.0)

    def band(self) -> str:
        if self.ratio is not None:
            return f"x{self.ratio[0]:g}..x{self.ratio[1]:g}"
        return "exact" if not self.tolerance else f"±{self.tolerance:g}"


@dataclass(frozen=True)
class Regression:
    name: str
    title: str
    tier: str
    dataset: str
    command: str
    checks: tuple[Check, ...]
    setup: tuple[str, ...] = ()
    published: str | None = None
    notes: str = ""
    source: Path = field(default=Path(), compare=False)

    def needs_bench(self) -> bool:
        return any("{bench}" in c for c in (*self.setup, self.command))


def _field(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str, default: Any = ...) -> Any:
    if key not in data:
        if default is ...:
            raise RegressionError(f"{where}: missing field `{key}`")
        return default
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise RegressionError(f"{where}: field `{key}` must be {kind}, got {value!r}")
    return value


def _check(data: dict[str, Any], where: str) -> Check:
    ratio = _field(data, "ratio", list, where, None)
    tolerance = _field(data, "tolerance", (int, float), where, None)
    if (ratio is None) == (tolerance is None):
        raise RegressionError(f"{where}: give exactly one of `tolerance` (absolute) or `ratio` ([low, high])")
    if ratio is not None and (len(ratio) != 2 or not all(isinstance(r, int | float) for r in ratio)):
        raise RegressionError(f"{where}: field `ratio` must be two numbers [low, high], got {ratio!r}")
    return Check(
        figure=_field(data, "figure", str, where),
        path=_field(data, "path", str, where),
        expected=float(_field(data, "expected", (int, float), where)),
        tolerance=None if tolerance is None else float(tolerance),
        ratio=None if ratio is None else (float(ratio[0]), float(ratio[1])),
        reference=_field(data, "reference", str, where, ""),
    )


def load(path: Path) -> Regression:
    """One regression file; a :class:`RegressionError` names the file and the field that is wrong."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise RegressionError(f"{path.name}: not TOML: {exc}") from exc
    where = path.name
    tier = _field(data, "tier", str, where)
    if tier not in TIERS:
        raise RegressionError(f"{where}: field `tier` must be one of {', '.join(TIERS)}, got {tier!r}")
    checks = _field(data, "check", list, where)
    if not checks:
        raise RegressionError(f"{where}: no [[check]]")
    return Regression(
        name=path.stem,
        title=_field(data, "title", str, where),
        tier=tier,
        dataset=_field(data, "dataset", str, where),
        command=_field(data, "command", str, where),
        checks=tuple(_check(c, f"{where} check {i + 1}") for i, c in enumerate(checks)),
        setup=tuple(_field(data, "setup", list, where, [])),
        published=_field(data, "published", str, where, None),
        notes=_field(data, "notes", str, where, ""),
        source=path,
    )


def load_all(folder: Path = REGRESSIONS, tier: str = "all") -> list[Regression]:
    """The regressions of ``folder`` in the tiers ``tier`` runs, by file name."""
    wanted = RUN_TIERS[tier]
    return [r for r in map(load, sorted(folder.glob("*.toml"))) if r.tier in wanted]


_STEP = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]|(\.)")


def lookup(data: Any, path: str) -> Any:
    """The value at ``path`` (see the module docstring); KeyError names the step that is missing."""
    value = data
    for match in _STEP.finditer(path):
        key, selector, _dot = match.groups()
        if key is not None:
            if isinstance(value, list) and key.isdigit():
                value = value[int(key)]
            elif isinstance(value, dict) and key in value:
                value = value[key]
            else:
                raise KeyError(f"{path}: no `{key}`")
        elif selector is not None:
            value = _select(value, selector, path)
    return value


def _select(value: Any, selector: str, path: str) -> Any:
    if not isinstance(value, list):
        raise KeyError(f"{path}: [{selector}] applied to a {type(value).__name__}, not a list")
    if selector.isdigit():
        return value[int(selector)]
    wanted = [term.partition("=")[::2] for term in selector.split("&")]
    hits = [item for item in value if isinstance(item, dict) and all(str(item.get(k)) == v for k, v in wanted)]
    if len(hits) != 1:
        raise KeyError(f"{path}: [{selector}] matched {len(hits)} elements, not 1")
    return hits[0]


def last_json(stdout: str) -> dict[str, Any]:
    """The JSON result a command printed: its last line that parses as a JSON object (or all of stdout).

    ``ragline eval`` with one retriever prints that retriever's ``metrics`` at the top level, with several a
    ``results`` list: the first is read as a one-row list, so one path serves both."""
    result = None
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):
                result = json.loads(line)
            break
    if result is None:
        result = json.loads(stdout)
    if "results" not in result and isinstance(result.get("retriever"), str) and "metrics" in result:
        result = {**result, "results": [{"retriever": result["retriever"], "metrics": result["metrics"]}]}
    return result


@dataclass
class Outcome:
    regression: Regression
    status: str  # pass, fail, error, skip
    seconds: float = 0.0
    values: list[Any] = field(default_factory=list)
    message: str = ""
    output: dict[str, Any] | None = None

    def check_rows(self) -> list[dict[str, Any]]:
        rows = []
        for check, value in zip(self.regression.checks, self.values or [None] * len(self.regression.checks)):
            ok = isinstance(value, int | float) and check.ok(float(value))
            drift = float(value) - check.expected if isinstance(value, int | float) else None
            rows.append({"figure": check.figure, "path": check.path, "expected": check.expected, "band": check.band(),
                         "value": value, "drift": drift, "ok": ok})  # fmt: skip
        return rows


def evaluate(regression: Regression, output: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """Each check's value in ``output`` and a line per failed check."""
    values, failures = [], []
    for check in regression.checks:
        try:
            value = lookup(output, check.path)
        except (KeyError, IndexError) as exc:
            values.append(None)
            failures.append(f"{check.figure}: {exc}")
            continue
        values.append(value)
        if not isinstance(value, int | float) or not check.ok(float(value)):
            failures.append(f"{check.figure}: {value!r}, expected {check.expected:g} ({check.band()})")
    return values, failures


def reproduce(regression: Regression) -> str:
    """The commands that reproduce a regression's figure, with ``{bench}`` filled in as RAGLINE_BENCH."""
    steps = [*regression.setup, regression.command]
    return " && ".join(s.replace("{bench}", "$RAGLINE_BENCH").replace("{work}", "/tmp/regress") for s in steps)


def run_one(regression: Regression, work: Path) -> Outcome:
    """Run one regression's setup and command in the repository and check its output."""
    if regression.needs_bench() and not bench_root().is_dir():
        return Outcome(regression, "skip", message=f"no benchmark data at {bench_root()} (set RAGLINE_BENCH)")
    scratch = work / regression.name
    scratch.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for command in (*regression.setup, regression.command):
        done = subprocess.run(command_argv(command, work=str(scratch)), cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-5:]
            return Outcome(regression, "error", time.perf_counter() - started,
                           message=f"exit {done.returncode}: {' | '.join(tail)}")  # fmt: skip
    seconds = time.perf_counter() - started
    try:
        output = last_json(done.stdout)
    except json.JSONDecodeError:
        return Outcome(regression, "error", seconds, message="the command printed no JSON result")
    values, failures = evaluate(regression, output)
    return Outcome(regression, "fail" if failures else "pass", seconds, values, "; ".join(failures), output)


def check_published(regression: Regression) -> Outcome:
    """Check the expected values against the published result file (nothing is run)."""
    if regression.published is None:
        return Outcome(regression, "skip", message="no published result file")
    path = ROOT / regression.published
    if not path.is_file():
        return Outcome(regression, "error", message=f"published result {regression.published} not found")
    output = last_json(path.read_text(encoding="utf-8"))
    values, failures = evaluate(regression, output)
    return Outcome(regression, "fail" if failures else "pass", 0.0, values, "; ".join(failures), output)


def _fmt(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e6:
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 1000 else f"{value:,.0f}"
    return "-" if value is None else str(value)


def table(outcomes: list[Outcome]) -> str:
    """The pass/fail table: one row per check, with its drift from the expected value."""
    lines = [f"{'status':6}  {'regression':28} {'figure':58} {'value':>10} {'expected':>10} {'drift':>9}  band"]
    for outcome in outcomes:
        if outcome.status in ("skip", "error"):
            lines.append(f"{outcome.status.upper():6}  {outcome.regression.name:28} {outcome.message}")
            continue
        for row in outcome.check_rows():
            drift = "-" if row["drift"] is None else f"{row['drift']:+.4f}"
            status = "pass" if row["ok"] else "FAIL"
            lines.append(f"{status:6}  {outcome.regression.name:28} {row['figure'][:58]:58} {_fmt(row['value']):>10} "
                         f"{_fmt(row['expected']):>10} {drift:>9}  {row['band']}")  # fmt: skip
    return "\n".join(lines)


def failures_report(outcomes: list[Outcome]) -> list[str]:
    """One paragraph per failed or broken regression: what moved, and the command that reproduces it."""
    out = []
    for outcome in outcomes:
        if outcome.status in ("fail", "error"):
            reg = outcome.regression
            out.append(f"REGRESSION {reg.name} ({reg.title}) {outcome.status.upper()}: {outcome.message}\n"
                       f"  reproduce: {reproduce(reg)}\n  file: benchmarks/regressions/{reg.source.name}")  # fmt: skip
    return out


def record(outcome: Outcome) -> dict[str, Any]:
    reg = outcome.regression
    return {"regression": reg.name, "title": reg.title, "tier": reg.tier, "dataset": reg.dataset,
            "command": reg.command, "setup": list(reg.setup), "status": outcome.status,
            "seconds": round(outcome.seconds, 1), "message": outcome.message, "checks": outcome.check_rows(),
            "output_provenance": (outcome.output or {}).get("provenance")}  # fmt: skip


def save(outcomes: list[Outcome], tier: str, results: Path) -> Path:
    """``results/TIER.json`` for the whole run, and ``results/NAME.json`` for each regression that ran."""
    from ragline.provenance import provenance

    results.mkdir(parents=True, exist_ok=True)
    finished = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    stamp = provenance(None, tier=tier, bench=bench_root().name, finished=finished)
    for outcome in outcomes:
        if outcome.status in ("pass", "fail"):
            body = {**record(outcome), "provenance": stamp}
            (results / f"{outcome.regression.name}.json").write_text(json.dumps(body, indent=2) + "\n")
    run = {"tier": tier, "counts": _counts(outcomes), "regressions": [record(o) for o in outcomes], "provenance": stamp}
    path = results / f"{tier}.json"
    path.write_text(json.dumps(run, indent=2) + "\n")
    return path


def _counts(outcomes: list[Outcome]) -> dict[str, int]:
    return {status: sum(o.status == status for o in outcomes) for status in ("pass", "fail", "error", "skip")}


def latest_values(regression: Regression, results: Path = RESULTS) -> list[Any] | None:
    """The values of the last run of ``regression`` saved under ``results`` (None: never run there)."""
    path = results / f"{regression.name}.json"
    if not path.is_file():
        return None
    return [row["value"] for row in json.loads(path.read_text(encoding="utf-8"))["checks"]]


BEGIN = "<!-- regress:begin {name} -->"
END = "<!-- regress:end -->"
_BLOCK = re.compile(r"<!-- regress:begin (\S+) -->\n.*?<!-- regress:end -->", re.S)


def render(regression: Regression, results: Path = RESULTS) -> str:
    """A regression's block of BENCHMARKS.md: its command, then a row per figure with the expected value, the
    band, the latest measured value (the last run saved under ``results``, else the published file's) and the
    published reference. Generated: edit the regression file, not the block."""
    reg = regression
    latest = latest_values(reg, results)
    source = f"`benchmarks/results/regressions/{reg.name}.json`"
    if latest is None and reg.published and (ROOT / reg.published).is_file():
        latest, source = check_published(reg).values, f"`{reg.published}`"
    latest = latest or [None] * len(reg.checks)
    lines = [BEGIN.format(name=reg.name),
             f"**{reg.title}** (`{reg.name}`, tier {reg.tier}, {reg.dataset}): `{reproduce(reg)}`; latest: {source}",
             "", "| figure | expected | band | latest | reference |", "|---|---:|---|---:|---|"]  # fmt: skip
    for check, value in zip(reg.checks, latest):
        cells = [check.figure, _fmt(check.expected), check.band(), _fmt(value), check.reference]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join([*lines, END])


def render_all(regressions: list[Regression], results: Path = RESULTS) -> str:
    return "\n\n".join(render(r, results) for r in regressions) + "\n"


def update_markdown(text: str, regressions: list[Regression], results: Path = RESULTS) -> str:
    """``text`` (BENCHMARKS.md) with each regression's block regenerated in place; a regression without a block
    gets one after the last block. Nothing outside the markers changes."""
    blocks = {r.name: render(r, results) for r in regressions}
    text = _BLOCK.sub(lambda m: blocks.get(m.group(1), m.group(0)), text)
    present = set(_BLOCK_NAMES.findall(text))
    missing = [blocks[r.name] for r in regressions if r.name not in present]
    if missing:
        ends = [m.end() for m in _BLOCK.finditer(text)]
        if not ends:
            raise RegressionError("BENCHMARKS.md has no regress:begin block to add the new ones after")
        at = ends[-1]
        text = text[:at] + "".join(f"\n\n{b}" for b in missing) + text[at:]
    return text


_BLOCK_NAMES = re.compile(r"<!-- regress:begin (\S+) -->")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tier", choices=sorted(RUN_TIERS), default="nightly", help="tier (default nightly)")
    parser.add_argument("--only", action="append", help="run just this regression (file stem; repeatable)")
    parser.add_argument("--regressions", type=Path, default=REGRESSIONS, help="folder of regression files")
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder for the result JSON")
    parser.add_argument("--check-published", action="store_true", help="check the published result files; run nothing")
    parser.add_argument("--markdown", action="store_true", help="print BENCHMARKS.md's generated tables and exit")
    parser.add_argument("--write-markdown", type=Path, metavar="MD", help="regenerate the tables in MD and exit")
    parser.add_argument("--list", action="store_true", help="list the regressions of the tier and exit")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tier = "all" if args.markdown or args.write_markdown else args.tier
    try:
        regressions = [r for r in load_all(args.regressions, tier) if not args.only or r.name in args.only]
    except RegressionError as exc:
        print(f"regress: {exc}", file=sys.stderr)
        return 2
    if args.markdown:
        print(render_all(regressions, args.results), end="")
        return 0
    if args.write_markdown:
        args.write_markdown.write_text(update_markdown(args.write_markdown.read_text(), regressions, args.results))
        return 0
    if args.list:
        for reg in regressions:
            print(f"{reg.tier:8} {reg.name:28} {reproduce(reg)}")
        return 0
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="regress-") as work:
        for reg in regressions:
            print(f"[regress] {reg.name}: {reproduce(reg)}", file=sys.stderr, flush=True)
            outcomes.append(check_published(reg) if args.check_published else run_one(reg, Path(work)))
    print(table(outcomes))
    for paragraph in failures_report(outcomes):
        print(paragraph)
    if not args.check_published:
        print(f"[regress] results: {save(outcomes, args.tier, args.results)}", file=sys.stderr)
    counts = _counts(outcomes)
    print(f"[regress] {args.tier}: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    return 1 if counts["fail"] or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
