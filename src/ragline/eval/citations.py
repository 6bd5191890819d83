"""Citation metrics of answers (ALCE, Gao et al. 2023, defines both with an NLI model; this is the lexical stand-in).

Citation precision: the share of an answer's citations that support it. Citation recall: whether
the answer cites at least one supporting source, when the context holds one. Support is the check
of ``ragline.answer.citations.supports``; the judge's figures compare an LLM judge's verdicts
(``ragline.answer.judge``) with it.
"""

from __future__ import annotations

from ragline.answer.citations import supports
from ragline.answer.context import Context
from ragline.types import Answer


def citation_precision(answer: Answer) -> float | None:
    """Share of the answer's citations that support it; None when it abstains or cites nothing."""
    if answer.abstained or not answer.citations:
        return None
    flags = [c.supported if c.supported is not None else supports(answer.text, c.text) for c in answer.citations]
    return sum(flags) / len(flags)


def citation_recall(answer: Answer, context: Context) -> float | None:
    """1.0 if the answer cites a source that supports it, 0.0 if it cites none of those; None when
    it abstains or no source in the context supports it (nothing to find)."""
    if answer.abstained:
        return None
    supporting = {s.chunk_id for s in context.sources if supports(answer.text, s.text)}
    if not supporting:
        return None
    return float(any(c.chunk_id in supporting for c in answer.citations))


def judge_precision(answer: Answer) -> float | None:
    """Share of the answer's citations an LLM judge said support it, among those it decided (``judged``)."""
    verdicts = [c.judged for c in answer.citations if c.judged is not None]
    return sum(verdicts) / len(verdicts) if verdicts and not answer.abstained else None


def judge_agreement(answer: Answer) -> float | None:
    """Share of citations on which the LLM judge and the lexical check agree (both decided)."""
    pairs = [(c.judged, c.supported) for c in answer.citations if c.judged is not None and c.supported is not None]
    return sum(a == b for a, b in pairs) / len(pairs) if pairs and not answer.abstained else None
