"""Error accumulation: multi-hop questions, from the agent's traces.

*Unfixed*: the agent with no grader gate (threshold 0: every hop accepted, a wrong first hop carries
on) and no self-check of a hop's answer, its stopping limits those of the fixed arm (so that this probe
sees hops, not loops: missing stopping rules are ``stopping``'s probe); *fixed*: the agent of
``pipelines/agent.toml`` (grader threshold, escalation, the hop check: a bridge its sentence does not
support is re-retrieved or abstained on); *configured*: the configured reader (single-shot when it is
no agent). The failure is a confident wrong final answer (a wrong hop carried on) where the gate would
have abstained or recovered. Rule: ``paired_rule`` on "not wrong" (correct or abstained), with the
correct rates beside it.
"""

from __future__ import annotations

import time

from ragline.components import register
from ragline.doctor.base import DoctorRun, Probe, ProbeResult, cannot_run, compared, outcomes
from ragline.doctor.stopping import agent_reader

NAME = "error accumulation"
FIX = "the multi-hop agent: a grader gate and a support check of each hop's answer (pipelines/agent.toml)"


def run(r: DoctorRun) -> ProbeResult:
    started = time.perf_counter()
    questions = r.probes.of_type("multihop")
    if not questions:
        return cannot_run(NAME, FIX, "no multihop question in the probe file")
    unfixed = outcomes(r.pipeline(read={"reader": agent_reader(threshold=0.0, retries=0, hop_check=False)}), questions)
    fixed = outcomes(r.pipeline(read={"reader": agent_reader()}), questions)
    configured = outcomes(r.pipeline(), questions)
    return compared(NAME, FIX, "multi-hop questions", unfixed, fixed, configured, started, not_wrong=True)


@register("probe", "error accumulation")
def probe() -> Probe:
    """Confident wrong multi-hop answers, the ungated agent against the gated one with its hop check."""
    return Probe(NAME, run, rank=70, fix=FIX)
