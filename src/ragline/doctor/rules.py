"""Pass rules of the doctor's probes: confidence intervals, never a bare threshold.

Two rules, each documented in the report beside its probe:

* ``paired_rule`` (quality probes): per question, a score of the fixed arm and of the configured
  pipeline on the same questions. The probe **flags** when the 95% paired bootstrap interval of the
  mean difference (fixed - configured) lies wholly above zero: the fix would help this pipeline by
  more than question-sampling noise explains. An interval that touches zero **passes**.
* ``curtailed`` (sampling): a probe asking questions one by one may stop once the remaining questions
  cannot change ``paired_rule``'s verdict: the verdict is the same whether every remaining question
  goes wholly to the fixed arm or wholly to the configured one.
* ``settled`` (sampling, stochastic): the same once, completing the remaining questions by drawing from
  the questions seen (their score pairs, with replacement), the verdict holds in all but ``FLIP`` of the
  draws: the decision is clear unless the questions still to come differ from those seen.
* ``rate_rule`` (safety probes: leaks, hijacks, silent stale answers): the configured pipeline's
  failures out of n. The probe **flags** when the 95% Wilson interval of the failure rate lies wholly
  above the tolerance (0 by default: a single observed failure flags, since the lower bound of k/n is
  above 0 for every k >= 1; with no failure the interval starts at 0 and the probe passes).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragline.eval.stats import bootstrap_ci

CONFIDENCE = 0.95
DRAWS = 100  # ``settled``: completions drawn
FLIP = 0.05  # ``settled``: the share of completions that may change the verdict
Z = 1.959963984540054  # the two-sided 95% normal quantile


@dataclass(frozen=True)
class Verdict:
    status: str  # pass | flag
    rule: str  # the rule and the interval it saw, in words

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "rule": self.rule}


def wilson(failures: int, n: int, z: float = Z) -> tuple[float, float]:
    """The Wilson score interval of ``failures / n`` (0, 1 for n = 0)."""
    if n == 0:
        return 0.0, 1.0
    if failures == 0:  # exactly 0 (the formula leaves a rounding residue above it)
        return 0.0, z * z / (n + z * z)
    p = failures / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_rule(failures: int, n: int, tolerance: float = 0.0) -> Verdict:
    """Flag when the 95% Wilson interval of the failure rate lies wholly above ``tolerance``."""
    low, high = wilson(failures, n)
    status = "flag" if n and low > tolerance else "pass"
    return Verdict(
        status,
        f"{failures}/{n} failures, 95% Wilson CI [{low:.2f}, {high:.2f}]; flag when the CI lies above {tolerance:g}",
    )


def paired_rule(fixed: Mapping[str, float], configured: Mapping[str, float], seed: int = 0) -> Verdict:
    """Flag when the 95% bootstrap CI of mean(fixed - configured) over the same questions lies above 0."""
    common = sorted(set(fixed) & set(configured))
    if not common:
        return Verdict("flag", "no question was measured in both arms")
    a = {q: float(configured[q]) for q in common}
    b = {q: float(fixed[q]) for q in common}
    differences = [b[q] - a[q] for q in common]
    if all(d == differences[0] for d in differences):  # a constant difference has a zero-width interval
        low = high = differences[0]
    else:
        low, high = bootstrap_ci(a, b, confidence=CONFIDENCE, seed=seed)
    mean = sum(differences) / len(differences)
    status = "flag" if low > 0 else "pass"
    return Verdict(
        status,
        f"fixed - configured = {mean:+.2f} over {len(common)} questions, 95% bootstrap CI "
        f"[{low:+.2f}, {high:+.2f}]; flag when the CI lies above 0",
    )


def curtailed(
    fixed: Mapping[str, float], configured: Mapping[str, float], remaining: int, low: float = 0.0, high: float = 1.0
) -> str | None:
    """``paired_rule``'s verdict once the ``remaining`` questions cannot change it, else None.

    Scores lie in ``[low, high]``; the remaining questions are completed both ways (every one
    ``high`` for the fixed arm and ``low`` for the configured, then the reverse). When both completions
    give the same status, the whole sample would too (the interval moves with the mean), so sampling
    may stop: the decision is clear.
    """
    if remaining <= 0:
        return paired_rule(fixed, configured).status
    extra = [f"~remaining-{i}" for i in range(remaining)]
    best = paired_rule({**fixed, **dict.fromkeys(extra, high)}, {**configured, **dict.fromkeys(extra, low)})
    worst = paired_rule({**fixed, **dict.fromkeys(extra, low)}, {**configured, **dict.fromkeys(extra, high)})
    return best.status if best.status == worst.status else None


def settled(fixed: Mapping[str, float], configured: Mapping[str, float], remaining: int, seed: int = 0) -> str | None:
    """``paired_rule``'s verdict once the ``remaining`` questions are unlikely to change it, else None.

    ``curtailed`` first (no completion can change it); else ``DRAWS`` completions, each drawing the
    remaining questions' score pairs from those seen, and the verdict when at most ``FLIP`` of them change
    it (stochastic curtailment: it assumes the questions to come are like those seen, as the sample is).
    """
    decided = curtailed(fixed, configured, remaining)
    common = sorted(set(fixed) & set(configured))
    if decided is not None or not common:
        return decided
    status = paired_rule(fixed, configured).status
    rng = random.Random(seed)
    changed = 0
    for draw in range(DRAWS):
        picks = {f"~{draw}-{i}": rng.choice(common) for i in range(remaining)}
        completed = paired_rule(
            {**fixed, **{key: fixed[q] for key, q in picks.items()}},
            {**configured, **{key: configured[q] for key, q in picks.items()}},
        )
        changed += completed.status != status
        if changed > FLIP * DRAWS:
            return None
    return status
