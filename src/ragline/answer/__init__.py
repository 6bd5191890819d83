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

from ragline.answer.citations import (
    ParsedCitations,
    check_support,
    parse_citations,
    strip_citations,
    supports,
)
from ragline.answer.context import ORDERS, Context, Dropped, Source, approx_tokens, build_context, neutralize
from ragline.answer.extractive import ExtractiveReader
from ragline.answer.judge import SupportJudge, judge_messages, parse_verdict
from ragline.answer.prompt import (
    ABSTAIN_TEXT,
    SYSTEM_PROMPT,
    answer_from_response,
    build_messages,
    is_abstention,
)
from ragline.answer.support import SupportCheck, SupportVerdict, answers_question

__all__ = [
    "ABSTAIN_TEXT",
    "ORDERS",
    "SYSTEM_PROMPT",
    "Context",
    "Dropped",
    "ExtractiveReader",
    "ParsedCitations",
    "Source",
    "SupportCheck",
    "SupportJudge",
    "SupportVerdict",
    "answers_question",
    "answer_from_response",
    "approx_tokens",
    "build_context",
    "build_messages",
    "check_support",
    "is_abstention",
    "judge_messages",
    "neutralize",
    "parse_citations",
    "parse_verdict",
    "strip_citations",
    "supports",
]
