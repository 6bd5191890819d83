"""The agent's trace: one structured record per step, written as JSONL and printed readably.

A step records what the agent thought and did (``kind``: decompose, retrieve, grade, rewrite,
bridge, action, observation, read, stop), the query and the retriever it used, the top hits (ids,
titles and scores only), the grade, and its cost: retrievals, model calls, tokens and seconds.
Hits come from retrieval with the caller's filter applied inside, and a step keeps no hit text, so a
trace never shows a principal text that the principal cannot see.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragline.types import Hit

TOP_HITS = 5  # hits kept per retrieval step


@dataclass(slots=True)
class Cost:
    """What a step (or a whole question) spent."""

    retrievals: int = 0
    model_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0

    def add(self, other: Cost) -> None:
        self.retrievals += other.retrievals
        self.model_calls += other.model_calls
        self.tokens += other.tokens
        self.seconds += other.seconds


@dataclass(slots=True)
class Step:
    n: int
    kind: str
    hop: int | None = None
    thought: str = ""
    action: str = ""
    query: str = ""
    retriever: str = ""
    hits: list[dict[str, Any]] = field(default_factory=list)
    grade: float | None = None
    observation: str = ""
    cost: Cost = field(default_factory=Cost)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in ("", None, [])}


@dataclass
class Trace:
    """The steps of one question, in order, and their total cost."""

    question: str
    steps: list[Step] = field(default_factory=list)
    total: Cost = field(default_factory=Cost)
    stop_reason: str = ""
    started: float = field(default_factory=time.perf_counter, repr=False)

    def step(self, kind: str, *, hits: list[Hit] | None = None, cost: Cost | None = None, **values: Any) -> Step:
        record = Step(len(self.steps) + 1, kind, hits=[_hit(h) for h in (hits or [])[:TOP_HITS]], **values)
        if cost is not None:
            record.cost = cost
            self.total.add(cost)
        self.steps.append(record)
        return record

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "stop_reason": self.stop_reason,
            "cost": asdict(self.total),
            "steps": [s.to_dict() for s in self.steps],
        }

    def to_jsonl(self) -> str:
        """One JSON object per step (each with the question), then the summary line."""
        lines = [json.dumps({"question": self.question, **s.to_dict()}, ensure_ascii=False) for s in self.steps]
        summary = {
            "question": self.question,
            "kind": "summary",
            "stop_reason": self.stop_reason,
            "cost": asdict(self.total),
        }
        return "\n".join([*lines, json.dumps(summary, ensure_ascii=False)]) + "\n"

    def write(self, path: str | Path) -> None:
        """Append this trace to a JSONL file."""
        with open(path, "a", encoding="utf-8") as out:
            out.write(self.to_jsonl())


def render(trace: dict[str, Any]) -> str:
    """A trace (``Trace.to_dict()``, as stored in ``answer.details["trace"]``) as readable lines."""
    lines = [f"question: {trace.get('question', '')}"]
    for s in trace.get("steps", []):
        hop = f" hop {s['hop']}" if s.get("hop") is not None else ""
        head = f"{s['n']:>3}. {s['kind']}{hop}"
        parts = [f"{key}: {s[key]}" for key in ("thought", "action", "query", "retriever", "observation") if s.get(key)]
        if s.get("grade") is not None:
            parts.append(f"grade: {s['grade']:.3f}")
        lines.append(head + ("  " + " | ".join(parts) if parts else ""))
        for h in s.get("hits", []):
            lines.append(f"       {h['rank']:>2}. {h['doc_id']}  {h['score']:.3f}  {h.get('title', '')}")
    cost = trace.get("cost", {})
    lines.append(
        f"stop: {trace.get('stop_reason', '')} | retrievals {cost.get('retrievals', 0)}, model calls "
        f"{cost.get('model_calls', 0)}, tokens {cost.get('tokens', 0)}, {cost.get('seconds', 0.0):.2f} s"
    )
    return "\n".join(lines)


def _hit(hit: Hit) -> dict[str, Any]:
    return {"rank": hit.rank, "doc_id": hit.doc_id, "score": round(float(hit.score), 4), "title": hit.title}
