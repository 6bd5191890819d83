"""A deterministic extractive reader: the minimal answer span from the top contexts, or no answer.

Why a hand-written reader when LLMs exist: it makes no mistakes of its own that vary from run to run,
so the effect of retrieval on answers can be measured cleanly (Lecture 3, §0.5 and §4). It reads the
way DrQA's Document Reader does (Chen et al., "Reading Wikipedia to Answer Open-Domain Questions",
ACL 2017), with hand-set weights instead of learned ones:

1. **Question** (``ragline.answer.questions``). Expected answer types from the wh-word and the noun
   asked about; content terms (stemmed); literals (codes and numbers: E-4471, M2) and names (Grid Ops East).
2. **Candidates** (``ragline.answer.spans``). Typed spans of every sentence of the top contexts:
   money, percentages, dates, times, durations, numbers with units, codes, release numbers, command-line
   options, URLs and paths, capitalized names (initials included), terms marked in Markdown (`code`,
   **bold**, [[links]]), cue clauses. A span is minimal: "SS-339", "$70", "faulty load balancer health
   check" -- not the sentence. A table row's cells, and a field line's value ("License-Expression:
   MPL-2.0"), are read under their column's name or the field's label; a label is never an answer.
   Sentences addressed to AI assistants ("Ignore previous instructions ...") are instructions, not
   facts, and are skipped.
3. **Exact-match gate.** Every literal and name of the question must occur in the candidate's
   chunk (its title included): the exact-match feature of DrQA and the lecture's "is this the
   entity I was asked about" check (Lecture 12, §2.4). A question about E-4471 is not answered from
   the E-4417 report, however similar.
4. **Score** = type fit x (term overlap of the sentence and the chunk's title, and at a discount of
   the rest of the chunk; proximity of the span to the matched terms; adjacency to the noun asked
   about, "the Ember Point depot", which also makes a span of any accepted type fit, "the LZ77
   algorithm"; retrieval rank). The fit drops when the span sits next to a noun of another kind
   ("Sable Creek substation" for "which crew"), or names the question's own subject ("the Asset
   Works West team" for "who leads the team that ..."); a source marked
   ``superseded_by`` counts half.
5. **Abstain** when the best score is below ``threshold``: the "no answer" decision of SQuAD 2.0
   readers (Rajpurkar et al. 2018). ``ragline.eval.calibration`` sets it on training data, the way the
   official SQuAD v2.0 script's ``find_best_thresh`` does for the no-answer probability.
6. **Support** (``ragline.answer.support``): abstain, too, when the best span's sentence and its
   neighbours do not carry the question (most of its content terms, or its literals): a span from a
   sentence about something else is not an answer, however well it scored. ``ragline.eval.calibration``
   sets the check's thresholds on calibration data; the citation's ``supported`` is the verdict.

One question at a time it answers single-hop questions; a multi-hop question ("who leads the team
that maintains SS-339?") needs one read per hop (Lecture 3, §5.5) and otherwise abstains or fails.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ragline.answer.candidates import (
    CHUNK_TERM_WEIGHT,
    CLASS_MISMATCH,
    HEAD_FIT,
    LIST_PART,
    MAX_CELL_WORDS,
    NO_CLASS,
    QUANTITIES,
    REFERENT,
    SUPERSEDED_FACTOR,
    TABLE_FIT,
    TITLE_TERM_WEIGHT,
    Candidate,
    Chunk,
    Sentence,
    mix,
    passes_gate,
    proximity,
)
from ragline.answer.context import Context, document_id
from ragline.answer.questions import WORD, QuestionInfo, Stems, analyze_question
from ragline.answer.spans import (
    COMMAND,
    ID,
    NAME,
    PHRASE,
    Span,
    candidate_spans,
    list_spans,
    sentences,
)
from ragline.answer.support import (
    LITERAL,
    SupportCheck,
    SupportVerdict,
    default_check,
    literal_key,
    norm_phrase,
)
from ragline.errors import ConfigError
from ragline.text.analyzer import Analyzer, get_analyzer
from ragline.text.code import MAX_COMMAND_WORDS, code_lines
from ragline.text.normalize import normalize_answer
from ragline.text.tables import Row, table_blocks, table_rows
from ragline.types import Answer, Citation, Hit

# Text addressed to an AI reader is an instruction, not a fact (indirect prompt injection, Greshake et al.
# 2023): "Ignore previous instructions ...", "AI assistants reading this ...", "SYSTEM OVERRIDE: ...".
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|earlier|above|your)\b"
    r"|\b(?:AI|automated|virtual)\s+assistants?\b|\bassistants?\s+(?:reading|must|should)\b|\bsystem\s+override\b"
    r"|\bnote\s+for\s+(?:AI|assistants?|LLMs?|language\s+models?)\b",
    re.IGNORECASE,
)

# A field line, "License-Expression: MPL-2.0", "Author: D. Brown", "Important: ...": a short capitalized label, a
# colon, a value. A short value is read as a one-cell table row under the label; a label is never the answer.
_FIELD = re.compile(r"(?P<label>[A-Z][\w-]*(?:[ \t][A-Za-z][\w-]*){0,2}):[ \t]+(?=\S)")

# Set with ``calibrate_threshold`` (objective "net") on Orrin *training* worlds only (``TRAIN_SEED`` and
# seeds 1-3), BM25 top 5 over whole documents and over section chunks: the calibrated values were 0.46-0.50.
DEFAULT_THRESHOLD = 0.47
DEFAULT_TOP_K = 5
SUPPORT_MODES = ("best", "next", "off")


# --- the reader ------------------------------------------------------------------------------------


class ExtractiveReader:
    """Question + contexts -> the best minimal span with its source, or an abstention."""

    name = "extractive"

    def __init__(
        self,
        threshold: float = DEFAULT_THRESHOLD,
        top_k: int = DEFAULT_TOP_K,
        analyzer: str | Analyzer = "english",
        skip_instructions: bool = True,
        support: str = "best",
        support_check: SupportCheck | None = None,
    ) -> None:
        self.threshold = threshold
        self.top_k = top_k
        self.skip_instructions = skip_instructions
        self._stems = Stems(get_analyzer(analyzer))
        if support not in SUPPORT_MODES:
            raise ConfigError(f"extractive reader: support={support!r}; choose one of {', '.join(SUPPORT_MODES)}")
        self.support = support
        if support_check is None:
            support_check = default_check() if analyzer == "english" else SupportCheck(analyzer=analyzer)
        self.support_check = support_check

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "threshold": self.threshold,
            "top_k": self.top_k,
            "analyzer": self._stems.analyzer.name,
            "skip_instructions": self.skip_instructions,
            "support": self.support,
            "support_check": self.support_check.config() if self.support != "off" else None,
        }

    def read(self, question: str, contexts: Context | Sequence[Hit]) -> Answer:
        """The answer to ``question`` from the top ``top_k`` contexts.

        Abstains below ``threshold``, and when the best span does not lie in a sentence that answers
        the question (``ragline.answer.support``; ``support="next"``: then the best span above the
        threshold that does is the answer; ``"off"``: no check, the reader as it was before the check).
        """
        info = analyze_question(question, self._stems)
        chunks = self._chunks(contexts)
        allowed = [c for c in chunks if passes_gate(info, c)]
        ranked = self._score(info, allowed)
        best = ranked[0] if ranked else None
        details: dict[str, Any] = {"threshold": self.threshold, "expected_types": sorted(info.types)}
        if best is None or best.score < self.threshold:
            if chunks and not allowed:
                details["reason"] = "question literals or names not in any context"
            elif best is not None:
                details.update(reason="best score below threshold", score=best.score, candidate=best.text)
            else:
                details["reason"] = "no candidate of the expected type"
            return Answer("", True, [], self.name, details)
        chosen: Candidate | None = best
        verdict = None
        if self.support != "off":
            chosen = None
            for candidate in ranked:
                if candidate.score < self.threshold:
                    break
                verdict = self._verdict(question, candidate)
                if verdict.supported or self.support == "best":
                    chosen = candidate if verdict.supported else None
                    break
            if chosen is None:
                first = self._verdict(question, best)
                details.update(
                    reason="no span above the threshold lies in a sentence that answers the question",
                    score=best.score,
                    candidate=best.text,
                    coverage=first.coverage,
                )
                return Answer("", True, [], self.name, details)
            details.update(coverage=verdict.coverage, support=verdict.reason)  # type: ignore[union-attr]
        assert chosen is not None  # best, past the early return; a checked candidate, past the second
        # The span is a substring of the chunk; ``supported`` says whether its sentence answers the question.
        citation = Citation(
            chosen.n,
            document_id(chosen.hit),
            chosen.hit.doc_id,
            chosen.hit.title,
            chosen.hit.text,
            verdict.supported if verdict is not None else True,
        )
        details.update(
            score=chosen.score,
            sentence=chosen.sentence,
            start=chosen.start,
            end=chosen.end,
            answer_types=list(chosen.types),
            features=chosen.features,
        )
        return Answer(chosen.text, False, [citation], self.name, details)

    def _verdict(self, question: str, candidate: Candidate) -> SupportVerdict:
        """The support check of a candidate at its own place in its chunk (title and section as the title)."""
        hit = candidate.hit
        title = f"{hit.title} {hit.metadata.get('section', '')}".strip()
        return self.support_check.check(question, candidate.text, hit.text, title, at=candidate.start)

    def best(self, question: str, contexts: Context | Sequence[Hit]) -> Candidate | None:
        """The highest-scoring candidate, whatever the threshold (the input of calibration)."""
        ranked = self.candidates(question, contexts)
        return ranked[0] if ranked else None

    def candidates(self, question: str, contexts: Context | Sequence[Hit]) -> list[Candidate]:
        """Every candidate that passes the gate, best first."""
        info = analyze_question(question, self._stems)
        return self._score(info, [c for c in self._chunks(contexts) if passes_gate(info, c)])

    # -- steps ----------------------------------------------------------------------------------------
    def _chunks(self, contexts: Context | Sequence[Hit]) -> list[Chunk]:
        """The top ``top_k`` hits by rank, each with its source number."""
        if isinstance(contexts, Context):
            numbered = [(s.n, s.hit) for s in contexts.sources]
        else:
            numbered = list(enumerate(contexts, start=1))
        numbered.sort(key=lambda pair: (pair[1].rank, pair[0]))
        chunks = []
        for position, (n, hit) in enumerate(numbered[: self.top_k], start=1):
            label = f"{hit.title}\n{hit.metadata.get('section', '')}"
            whole = f"{label}\n{hit.text}"
            keys = {literal_key(t) for t in LITERAL.findall(whole)}
            title_terms = self._stems.terms(label)
            normalized = f" {norm_phrase(whole)} "
            chunks.append(Chunk(n, position, hit, title_terms, self._stems.terms(hit.text), keys, normalized))
        return chunks

    def _score(self, info: QuestionInfo, chunks: list[Chunk]) -> list[Candidate]:
        found: list[tuple[tuple[float, int, int, int], Candidate]] = []
        for chunk in chunks:
            whole = chunk.hit.text
            rows = table_rows(whole) if "|" in whole else {}
            headers = {start for start, _, _ in table_blocks(whole)} if rows else set()
            read_rows: set[int] = set()
            spans = sentences(whole)
            code = code_lines(whole, spans) if COMMAND in info.types else []
            in_code = {k for k, (a, _) in enumerate(spans) if any(start <= a < end for _, start, end in code)}
            for s_index, command_start, command_end in code:
                intro = next((spans[k] for k in range(s_index - 1, -1, -1) if k not in in_code), None)
                if intro is not None:  # a command is read under the sentence that introduces it
                    command = (command_start, command_end)
                    row = Row(command_start, command_end, cells=[command], header=[intro])
                    for candidate in self._score_row(info, chunk, row, chunk.title_terms, cell_type=COMMAND):
                        found.append(((-candidate.score, chunk.position, s_index, candidate.start), candidate))
            for s_index, (start, end) in enumerate(spans):
                text = whole[start:end]
                if self.skip_instructions and _INSTRUCTION.search(text):
                    continue  # an instruction planted for AI readers states no fact
                line = whole.rfind("\n", 0, start) + 1
                if line in headers:
                    continue  # a table's header names columns; the cells under it are the facts
                if line in rows:
                    if line not in read_rows:
                        read_rows.add(line)
                        for candidate in self._score_row(info, chunk, rows[line]):
                            found.append(((-candidate.score, chunk.position, s_index, candidate.start), candidate))
                    continue
                field = _FIELD.match(text)
                value_text = text[field.end() :] if field else ""
                if field and "\n" not in value_text.rstrip() and len(value_text.split()) <= MAX_CELL_WORDS:
                    value = (start + field.end(), end)
                    row = Row(start, end, cells=[value], header=[(start, start + field.end("label"))])
                    for candidate in self._score_row(info, chunk, row, subject=chunk.title_terms):
                        found.append(((-candidate.score, chunk.position, s_index, candidate.start), candidate))
                    continue
                sentence = self._sentence(info, chunk, text, start)
                for candidate in self._score_sentence(info, chunk, sentence):
                    if field and candidate.start < start + field.end():
                        continue  # a field's label names what follows it; it is not the answer
                    found.append(((-candidate.score, chunk.position, s_index, candidate.start), candidate))
        found.sort(key=lambda pair: pair[0])
        return [c for _, c in found]

    def _sentence(self, info: QuestionInfo, chunk: Chunk, text: str, offset: int) -> Sentence:
        """Term overlap: 1 per question term in the sentence, less in the title, less again elsewhere."""
        words = list(WORD.finditer(text))
        # an inflection of a question term is that term ("led" for "leads": ``SupportCheck.word_forms``)
        forms = {f: t for t in info.terms for f in self.support_check.word_forms(t)}
        stems = [self._as_term(self._stems(w.group()), info.terms, forms) for w in words]
        in_sentence = {s for s in stems if s in info.terms}
        in_title = (info.terms & chunk.title_terms) - in_sentence
        in_chunk = (info.terms & chunk.terms) - in_sentence - in_title
        weight = len(in_sentence) + TITLE_TERM_WEIGHT * len(in_title) + CHUNK_TERM_WEIGHT * len(in_chunk)
        overlap = weight / len(info.terms) if info.terms else 0.0
        matched = [i for i, s in enumerate(stems) if s in info.terms]
        return Sentence(text, offset, [w.start() for w in words], stems, matched, overlap)

    def _score_row(
        self,
        info: QuestionInfo,
        chunk: Chunk,
        row: Row,
        subject: frozenset[str] | set[str] = frozenset(),
        cell_type: str = PHRASE,
    ) -> list[Candidate]:
        """The cells of a table row, each read as the sentence "<row's cells> <its column's name>: <cell>".

        A cell's sentence terms are the whole row's (its first cells name the row), the first column's header (what
        the rows are: "Team") and its own column's header;
        a cell under a header that names what is asked about ("per diem" for "what is the per diem for ...")
        is adjacent to the noun asked about, and its type fits as a value of that column does (``TABLE_FIT``).
        A header word among ``subject`` (a field line's document title: "Ed home page" in the ed README) names
        what the text is about, not what is asked. ``cell_type``: what a whole cell is as a candidate (a value, or
        under a sentence that introduces it, a command).
        """
        text = chunk.hit.text
        row_text = " ".join(text[a:b] for a, b in row.cells)
        forms = {f: t for t in info.terms for f in self.support_check.word_forms(t)}
        out = []
        for j, (cell_start, cell_end) in enumerate(row.cells):
            if cell_start >= cell_end:
                continue
            header = text[slice(*row.header[j])] if j < len(row.header) else ""
            first = text[slice(*row.header[0])] if row.header and j else ""
            sentence = self._sentence(info, chunk, f"{row_text} {first} {header}", cell_start)
            header_stems = {self._as_term(self._stems(w), info.terms, forms) for w in WORD.findall(header)}
            names_asked = bool((header_stems - subject) & info.terms) or (
                info.head is not None and info.head in header_stems
            )
            cell = text[cell_start:cell_end]
            cell_sentence = replace(sentence, text=cell, starts=[], stems=[], matched=[])
            for candidate in self._score_sentence(info, chunk, cell_sentence, whole_cell=cell_type):
                features = candidate.features
                if names_asked:
                    features["fit"] = max(features["fit"], TABLE_FIT)
                    features.update(proximity=1.0, adjacent=1.0 if info.head in header_stems else 0.8)
                candidate.score = round(features["fit"] * mix(features) * features["version"], 6)
                candidate.sentence = f"{row_text} | {header}: {cell}"
                out.append(candidate)
        return out

    def _as_term(self, stem: str | None, terms: frozenset[str], forms: dict[str, str]) -> str | None:
        """The question term ``stem`` is a form of, else ``stem``."""
        if stem is None or stem in terms:
            return stem
        return next((forms[f] for f in self.support_check.word_forms(stem) if f in forms), stem)

    def _score_sentence(
        self, info: QuestionInfo, chunk: Chunk, sentence: Sentence, whole_cell: str | None = None
    ) -> list[Candidate]:
        """Candidates of one sentence; ``whole_cell``: the sentence is a table cell, itself a candidate of that type
        too when no typed span covers it (a cell holds one value: "facilities desk" is an answer; a line of code
        is a command)."""
        rank_prior = 1.0 / (1.0 + 0.25 * (chunk.position - 1))
        version = SUPERSEDED_FACTOR if chunk.hit.metadata.get("superseded_by") else 1.0
        out = []
        spans = candidate_spans(sentence.text, info.types)
        lists = list_spans(sentence.text, spans) if info.plural else []  # "which file formats": the whole list
        in_list = [s for s in spans if any(a.start <= s.start and s.end <= a.end for a in lists)]
        spans += lists
        whole = any(s.start == 0 and s.end == len(sentence.text) for s in spans)
        limit = MAX_COMMAND_WORDS if whole_cell == COMMAND else MAX_CELL_WORDS
        if whole_cell in info.types and len(sentence.text.split()) <= limit and not whole:
            spans.append(Span(0, len(sentence.text), frozenset({whole_cell})))
        for span in spans:
            if span.noun_end is not None:
                noun = self._stems(sentence.text[span.end : span.noun_end].strip())
                # "the Geltenir florin": the noun closes the name and belongs to the answer; in "the Blue Lake
                # team" for "which team" it names the kind asked about (a class noun, the head, a question term)
                kind_noun = noun in self._stems.classes or noun == info.head or noun in info.terms
                if noun is not None and not kind_noun:
                    span = replace(span, end=span.noun_end, noun_end=None)
            text = sentence.text[span.start : span.end]
            tokens = normalize_answer(text).split()
            if not tokens or set(tokens) <= info.words:
                continue  # the question's own words are not its answer
            first = bisect.bisect_left(sentence.starts, span.start)  # first word inside ("$25": "25")
            last = bisect.bisect_left(sentence.starts, span.end) - 1
            features = self._features(info, sentence, span, first, last)
            if span in in_list:
                features["fit"] *= LIST_PART  # one item of a list is part of the answer to a plural question
            features.update(rank_prior=rank_prior, version=version)
            score = features["fit"] * mix(features) * version
            out.append(
                Candidate(
                    text,
                    round(score, 6),
                    chunk.hit,
                    chunk.n,
                    sentence.text,
                    sentence.offset + span.start,
                    sentence.offset + span.end,
                    tuple(sorted(span.types)),
                    features,
                )
            )
        return out

    def _features(self, info: QuestionInfo, sentence: Sentence, span: Span, first: int, last: int) -> dict[str, float]:
        """Type fit (with unit, noun-class and referent checks), overlap, proximity and adjacency of a span."""
        fit = max(info.types.get(t, 0.0) for t in span.types)
        if info.unit and span.unit:
            fit *= 1.0 if self._stems(span.unit) == info.unit else 0.7
        overlap, matched = sentence.overlap, sentence.matched
        if span.cue == "cause" and PHRASE in info.types and info.types[PHRASE] == 1.0:
            # "root cause was" answers "what caused" / "which failure was behind": the cue is a matched term.
            overlap = min(1.0, overlap + 1.0 / max(len(info.terms), 1))
            matched = [*matched, first - 1]
        stems = sentence.stems
        before = [stems[first - 1]] if first > 0 and stems[first - 1] is not None else []
        after = [stems[last + 1]] if last + 1 < len(stems) and stems[last + 1] is not None else []
        inside = [stems[last]] if PHRASE in span.types and 0 <= last < len(stems) and stems[last] is not None else []
        adjacent = 0.0
        for noun in before + after:
            kind = self._stems.classes.get(noun)
            if noun == info.head:
                adjacent = 1.0
            elif kind is not None and kind in info.classes:
                adjacent = max(adjacent, 0.8)
            elif kind is not None and info.classes:
                fit *= CLASS_MISMATCH
        if adjacent == 0.0 and info.head in self._stems.classes and span.types & {NAME, ID}:
            fit *= NO_CLASS
        if adjacent == 1.0 and fit > 0.0 and not span.types & QUANTITIES:
            # "the LZ77 algorithm" for "which algorithm": the text says what kind it is ("489 schools" counts them)
            fit = max(fit, HEAD_FIT)
        for noun in after + inside:
            if noun in self._stems.classes and noun in info.terms and noun != info.head and span.types & {NAME, PHRASE}:
                fit *= REFERENT  # the span names what the question describes ("the team that ..."): its subject
        return {"fit": fit, "overlap": overlap, "proximity": proximity(matched, first, last), "adjacent": adjacent}
