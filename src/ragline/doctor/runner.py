"""Running the doctor: every probe on one config and probe file, each probe's failure isolated."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ragline.config import PipelineConfig
from ragline.doctor.base import DoctorRun, Log, Probe, ProbeResult, cannot_run, reader_model
from ragline.doctor.probefile import ProbeFile
from ragline.errors import RaglineError

ARMS = 3  # unfixed, fixed, configured: a probe without its own ``llm_calls`` reads each question in each at most
# Seconds of one uncached LLM read for the progress line's estimate, never a limit: the weak pipeline's cold
# lost-in-the-middle arm took 437 s for 16 reads of 10 sources by the local 0.5B model, the model's first load
# included, on 2 cores at load 8-11 (BENCHMARKS.md "Doctor: nine probes, a cold first run").
SECONDS_PER_CALL = 27.0


def all_probes() -> list[Probe]:
    """Every registered probe (role ``probe`` of ``ragline.components``: one module of ``ragline.doctor`` each),
    in report order."""
    from ragline.components import build, names

    return sorted((build("probe", {"name": name}) for name in names("probe")), key=lambda probe: probe.rank)


def llm_calls(probe: Any, run: DoctorRun) -> int:
    """At most how many LLM calls ``probe`` makes on ``run`` (its own ``llm_calls``, else a bound)."""
    own = getattr(probe, "llm_calls", None)
    if own is not None:
        return int(own(run))
    return ARMS * len(run.probes.questions) * run.reader_calls_llm(run.config.read.reader)


def announce(probe: Any, run: DoctorRun) -> str:
    """The progress line before a probe: its name, and whether (and about how long) it needs the LLM."""
    calls = llm_calls(probe, run)
    if not calls:
        return f"probe: {probe.name} (no LLM)"
    minutes = calls * SECONDS_PER_CALL / 60
    return f"probe: {probe.name} (needs the LLM: up to {calls} calls, about {minutes:.0f} min if none is cached)"


def run_doctor(
    config: PipelineConfig,
    probes: ProbeFile,
    log: Log | None = None,
    only: Callable[[str], bool] | None = None,
    quick: bool = False,
    store: Any = None,
    store_name: str = "",
) -> dict[str, Any]:
    """``{"config", "probes": [...], "seconds"}``: every probe's row; one that raises is a flag with its reason.

    ``quick``: a smoke run on a few questions of each type (``ProbeFile.quick``); its verdicts rest on
    small samples, so the rules pass more often than a full run's would. ``store``: the collection the probes
    run on (``doctor --store``) instead of an index built from the probe file's documents; a probe that means
    nothing there (its ``embedded_only`` reason) is listed under ``not_run`` instead of run.
    """
    started = time.perf_counter()
    run = DoctorRun(config, probes.quick() if quick else probes, index=store, log=log, quick=quick, store=store_name)
    try:
        rows: list[ProbeResult] = []
        not_run: dict[str, str] = {}
        for probe in all_probes():
            if only is not None and not only(probe.name):
                continue
            if run.on_store and probe.embedded_only:
                not_run[probe.name] = probe.embedded_only
                continue
            run.say(announce(probe, run))
            began = time.perf_counter()
            try:
                rows.append(probe.run(run))
            except (RaglineError, ValueError, RuntimeError, OSError, KeyError) as error:
                rows.append(cannot_run(probe.name, probe.fix, f"{type(error).__name__}: {error}"))
            rows[-1].seconds = time.perf_counter() - began  # the whole probe, its failure included
            rows[-1].model = rows[-1].model or reader_model(config.read.reader)
            run.say(f"  {rows[-1].status}: {rows[-1].figure} ({rows[-1].seconds:.0f} s)")
    finally:
        run.close()
    return {
        "config": config.name,
        "config_fingerprint": config.fingerprint(),
        "probe_file": probes.where,
        "probes": [row.to_dict() for row in rows],
        "seconds": round(time.perf_counter() - started, 1),
        "quick": quick,
    } | ({"store": store_name, "not_run": not_run} if store_name else {})
