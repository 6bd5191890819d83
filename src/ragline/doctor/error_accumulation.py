"""Error accumulation and stopping rules: multi-hop questions, from the agent's traces.

*Unfixed*: the agent with no grader gate (threshold 0: every hop accepted, a wrong first hop carries
on), no self-check of a hop's answer and no stopping limit beyond a hard safety cap; *fixed*: the agent
of ``pipelines/agent.toml`` (grader threshold, escalation, the hop check: a bridge its sentence does not
support is re-retrieved or abstained on, retrieval and model-call limits); *configured*: the configured reader
(single-shot when it is no agent). The failure is a confident wrong final answer (a wrong hop carried
on) where the gate would have abstained or recovered. Rule: ``paired_rule`` on "not wrong" (correct or
abstained), with the correct rates beside it.
"""

from __future__ import annotations

import time

from ragline.doctor.base import DoctorRun, ProbeResult, cannot_run, compared, outcomes

NAME = "error accumulation + stopping"
FIX = "the multi-hop agent: a grader gate, a support check of each hop's answer, stopping limits (pipelines/agent.toml)"
SAFETY_CAP = {"max_hops": 6, "max_retrievals": 60, "max_model_calls": 60, "max_tokens": 100_000, "max_seconds": 600.0}


def _agent(**settings):  # type: ignore[no-untyped-def]
    from ragline.config import load_config

    base = load_config("agent").read.reader
    return {**(base if isinstance(base, dict) else {"name": "agent"}), **settings}


def run(r: DoctorRun) -> ProbeResult:
    started = time.perf_counter()
    questions = r.probes.of_type("multihop")
    if not questions:
        return cannot_run(NAME, FIX, "no multihop question in the probe file")
    unfixed_agent = _agent(threshold=0.0, retries=0, hop_check=False, **SAFETY_CAP)
    unfixed = outcomes(r.pipeline(read={"reader": unfixed_agent}), questions)
    fixed = outcomes(r.pipeline(read={"reader": _agent()}), questions)
    configured = outcomes(r.pipeline(), questions)
    return compared(NAME, FIX, "multi-hop questions", unfixed, fixed, configured, started, not_wrong=True)
