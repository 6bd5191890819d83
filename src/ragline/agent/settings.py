"""The multi-hop agent's settings (``AgentSettings``): every key of ``[read].reader = {name = "agent", ...}``, checked
when built; the loop that uses them is ``loop.py``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from ragline.answer.support import MIN_COVERAGE
from ragline.errors import ConfigError

POLICIES = ("read", "abstain")
# The hop check's term coverage: the answer check's calibrated value. On the two built-in corpora's training
# worlds every value from 0.8 to 1.0 kept all right bridges and rejected the most wrong ones (BENCHMARKS.md
# "Agent"); lower values let through more wrong ones.
HOP_COVERAGE = MIN_COVERAGE
FIRST_HOPS = ("subquestion", "question")
READ_AS = ("subquestion", "question")


@dataclass(frozen=True)
class AgentSettings:
    """Every threshold and limit of the loop (calibrate on training data; sweep in experiments)."""

    max_hops: int = 3
    hop_k: tuple[int, ...] = (5,)  # passages per hop (the last value repeats)
    budget_passages: int = 10  # passages handed to the reader over all hops
    depth: int = 20  # candidates retrieved per attempt (reranker input; bridge reading uses the top hop_k)
    threshold: float = 0.5  # grade of the best hit below which a hop escalates
    retries: int = 2  # escalations per hop
    policy: str = "read"  # when no attempt passes: read anyway, or abstain
    ladder: tuple[str, ...] = ("bm25", "hybrid")  # retriever specs, cheapest first
    reranker: str | None = None  # a reranker spec: one more rung, the last retriever + this reranker
    grader: str = "lexical"
    decomposer: str = "rules"  # rules | llm
    first_hop: str = "subquestion"  # subquestion: hop 1 asks the decomposer's first clause; question: the whole
    read_as: str = "subquestion"  # the reader is asked the last sub-question (bridge filled in) first, or the question
    interleave: bool = True  # bridge further hops from what was read when the question does not decompose
    title_links: bool = True  # an interleaved hop first looks up the documents whose titles the last hop named
    hop_check: bool = True  # a decomposed hop's bridge must be supported by its sentence, else escalate / abstain
    hop_coverage: float = HOP_COVERAGE  # the support check's term coverage for a hop's bridge
    unsupported_bridge: str = "abstain"  # no attempt's bridge passes the hop check: abstain, or go on as "question"
    reader: str = "extractive"
    budget: int = 1500  # context tokens
    max_retrievals: int = 12
    max_model_calls: int = 8
    max_tokens: int = 4000
    max_seconds: float = 60.0

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ConfigError(f"agent: policy must be one of {', '.join(POLICIES)}, not {self.policy!r}")
        if self.decomposer not in ("rules", "llm"):
            raise ConfigError(f"agent: decomposer must be rules or llm, not {self.decomposer!r}")
        if self.unsupported_bridge not in ("abstain", "question"):
            raise ConfigError(f"agent: unsupported_bridge must be abstain or question, not {self.unsupported_bridge!r}")
        if self.first_hop not in FIRST_HOPS:
            raise ConfigError(f"agent: first_hop must be one of {', '.join(FIRST_HOPS)}, not {self.first_hop!r}")
        if self.read_as not in READ_AS:
            raise ConfigError(f"agent: read_as must be one of {', '.join(READ_AS)}, not {self.read_as!r}")
        for name in ("max_hops", "budget_passages", "depth", "max_retrievals"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ConfigError(f"agent: {name} must be a whole number >= 1, got {getattr(self, name)!r}")
        if not self.hop_k or any(not isinstance(k, int) or k < 1 for k in self.hop_k):
            raise ConfigError(f"agent: hop_k must be whole numbers >= 1 (e.g. 5 or 3/2), got {self.hop_k!r}")
        if not self.ladder:
            raise ConfigError("agent: ladder needs at least one retriever spec, e.g. [bm25; hybrid]")
        if not isinstance(self.hop_coverage, (int, float)) or not 0.0 <= self.hop_coverage <= 1.0:
            raise ConfigError(f"agent: hop_coverage must be a number from 0 to 1, got {self.hop_coverage!r}")

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> AgentSettings:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(params) - known)
        if unknown:
            raise ConfigError(f"agent: unknown setting(s) {', '.join(unknown)}; it takes {', '.join(sorted(known))}")
        values = dict(params)
        for key in ("hop_k", "ladder"):
            if key in values:
                raw = values[key]
                values[key] = tuple(raw) if isinstance(raw, (list, tuple)) else (raw,)
        return cls(**values)

    def k_for(self, hop: int) -> int:
        return self.hop_k[min(hop, len(self.hop_k) - 1)]

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}
