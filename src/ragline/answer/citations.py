"""Citations: parse ``[n]`` markers, map them to sources, and check that the cited text supports the answer.

Markers: ``[1]``, ``[1, 3]``, ``[1][3]``, ``[1-3]`` and ``[Source 2]``. A number that names no source is
reported in ``ParsedCitations.unknown``, never an error: a reader that cites ``[7]`` out of five
sources has made a mistake worth counting, not one worth crashing on.

Support means that the cited text answers *the question* with this answer (``ragline.answer.support``):
the answer's terms lie in a sentence, or next to one, that carries most of the question's content
terms or its entities and literals. Without a question only the lexical half can be checked: the
answer's terms occur in the source, both normalized as SQuAD does (lowercase, no punctuation or
articles; Rajpurkar et al. 2016) and then analyzed by the english analyzer (stopwords out, Snowball
stems), so "submitted" supports "submit"; every term of a short answer must occur, a longer one needs
most of its terms and all of its numbers and codes, because a wrong number is exactly the error to catch.

Citation precision and recall, computed from these checks, are metrics: ``ragline.eval.citations``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ragline.answer.context import Context, Source
from ragline.answer.questions import fits_asked_type
from ragline.answer.support import SupportCheck, contains_answer_terms, default_check
from ragline.text.analyzer import Analyzer
from ragline.types import Citation

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


def citations_json(citations: Sequence[Citation], context: Context) -> list[dict[str, object]]:
    """Citations as JSON, each with the page, slide or sheet of its source when it has one (``ragline.anchors``)."""
    from ragline.anchors import anchor_of

    out = []
    for citation in citations:
        source = context.source(citation.n)
        out.append({**citation.to_dict(), **(anchor_of(source.hit.metadata) if source is not None else {})})
    return out


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


def supports(
    answer: str, source_text: str, analyzer: str | Analyzer = "english", question: str = "", title: str = ""
) -> bool:
    """Does ``source_text`` (titled ``title``) support ``answer``? With a ``question``: does it answer
    that question with it (``ragline.answer.support``)? Without one: are the answer's terms in it?"""
    if not question:
        return contains_answer_terms(answer, source_text, analyzer)
    if not fits_asked_type(question, answer):  # "T3" answers no "What is the pay band ...?", whatever states it
        return False
    # a generated answer: the model read the question's type word ("Which *company* ...?"), see support.py
    check = default_check(True) if analyzer == "english" else SupportCheck(analyzer=analyzer, focus_optional=True)
    return check(question, answer, source_text, title)


def check_support(answer_text: str, citations: Sequence[Citation], question: str = "") -> list[Citation]:
    """Copies of ``citations`` with ``supported`` set for ``answer_text`` and ``question`` (see ``supports``)."""
    return [replace(c, supported=supports(answer_text, c.text, question=question, title=c.title)) for c in citations]


# --- whole sentences and post-hoc attribution -----------------------------------------------------

_END_PUNCT = tuple(".!?:;)\"'\u201d\u3002\uff01\uff1f")


def cut_edges(source: Source) -> tuple[bool, bool]:
    """(first sentence cut, last sentence cut) of a chunk: a boundary inside a sentence.

    A chunk that starts inside its document (``metadata["start"] > 0``) with a lower-case letter or a digit
    continues a sentence; a text whose last character is not a sentence's end (``. ! ? : ;``, a closing
    quote or bracket, Chinese full stops) stops inside one. Whole documents are never cut at the start.
    """
    text = source.text.strip()
    if not text:
        return False, False
    starts_inside = isinstance(source.hit.metadata.get("start"), int) and source.hit.metadata["start"] > 0
    first_cut = starts_inside and (text[0].islower() or text[0].isdigit())
    last_cut = not text.endswith(_END_PUNCT)
    return first_cut, last_cut


def whole_sentences(source: Source) -> list[str]:
    """The sentences of ``source`` that no chunk boundary cut (``cut_edges``), in reading order."""
    from ragline.ingest.chunkers import split_sentences

    text = source.text
    spans = split_sentences(text)
    first_cut, last_cut = cut_edges(source)
    if first_cut and spans:
        spans = spans[1:]
    if last_cut and spans:
        spans = spans[:-1]
    return [" ".join(text[a:b].split()) for a, b in spans]


def attribute(answer_text: str, context: Context, question: str = "") -> list[tuple[Citation, str, str]]:
    """Sources for an answer the reader did not cite (or cited wrongly), found over whole sentences only.

    Each sentence of ``answer_text`` is matched to the first source (in context order) with a whole sentence
    that supports it (``supports``: with the question, the sentence must answer it with this answer).
    Returns (citation marked supported, the answer's sentence, the source's sentence) per attributed
    sentence; a cut sentence never supports an answer, so an answer is never backed by a fragment.
    """
    from ragline.ingest.chunkers import split_sentences

    parts = [answer_text[a:b] for a, b in split_sentences(answer_text)] or [answer_text]
    found: list[tuple[Citation, str, str]] = []
    for part in parts:
        if not part.strip():
            continue
        match = _supporting_sentence(part, context, question)
        if match is not None:
            source, sentence = match
            found.append((replace(citation_for(source), supported=True), part, sentence))
    return found


def supporting_sentence(answer_text: str, context: Context, question: str = "", numbers: Sequence[int] = ()) -> str:
    """The first whole sentence of the sources numbered ``numbers`` (then of any source) that supports the
    answer; "" when none does."""
    first = [s for n in numbers if (s := context.source(n)) is not None]
    for pool in (first, context.sources):
        match = _supporting_sentence(answer_text, context, question, pool)
        if match is not None:
            return match[1]
    return ""


def _supporting_sentence(
    answer_text: str, context: Context, question: str, pool: Sequence[Source] | None = None
) -> tuple[Source, str] | None:
    for source in context.sources if pool is None else pool:
        for sentence in whole_sentences(source):
            if supports(answer_text, sentence, question=question, title=source.hit.title):
                return source, sentence
    return None


def ends_at_cut(answer_text: str, context: Context, words: int = 3) -> int | None:
    """The number of a source whose text was cut mid-sentence exactly where ``answer_text`` ends (its last
    ``words`` words, normalized), or None: an answer that copied a fragment up to a chunk boundary."""
    from ragline.text.normalize import normalize_answer

    tail = normalize_answer(answer_text).split()[-words:]
    if len(tail) < words:
        return None
    for source in context.sources:
        if cut_edges(source)[1] and normalize_answer(source.text).split()[-words:] == tail:
            return source.n
    return None
