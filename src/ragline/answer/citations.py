"""Citations: parse ``[n]`` markers, map them to sources, and check that the cited text supports the answer.

Markers: ``[1]``, ``[1, 3]``, ``[1][3]``, ``[1-3]`` and ``[Source 2]``. A number that names no source is
reported in ``ParsedCitations.unknown``, never an error: a reader that cites ``[7]`` out of five
sources has made a mistake worth counting, not one worth crashing on.

Support is a lexical check, cheap and deterministic: a source supports an answer when the answer's
terms occur in the source's terms, both normalized as SQuAD does (lowercase, no punctuation or
articles; Rajpurkar et al. 2016) and then analyzed by the english analyzer (stopwords out, Snowball
stems), so "submitted" supports "submit". Every term of a short answer (up to ``SHORT_ANSWER``
terms) must occur; a longer, sentence-like answer needs ``SUPPORT_THRESHOLD`` of its distinct terms,
and all of its numbers and codes, because a wrong number is exactly the error to catch.

Citation precision: the share of an answer's citations that support it. Citation recall: whether
the answer cites at least one supporting source, when the context holds one. (ALCE, Gao et al. 2023,
defines both with an NLI model; this is the lexical stand-in.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ragline.answer.context import Context, Source
from ragline.eval.answers import normalize_answer
from ragline.text.analyzer import Analyzer, get_analyzer
from ragline.types import Answer, Citation

SHORT_ANSWER = 4  # distinct terms; up to this many, all must be in the source
SUPPORT_THRESHOLD = 0.8  # share of distinct terms a longer answer needs
MAX_RANGE = 20  # "[1-3]" expands; "[1-1000]" is not a citation

_MARKER = re.compile(
    r"\[\s*(?:(?:sources?|docs?|documents?)\s*)?(\d+(?:\s*(?:,|;|-|\u2013|and)\s*\d+)*)\s*\]",
    re.IGNORECASE,
)
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")


@dataclass(slots=True)
class ParsedCitations:
    """The source numbers an answer cites, in order of first mention, split into known and unknown."""

    numbers: list[int] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    unknown: list[int] = field(default_factory=list)


def cited_numbers(text: str) -> list[int]:
    """Distinct source numbers of the markers in ``text``, in order of first mention."""
    numbers: list[int] = []
    for marker in _MARKER.finditer(text):
        for number in _expand(marker.group(1)):
            if number not in numbers:
                numbers.append(number)
    return numbers


def _expand(body: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*(?:,|;|and)\s*", body):
        ends = [int(x) for x in re.split(r"\s*[-\u2013]\s*", part) if x]
        if len(ends) == 2 and 0 <= ends[1] - ends[0] < MAX_RANGE:
            numbers.extend(range(ends[0], ends[1] + 1))
        else:
            numbers.extend(ends)
    return numbers


def strip_citations(text: str) -> str:
    """The answer without its markers: "capped at $70 [1]." -> "capped at $70."."""
    bare = _MARKER.sub(" ", text)
    bare = _SPACE_BEFORE_PUNCT.sub(r"\1", bare)
    return " ".join(bare.split())


def citation_for(source: Source) -> Citation:
    """The citation of source ``[n]``: its chunk, that chunk's document, title and text."""
    return Citation(source.n, source.doc_id, source.chunk_id, source.hit.title, source.hit.text)


def parse_citations(text: str, context: Context) -> ParsedCitations:
    """Map the markers of ``text`` to the sources of ``context``."""
    parsed = ParsedCitations(numbers=cited_numbers(text))
    for number in parsed.numbers:
        source = context.source(number)
        if source is None:
            parsed.unknown.append(number)
        else:
            parsed.citations.append(citation_for(source))
    return parsed


# --- support -------------------------------------------------------------------------------------


def support_terms(text: str, analyzer: str | Analyzer = "english") -> list[str]:
    """SQuAD-normalized, then analyzed terms; the normalized words when analysis leaves nothing."""
    normalized = normalize_answer(text)
    return get_analyzer(analyzer)(normalized) or normalized.split()


def supports(answer: str, source_text: str, analyzer: str | Analyzer = "english", question: str = "") -> bool:
    """Does ``source_text`` contain the terms of ``answer``? (see the module docstring for the rule)

    Terms the ``question`` already has are not required: an LLM restates the question ("The receipt
    threshold is $25"), and the evidence need not use the question's words.
    """
    wanted = set(support_terms(answer, analyzer)) - set(support_terms(question, analyzer) if question else ())
    if not wanted:
        return False
    have = set(support_terms(source_text, analyzer)) | set(normalize_answer(source_text).split())
    missing = wanted - have
    if not missing:
        return True
    if len(wanted) <= SHORT_ANSWER or any(any(ch.isdigit() for ch in term) for term in missing):
        return False
    return 1 - len(missing) / len(wanted) >= SUPPORT_THRESHOLD


def check_support(answer_text: str, citations: Sequence[Citation], question: str = "") -> list[Citation]:
    """Copies of ``citations`` with ``supported`` set for ``answer_text`` (see ``supports``)."""
    return [replace(c, supported=supports(answer_text, c.text, question=question)) for c in citations]


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
