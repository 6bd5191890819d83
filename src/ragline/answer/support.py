"""Question-answering support: does a cited passage answer *this* question with this answer?

Finding the answer's words in the cited text is not enough: "OSI Approved" occurs in a package's
metadata, and "GNU" in its license text, whatever was asked. A passage supports an answer to a
question when the answer lies in a sentence, or next to one (``neighbours`` sentences either side),
that carries the question: most of its content terms, or its named entities and literals. That is
the locality test of answer-sentence selection (the answer-bearing sentence shares the question's
terms; Wang et al. 2007, Yao et al. 2013) and DrQA's exact-match feature (Chen et al. 2017), put as a
check on a citation rather than a score. The passage's title, and the Markdown headings above a
window, count as part of it: a Wikipedia paragraph rarely repeats its article's name, a package's
metadata line never its package's, a report's sentence seldom its section's. A Markdown table row is a window
of its own (the rows beside it are other records), and the headers of its first column and of the answer's
column count as its label:
"| Zurich | $95 |" under "| City | Per diem |" answers "What is the per diem for Zurich?".

- **Question content terms**: the question analyzed by the project's analyzer (stopwords out,
  Snowball stems), minus the words that say what kind of answer is wanted ("what", "who", "how
  many", auxiliaries: ``QUESTION_WORDS``), and without the phrase naming the answer's type ("in which
  year").
- **The answer's type word** (``focus_optional``): the word after an opening "which"/"what" ("Which *company*
  sponsors Numba?", "What *kind* of editor is ed?") names the answer's type, which the sentence stating the
  answer seldom repeats ("Numba is ... sponsored by Anaconda, Inc."). A generated answer (an LLM's, which read
  the question's type word) needs it only where the window has it; a span picked by rules needs it as any
  other term, since nothing else checks that the span is of that type (on the selection sets, each span the
  relaxed check let through was of another type: "GNU" for "Which program ...?").
- **Inflections are one word**: "leads", "led" and "leader" cover one another. The stemmer joins
  regular forms ("leads"/"leading"); ``word_forms`` adds English irregular past forms ("led" ->
  "lead", ``IRREGULAR_PAST``) and agent nouns ("leader" -> "lead", "ruler" -> "rule").
- **Entities and literals**: tokens with a digit ("E-4471", "3.11"), quoted strings and capitalized
  names that do not start the question ("Grid Ops East", "Oksana").
- **Bridges**: "Who leads the team that maintains SS-833?" reaches its answer through a thing it describes (the
  team). A sentence about that thing alone ("SS-833 is maintained by Network Care North") carries the
  description's terms and literal, not what is asked of it: when the question describes something with a
  relative clause, a window must also hold a content term of the part before it ("leads"; ``asked_part``).
- **Opposites**: a window (or the answer's own sentence) that says the opposite of a question's word and never the
  word ("before" for "after", "smallest" for "largest"; ``text.opposites``) answers another question, however many
  terms it shares.
- **Rule**: supported when, in a window holding the answer, the question's content terms are
  covered at least ``min_coverage``; or every literal of the question occurs and the terms are
  covered at least ``literal_coverage``; or every entity (names, quoted strings, literals) occurs
  and the terms are covered at least ``entity_coverage``; or the answer is the value of a "Label: value" line
  whose label is a question term (package metadata's "License: BSD-3-Clause" for "Under which license is httpx
  distributed?": the label stands for the predicate), every entity occurs and at most one term is missing (the
  verb the label replaces). The thresholds were set by
  ``benchmarks/qa_support.py --calibrate`` on calibration data only (BENCHMARKS.md, "Question-answering
  support").

The answer "lies in" a window when its terms do, by the lexical rule of ``contains_answer_terms``
(all terms of a short answer; most terms and every number of a sentence-like one), so one rule
serves span readers and LLM readers alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ragline.answer.spans import NAME_CONNECTORS, NOT_NAMES, TOKEN, sentences
from ragline.text.analyzer import Analyzer, get_analyzer
from ragline.text.code import CODE_SPAN
from ragline.text.normalize import normalize_answer
from ragline.text.opposites import lower_words, turned_word
from ragline.text.sentences import FIELD_LINE
from ragline.text.tables import Row, table_rows

SHORT_ANSWER = 4  # distinct terms; up to this many, all must be in the text
ANSWER_TERM_SHARE = 0.8  # share of distinct terms a longer answer needs
# Calibrated (benchmarks/qa_support.py --calibrate) on the Orrin training world, SQuAD articles 1-3,
# HotpotQA questions 1-50 and the calibration half of the real-document set; never on reported data.
MIN_COVERAGE = 0.8
ENTITY_COVERAGE = 0.8  # calibrated equal to MIN_COVERAGE: names alone did not help on the calibration sets
LITERAL_COVERAGE = 0.2
NEIGHBOURS = 1

# Words of a question that say what kind of answer it wants, or link its parts, not what it is about (pronouns
# too: the English analyzer stems "its" to "it" after its stopwords are out).
QUESTION_WORDS = (
    "what which who whom whose when where why how much many long often quickly soon do does did i me my we our "
    "us you your can could should would must will shall may might need get is are was were be been has have had "
    "there someone anyone something still also just exactly please under above below over after before from per "
    "up about within without between during until since through out it its he him his she her they them their"
)
# Nouns that name the value a question asks for ("the receipt threshold", "the daily meal limit"): an answer
# holding a number is that value, and the sentence stating it seldom repeats the noun ("above $60"; "requires
# Python 3.8+" for the minimum version).
VALUE_NOUNS = (
    "amount limit threshold cap ceiling maximum minimum rate fee cost price value total sum quota allowance version"
)

# English irregular past tenses and participles -> the base verb ("Peranos is led by" answers "Who leads
# Peranos?"). Forms that are also common words of another sense ("found", "left", "saw", "rose") are left out.
IRREGULAR_PAST = dict(
    pair.split(":")
    for pair in """
    led:lead won:win wrote:write written:write made:make built:build held:hold began:begin begun:begin
    bought:buy brought:bring chose:choose chosen:choose drew:draw drawn:draw drove:drive driven:drive
    fought:fight gave:give given:give grew:grow grown:grow kept:keep knew:know known:know lost:lose met:meet
    paid:pay ran:run said:say sold:sell sent:send spoke:speak spoken:speak stood:stand taught:teach told:tell
    took:take taken:take thought:think threw:throw thrown:throw became:become came:come flew:fly flown:fly
    sang:sing sung:sing struck:strike sought:seek spent:spend wore:wear worn:wear ate:eat eaten:eat fed:feed
    hid:hide hidden:hide shot:shoot swore:swear sworn:swear understood:understand
""".split()
)
# "In which year ...": the noun names the answer's type, as "when" does; the answer (1723) is what covers it.
_TYPE_PHRASE = re.compile(r"\b(?:in\s+)?(?:which|what)\s+year\b", re.IGNORECASE)
# The word after an opening "which"/"what" ("Which company sponsors Numba?", "What kind of editor ..."): the
# answer's type, which the sentence stating the answer seldom repeats ("sponsored by Anaconda, Inc."); a
# preposition may come first.
_FOCUS = re.compile(
    r"^\W*(?:(?:in|with|under|for|of|from|to|on|at|by|into|through)\s+)?(?:which|what)\s+([^\W\d_][\w-]*)",
    re.IGNORECASE,
)


def asked_text(question: str) -> str:
    """The question without the phrase that names its answer's type ("in which year"): its content."""
    return _TYPE_PHRASE.sub(" ", question)


def focus_word(question: str) -> str:
    """The word naming the answer's type right after an opening "which"/"what" ("company"), else ""."""
    match = _FOCUS.match(asked_text(question))
    return match.group(1) if match else ""


LITERAL = re.compile(r"[\w][\w\-./:]*[\w]|\w")
_QUOTED = re.compile(r"[\"“”]([^\"“”]{2,80})[\"“”]|(?<!\w)'([^']{2,80})'(?!\w)")
_HEADING = re.compile(r"^\s*#+\s*(.+)$", re.MULTILINE)
# A relative clause after a noun phrase: "the team that maintains", "the woman who portrayed", "the team
# responsible for"; the article opening the noun phrase is found within a few words before it.
_RELATIVE = re.compile(r"\s(?:that|which|who|whom|whose|responsible for|in charge of)\s", re.IGNORECASE)
_ARTICLE_BEFORE = re.compile(r"\b(?:the|a|an)\s+(?:[\w'-]+\s+){0,3}$", re.IGNORECASE)


def asked_part(question: str) -> str:
    """The part of ``question`` before a noun phrase it describes with a relative clause ("Who leads" of "Who leads
    the team that maintains SS-833?"; "Who is the lead of" of "... the team responsible for ..."), else ""."""
    for clause in _RELATIVE.finditer(question):
        article = _ARTICLE_BEFORE.search(question, 0, clause.start() + 1)
        if article is not None:
            return question[: article.start()]
    return ""


def literal_key(token: str) -> str:
    """A literal as a comparable key: "E-4471" -> "e4471"."""
    return re.sub(r"[^0-9a-z]", "", token.lower())


def norm_phrase(text: str) -> str:
    """Lowercase words separated by single spaces: "Grid Ops-East" -> "grid ops east"."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def question_names(question: str) -> tuple[str, ...]:
    """Capitalized word runs that do not start a sentence; all-caps acronyms (VPN, TV) are common nouns."""
    names: list[str] = []
    run: list[str] = []
    tokens = [m.group() for m in TOKEN.finditer(question)]
    for i, word in enumerate(tokens):
        initial = i == 0 or tokens[i - 1] in {".", "?", "!", ":"}
        titlecase = word[0].isupper() and any(c.islower() for c in word) and not any(c.isdigit() for c in word)
        connector = bool(run) and word in NAME_CONNECTORS and i + 1 < len(tokens) and tokens[i + 1][0].isupper()
        if (titlecase and not initial and word not in NOT_NAMES) or connector:
            run.append(word)
            continue
        if run:
            names.append(norm_phrase(" ".join(run)))
        run = []
    if run:
        names.append(norm_phrase(" ".join(run)))
    return tuple(dict.fromkeys(names))


def support_terms(text: str, analyzer: str | Analyzer = "english") -> list[str]:
    """SQuAD-normalized, then analyzed terms; the normalized words when analysis leaves nothing."""
    normalized = normalize_answer(text)
    return get_analyzer(analyzer)(normalized) or normalized.split()


def contains_answer_terms(answer: str, text: str, analyzer: str | Analyzer = "english", question: str = "") -> bool:
    """Do the terms of ``answer`` occur in ``text``? (lexical: says nothing about the question)

    Every term of a short answer (up to ``SHORT_ANSWER`` distinct terms) must occur; a longer,
    sentence-like answer needs ``ANSWER_TERM_SHARE`` of them and all of its numbers and codes. Terms
    the ``question`` already has are not required: an LLM restates the question ("The receipt
    threshold is $25"), and the evidence need not use the question's words. An answer that quotes `code` says
    the code: every term of its code spans must occur, and the words around them ("you can use the ... command")
    are not required.
    """
    codes = CODE_SPAN.findall(answer)
    asked = set(support_terms(question, analyzer) if question else ())
    wanted = set(support_terms(" ".join(codes) if codes else answer, analyzer)) - asked
    if not wanted:
        return False
    # Raw analysis too: SQuAD normalization glues "Jégou](https://..." into one token.
    have = set(support_terms(text, analyzer)) | set(normalize_answer(text).split()) | set(get_analyzer(analyzer)(text))
    missing = wanted - have
    if not missing:
        return True
    if codes or len(wanted) <= SHORT_ANSWER or any(any(ch.isdigit() for ch in term) for term in missing):
        return False
    return 1 - len(missing) / len(wanted) >= ANSWER_TERM_SHARE


@dataclass(frozen=True, slots=True)
class QuestionKeys:
    """What a supporting passage must carry of a question: its content terms, its entities and literals."""

    terms: frozenset[str]
    entities: tuple[str, ...]  # normalized names and quoted strings ("grid ops east"), literal keys ("e4471")
    literals: tuple[str, ...]  # the literal keys alone: a code or a number is far more specific than a name
    asked: frozenset[str] = frozenset()  # terms before a described noun phrase: one must be in the window
    focus: frozenset[str] = frozenset()  # the answer's type ("company"), where optional: counted if present
    words: frozenset[str] = frozenset()  # its lower-cased words, for the opposites a window may say instead


@dataclass(frozen=True, slots=True)
class SupportVerdict:
    """The check's decision and why: the best window's term coverage and entity share, and its text."""

    supported: bool
    coverage: float  # share of the question's content terms in the best answer-bearing window (title included)
    entities: float | None  # share of the question's entities there (None: the question names none)
    literals: float | None  # share of its literals there (None: it has none)
    window: str  # the sentences of that window ("" when no window holds the answer)
    reason: str
    bridge: bool = False  # the window holds what the question describes, not what it asks of it


class SupportCheck:
    """``check(question, answer, passage, title)``: a ``SupportVerdict`` (see the module docstring)."""

    def __init__(
        self,
        min_coverage: float = MIN_COVERAGE,
        entity_coverage: float = ENTITY_COVERAGE,
        literal_coverage: float = LITERAL_COVERAGE,
        neighbours: int = NEIGHBOURS,
        analyzer: str | Analyzer = "english",
        focus_optional: bool = False,
    ) -> None:
        self.focus_optional = focus_optional
        self.min_coverage = min_coverage
        self.entity_coverage = entity_coverage
        self.literal_coverage = literal_coverage
        self.neighbours = neighbours
        self.analyzer = get_analyzer(analyzer)
        self._ignore = set(self.analyzer(QUESTION_WORDS))
        self._value_nouns = frozenset(self.analyzer(VALUE_NOUNS))
        self._base = {
            self.analyzer(past)[0]: self.analyzer(base)[0]
            for past, base in IRREGULAR_PAST.items()
            if self.analyzer(past) and self.analyzer(base)
        }

    def config(self) -> dict[str, float | int | str]:
        return {
            "min_coverage": self.min_coverage,
            "entity_coverage": self.entity_coverage,
            "literal_coverage": self.literal_coverage,
            "neighbours": self.neighbours,
            "analyzer": self.analyzer.name,
            "focus_optional": self.focus_optional,
        }

    def keys(self, question: str) -> QuestionKeys:
        """Content terms (stemmed, question words out) and entities of ``question``."""
        terms = frozenset(t for t in self.analyzer(asked_text(question)) if t not in self._ignore and len(t) > 1)
        literals = tuple(
            dict.fromkeys(literal_key(t) for t in LITERAL.findall(question) if any(c.isdigit() for c in t))
        )
        quoted = [norm_phrase(a or b) for a, b in _QUOTED.findall(question)]
        entities = tuple(dict.fromkeys(e for e in [*question_names(question), *quoted, *literals] if e))
        asked = terms & frozenset(self.analyzer(asked_part(question)))
        focus = terms & frozenset(self.analyzer(focus_word(question))) if self.focus_optional else frozenset()
        return QuestionKeys(terms, entities, literals, asked, focus, lower_words(question))

    def check(self, question: str, answer: str, passage: str, title: str = "", at: int | None = None) -> SupportVerdict:
        """Does ``passage`` (titled ``title``) answer ``question`` with ``answer``?

        ``at``: the character offset of the answer in ``passage`` when the reader knows it (a span
        reader does); then only the windows around that sentence count.
        """
        windows = self.windows(question, answer, passage, title, at)
        if not windows:
            keys = self.keys(question)
            shares = (0.0 if keys.entities else None, 0.0 if keys.literals else None)
            return SupportVerdict(False, 0.0, *shares, "", "the answer is not in the passage")
        return max((self.decide(*w) for w in windows), key=lambda v: (v.supported, v.coverage))

    def windows(
        self, question: str, answer: str, passage: str, title: str = "", at: int | None = None
    ) -> list[tuple[float, float | None, float | None, str, bool, bool, str]]:
        """(term coverage, entity share, literal share, text, bridge, field, turned) of each window whose centre
        sentence holds ``answer``; bridge: the question describes a thing (``asked_part``) and the window holds none
        of the terms asked of it; field: the answer is the value of a field the question names, and the window misses
        at most one of its terms; turned: the question's word the window says the opposite of, or ""."""
        keys = self.keys(question)
        if any(c.isdigit() for c in answer):
            # the value is the threshold, limit or amount asked about: the passage need not name it so
            keys = replace(keys, terms=keys.terms - self._value_nouns, asked=keys.asked - self._value_nouns)
        bounds = sentences(passage) or ([(0, len(passage))] if passage.strip() else [])
        if at is not None:
            centres = [i for i, (a, b) in enumerate(bounds) if a <= at < b or (a <= at and i == len(bounds) - 1)]
        else:
            centres = list(range(len(bounds)))
        headings = [(m.start(), m.group()) for m in _HEADING.finditer(passage)]
        rows = table_rows(passage) if "|" in passage else {}
        found = []
        for i in centres:
            row = rows.get(passage.rfind("\n", 0, bounds[i][0]) + 1) if rows else None
            if row is not None:
                cell = self._row_window(question, answer, passage, title, row, at, headings)
                if cell is not None:
                    text, label = cell
                    coverage, entities, literals, bridge, _ = self._cover(keys, text, label)
                    found.append((coverage, entities, literals, text, bridge, False, turned_word(keys.words, text)))
                continue
            lo, hi = max(0, i - self.neighbours), min(len(bounds), i + self.neighbours + 1)
            centre = passage[bounds[i][0] : bounds[i][1]]
            if not contains_answer_terms(answer, centre, self.analyzer, question):
                continue  # the answer lies in the centre sentence; the question may sit beside it
            window = passage[bounds[lo][0] : bounds[hi - 1][1]]
            # The headings above a window name what it is about, as the title does.
            label = " ".join([title, *(h for start, h in headings if start < bounds[lo][0])])
            coverage, entities, literals, bridge, missing = self._cover(keys, window, label)
            # the label stands for the question's predicate ("License" for "distributed under which license"):
            # one term may be missing (the verb), no name ("Version: 2.4" does not answer "which Python version")
            field = missing <= 1 and entities in (None, 1.0) and self._names_field(keys, centre, answer)
            # the answer's own sentence may say the opposite though a neighbour says the word
            turned = turned_word(keys.words, window) or turned_word(keys.words, centre)
            found.append((coverage, entities, literals, window, bridge, field, turned))
        return found

    def _names_field(self, keys: QuestionKeys, sentence: str, answer: str) -> bool:
        """Is ``answer`` the value of a "Label: value" line (or its start: "Tom Christie" of "Tom Christie <tom@...>")
        whose label is a term of the question? Prose with a colon ("Major operators include: Metro Trains ...,
        V/Line ...") holds its answers further in, and is no record."""
        field = FIELD_LINE.match(sentence)
        if field is None or not keys.terms & set(self.analyzer(field.group(1))):
            return False
        value, wanted = normalize_answer(field.group(2)), normalize_answer(answer)
        return bool(wanted) and (value == wanted or value.startswith(wanted + " "))

    def _row_window(
        self, question: str, answer: str, passage: str, title: str, row: Row, at: int | None, headings: list
    ) -> tuple[str, str] | None:
        """A table row is a window of its own (the rows beside it are other records), and the header of the
        answer's column is part of its label, as headings are: (row text, label), or None without the answer."""
        centre = passage[row.start : row.end]
        if not contains_answer_terms(answer, centre, self.analyzer, question):
            return None
        if at is not None:
            columns = [row.column_of(at)]
        else:
            columns = [
                j
                for j, (a, b) in enumerate(row.cells)
                if contains_answer_terms(answer, passage[a:b], self.analyzer, question)
            ]
        # the first column's name names the row ("Team" for "| Negron | 20 |"), the answer's column its value
        columns = [0, *(j for j in columns if j)]
        header = [passage[slice(*row.header[j])] for j in columns if j is not None and j < len(row.header)]
        label = " ".join([title, *(h for start, h in headings if start < row.start), *header])
        return centre, label

    def __call__(self, question: str, answer: str, passage: str, title: str = "", at: int | None = None) -> bool:
        return self.check(question, answer, passage, title, at).supported

    def decide(
        self,
        coverage: float,
        entities: float | None,
        literals: float | None,
        window: str = "",
        bridge: bool = False,
        field: bool = False,
        turned: str = "",
    ) -> SupportVerdict:
        """The verdict on one window from its term coverage and its entity and literal shares."""
        if turned:
            reason = f"the answer's sentence says the opposite of the question's {turned!r}"
            return SupportVerdict(False, coverage, entities, literals, window, reason)
        if bridge:
            reason = "the answer's sentence is about what the question describes, not what it asks of it"
            return SupportVerdict(False, coverage, entities, literals, window, reason, bridge=True)
        if coverage >= self.min_coverage:
            reason = "the answer's sentence carries the question"
        elif literals == 1.0 and coverage >= self.literal_coverage:
            reason = "the answer's sentence has the question's literals"
        elif entities == 1.0 and coverage >= self.entity_coverage:
            reason = "the answer's sentence names the question's entities"
        elif field:
            reason = "the answer is the value of a field the question names"
        else:
            return SupportVerdict(
                False, coverage, entities, literals, window, "the answer's sentence does not carry the question"
            )
        return SupportVerdict(True, coverage, entities, literals, window, reason)

    def word_forms(self, term: str) -> set[str]:
        """The keys under which a stemmed ``term`` matches its inflections: itself, the base verb of an
        irregular past form ("led" -> "lead"), the verb of an agent noun ("leader" -> "lead", "ruler" -> "rule")."""
        forms = {term, self._base.get(term, term)}
        if len(term) >= 5 and term.endswith(("er", "or")):
            forms |= {term[:-2], term[:-1]}  # "leader" -> "lead"; "ruler" -> "rule" (the stemmer keeps "rule")
        return forms

    def _cover(self, keys: QuestionKeys, text: str, label: str) -> tuple[float, float | None, float | None, bool, int]:
        """Term coverage, entity and literal shares of a window (with its label), whether it is a bridge (it holds
        none of the terms asked of what the question describes, ``asked_part``), and how many terms it misses."""
        have = set(self.analyzer(text)) | set(self.analyzer(label))
        have_forms = {form for term in have for form in self.word_forms(term)}

        def has(term: str) -> bool:
            return term in have or bool(self.word_forms(term) & have_forms)

        def held(terms: frozenset[str]) -> int:
            return sum(1 for term in terms if has(term))

        bridge = bool(keys.asked) and not held(keys.asked)
        terms = keys.terms - {t for t in keys.focus if not has(t)}  # a missing type word is no gap
        found = held(terms)
        coverage = found / len(terms) if terms else 0.0
        missing = len(terms) - found
        if not keys.entities:
            return coverage, None, None, bridge, missing
        padded = f" {norm_phrase(text)} {norm_phrase(label)} "
        keyed = {literal_key(t) for t in LITERAL.findall(f"{text} {label}")}
        entities = sum(f" {e} " in padded or e in keyed for e in keys.entities) / len(keys.entities)
        literals = sum(e in keyed for e in keys.literals) / len(keys.literals) if keys.literals else None
        return coverage, entities, literals, bridge, missing


_DEFAULT: dict[bool, SupportCheck] = {}


def default_check(focus_optional: bool = False) -> SupportCheck:
    """The shared check with the calibrated thresholds (built once: the analyzer caches its stems); with
    ``focus_optional`` for generated answers (see the module docstring)."""
    if focus_optional not in _DEFAULT:
        _DEFAULT[focus_optional] = SupportCheck(focus_optional=focus_optional)
    return _DEFAULT[focus_optional]


def answers_question(question: str, answer: str, passage: str, title: str = "", at: int | None = None) -> bool:
    """``default_check()(question, answer, passage, title, at)``: the passage answers this question."""
    return default_check()(question, answer, passage, title, at)
