"""Running the doctor: every probe on one config and probe file, each probe's failure isolated."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ragline.config import PipelineConfig
from ragline.doctor import (
    conflicting_evidence,
    distractors,
    error_accumulation,
    lost_in_the_middle,
    permission_leakage,
    prompt_injection,
    recall_ceiling,
    stale_index,
)
from ragline.doctor.base import DoctorRun, Log, ProbeResult, cannot_run
from ragline.doctor.probefile import ProbeFile
from ragline.errors import RaglineError

PROBES = (
    recall_ceiling,
    stale_index,
    permission_leakage,
    lost_in_the_middle,
    distractors,
    conflicting_evidence,
    error_accumulation,
    prompt_injection,
)


def run_doctor(
    config: PipelineConfig, probes: ProbeFile, log: Log | None = None, only: Callable[[str], bool] | None = None
) -> dict[str, Any]:
    """``{"config", "probes": [...], "seconds"}``: every probe's row; one that raises is a flag with its reason."""
    started = time.perf_counter()
    run = DoctorRun(config, probes, log=log)
    rows: list[ProbeResult] = []
    for probe in PROBES:
        if only is not None and not only(probe.NAME):
            continue
        run.say(f"probe: {probe.NAME}")
        try:
            rows.append(probe.run(run))
        except (RaglineError, ValueError, RuntimeError, OSError, KeyError) as error:
            rows.append(cannot_run(probe.NAME, getattr(probe, "FIX", ""), f"{type(error).__name__}: {error}"))
        run.say(f"  {rows[-1].status}: {rows[-1].figure} ({rows[-1].seconds:.0f} s)")
    return {
        "config": config.name,
        "config_fingerprint": config.fingerprint(),
        "probe_file": probes.where,
        "probes": [row.to_dict() for row in rows],
        "seconds": round(time.perf_counter() - started, 1),
    }
