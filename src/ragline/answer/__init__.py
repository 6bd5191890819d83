"""From ranked hits to an answer with citations (Lecture 3, §4-§6).

- ``context``: numbered, fenced sources within a token budget, in an order that fights "lost in
  the middle".
- ``prompt``: the messages for an LLM reader, and its reply read back into an ``Answer``.
- ``citations``: ``[n]`` markers parsed, mapped to sources and checked for support.
- ``judge``: an LLM's yes/no verdict on each citation, beside the lexical check.
- ``extractive``: a deterministic span reader that abstains below a calibrated threshold.

Answer metrics (SQuAD EM/F1, correct / wrong / abstained) live in ``ragline.eval.answers``, citation
precision and recall in ``ragline.eval.citations``, the reader's calibration in ``ragline.eval.calibration``.
"""

from __future__ import annotations

import importlib
from typing import Any

# Names are loaded on first use (the "lazy loading" of Scientific Python's SPEC 1): importing one
# submodule such as ``ragline.answer.version_policy`` runs this file first, and ``ragline search`` should not
# pay for the readers, the LLM client and the judge it never calls.
_SUBMODULE_OF = {
    "ParsedCitations": "citations",
    "check_support": "citations",
    "parse_citations": "citations",
    "strip_citations": "citations",
    "supports": "citations",
    "ORDERS": "context",
    "Context": "context",
    "Dropped": "context",
    "Source": "context",
    "approx_tokens": "context",
    "build_context": "context",
    "neutralize": "context",
    "ExtractiveReader": "extractive",
    "SupportJudge": "judge",
    "judge_messages": "judge",
    "parse_verdict": "judge",
    "ABSTAIN_TEXT": "prompt",
    "SYSTEM_PROMPT": "prompt",
    "answer_from_response": "prompt",
    "build_messages": "prompt",
    "is_abstention": "prompt",
    "SupportCheck": "support",
    "SupportVerdict": "support",
    "answers_question": "support",
}

__all__ = sorted(_SUBMODULE_OF)


def __getattr__(name: str) -> Any:
    submodule = _SUBMODULE_OF.get(name)
    if submodule is None:
        raise AttributeError(f"module 'ragline.answer' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ragline.answer.{submodule}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
