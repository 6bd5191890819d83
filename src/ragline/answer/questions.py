"""Question analysis for the extractive reader: what kind of answer a question asks for, and about what.

Expected answer types come from the wh-word and the noun asked about (who -> a name, when -> a date,
how much -> money or a quantity, which code -> a code, what caused -> a cue clause); content terms
are stemmed by the reader's analyzer; literals (codes and numbers: E-4471, M2) and capitalized names
(Grid Ops East) must occur in the chunk an answer comes from; the head noun ("which depot") and its
class (a facility) say what an answer next to a noun of another kind is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragline.answer.spans import (
    CODE,
    COMMAND,
    DATE,
    DURATION,
    EMAIL,
    ID,
    IDENT,
    LOCATION,
    MONEY,
    NAME,
    NUMBER,
    OPTION,
    PERCENT,
    PHRASE,
    TIME,
    VERSION,
    YEAR,
    candidate_spans,
)
from ragline.answer.support import LITERAL, QUESTION_WORDS, asked_text, literal_key, question_names
from ragline.text.analyzer import Analyzer
from ragline.text.normalize import normalize_answer
from ragline.text.sentences import sentence_texts

_QUANTITY = {MONEY: 1.0, PERCENT: 1.0, NUMBER: 0.9, DURATION: 0.9}
_MONEYISH = {MONEY: 1.0, PERCENT: 0.8, NUMBER: 0.5}
# First matching rule wins; each maps answer types to how well they fit the question.
_TYPE_RULES: list[tuple[re.Pattern[str], dict[str, float]]] = [
    (re.compile(p), types)
    for p, types in [
        (r"\b(?:what|which|in what) year\b", {YEAR: 1.0, DATE: 0.8}),
        (r"\bhow (?:long|often|quickly|soon|frequently)\b|\bhow much (?:notice|time)\b", {DURATION: 1.0, NUMBER: 0.4}),
        (r"\b(?:percentage|percent|share|proportion)\b", {PERCENT: 1.0, NUMBER: 0.5}),
        (r"\bhow many\b", {NUMBER: 1.0, DURATION: 1.0, PERCENT: 0.6, MONEY: 0.4}),
        (r"\bhow (?:much|large|big|high|far|old)\b", {MONEY: 1.0, NUMBER: 0.8, DURATION: 0.8, PERCENT: 0.8}),
        # "which version", "since which version": a release number, not the product's name beside it
        (r"\b(?:which|what)\b[^?]*\bversions?\b", {VERSION: 1.0, NUMBER: 0.5}),
        # "which option", "what flag": a command-line option ("-z", "--disable-gpu"); after
        # "version": "since which version does tar have an option ..." asks for the version
        (r"\b(?:which|what)\b[^?]*\b(?:options?|flags?|switch(?:es)?)\b", {OPTION: 1.0, NAME: 0.6, CODE: 0.5}),
        # "which command", "which Debian package", "what utility": a command or an identifier, however it is cased
        (
            r"\b(?:which|what)\s+(?:[\w-]+\s+)?(?:commands?|packages?|utilit(?:y|ies)|tools?|programs?|librar(?:y|ies)|modules?"
            r"|scripts?|daemons?|services?|functions?|methods?|variables?)\b",
            {COMMAND: 1.0, IDENT: 1.0, NAME: 0.9, OPTION: 0.6, LOCATION: 0.6, CODE: 0.5},
        ),
        (r"\b(?:extension|phone|telephone|number)\b", {ID: 1.0, NUMBER: 0.4, CODE: 0.5}),
        (r"\bwho(?:m|se)?\b", {NAME: 1.0, PHRASE: 0.7}),
        (r"\b(?:cause|caused|why|failure|reason|behind)\b", {PHRASE: 1.0}),
        (
            r"\bhow (?:do|can|should|would) (?:i|we|you)\b",
            {COMMAND: 1.0, ID: 1.0, EMAIL: 1.0, OPTION: 0.9, NAME: 0.6, IDENT: 0.6, PHRASE: 0.5},
        ),
        (r"\bdeadline\b", {DURATION: 1.0, DATE: 1.0, TIME: 0.8}),
        (r"\bwhen\b|\b(?:what|which) (?:date|day)\b", {DATE: 1.0, TIME: 0.9, DURATION: 0.8, YEAR: 0.8}),
        # after "who" and "when": in "who sent the e-mail about ...?" and "when was the e-mail sent?" the e-mail is
        # the thing asked about, not the kind of answer
        (r"\b(?:e-?mail|address)\b", {EMAIL: 1.0, NAME: 0.5}),
        (r"\b(?:what|which) (?:code|error|site|substation|incident|id)\b", {CODE: 1.0}),
        (r"\b(?:amount|allowance|budget|stipend|salary|pay|band|price|cost|fee|bonus)\b", _MONEYISH),
        (r"\b(?:limit|threshold|cap|rate|quota|size|capacity|length|duration|minimum|maximum)\b", _QUANTITY),
        (r"\b(?:time|hours)\b", {TIME: 1.0, DURATION: 0.9}),
        (r"\bwhere\b", {NAME: 1.0, LOCATION: 1.0, EMAIL: 0.9, PHRASE: 0.5}),
    ]
]
_QUANTITY_TYPES = {MONEY, PERCENT, NUMBER, DURATION}
_NUMBER_WORD = re.compile(
    r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|thirty|forty|fifty"
    r"|sixty|seventy|eighty|ninety|hundreds?|thousands?|millions?|billions?|trillions?|dozens?|half|quarter"
    r"|several|few|couple|once|twice|single|double|triple|none|no)\b"
)
_TIME_UNIT_WORD = re.compile(r"\b(?:second|minute|hour|day|night|week|month|year|decade|century|centuries)s?\b")
_DEFAULT_TYPES = {NAME: 0.9, PHRASE: 0.6, NUMBER: 0.5, MONEY: 0.5, DATE: 0.5, DURATION: 0.5, CODE: 0.5}

# Nouns that name a kind of thing: an answer next to one of another kind is not what was asked for.
_NOUN_CLASSES = {
    "org": "team crew group squad unit department division company firm vendor supplier desk committee board",
    "facility": "depot site substation office building centre center room warehouse yard plant station",
    "area": "city town district region area county country",
    "venue": "venue garden hall park hotel restaurant",
    "person": "person manager lead leader director owner engineer officer head supervisor commander",
    "product": "app application client tool software program portal system platform device",
    "contact": "extension number phone telephone hotline",
}
_IMPLIED_CLASSES = {"who": {"person", "org"}, "whom": {"person", "org"}, "where": {"facility", "area", "venue"}}
_AUX = set("is are was were do does did can could should must will would has have had may might".split())
WORD = re.compile(r"\w+")  # a word, as the reader counts them
_PARTS = re.compile(r"[-/._]")  # "faiss-cpu" is "faiss" and "cpu" too: neither part answers a question naming it


@dataclass(frozen=True, slots=True)
class QuestionInfo:
    """What the reader takes from a question."""

    text: str
    types: dict[str, float]  # answer type -> fit
    terms: frozenset[str]  # content terms, stemmed
    literals: tuple[str, ...]  # tokens with a digit, as keys ("e4471", "m2")
    names: tuple[str, ...]  # capitalized names, normalized ("grid ops east")
    head: str | None  # stem of the noun asked about: "which depot" -> "depot"
    classes: frozenset[str]  # noun classes the answer may be ("facility" for a depot, "person"/"org" for who)
    unit: str | None  # stem of "how many <unit>"
    words: frozenset[str]  # normalized words: an answer made only of these is the question itself
    plural: bool = False  # it asks for several things ("which file formats", "which packages"): a list answers it


class Stems:
    """Per-word stems through the reader's analyzer, cached (None: a stopword); noun classes by stem."""

    def __init__(self, analyzer: Analyzer) -> None:
        self.analyzer = analyzer
        self.cache: dict[str, str | None] = {}
        self.classes = {self(w): kind for kind, words in _NOUN_CLASSES.items() for w in words.split()}

    def __call__(self, word: str) -> str | None:
        if word not in self.cache:
            terms = self.analyzer(word)
            self.cache[word] = terms[0] if terms else None
        return self.cache[word]

    def terms(self, text: str) -> set[str]:
        return {s for w in WORD.findall(text) if (s := self(w)) is not None}


def expected_types(question: str) -> dict[str, float]:
    """The answer types ``question`` accepts, each with its fit: the first matching rule's, else the default."""
    lowered = question.lower()
    return next((t for pattern, t in _TYPE_RULES if pattern.search(lowered)), _DEFAULT_TYPES)


def fits_asked_type(question: str, answer: str) -> bool:
    """False when ``question`` asks for a quantity alone (an amount, a count, a rate, a duration) and ``answer``
    holds none: no number (a digit inside a code such as "T3" or "SS-833" is none), no number word, no unit of
    time for a duration. "Elena Halloran" is no pay band, nor is job grade "T3", whoever's page it came from.
    True for any other question (dates are left alone: "in March" has no pattern)."""
    types = expected_types(question)
    if not set(types) <= _QUANTITY_TYPES:
        return True
    lowered = answer.lower()
    if candidate_spans(answer, _QUANTITY_TYPES) or _NUMBER_WORD.search(lowered):
        return True
    return DURATION in types and bool(_TIME_UNIT_WORD.search(lowered))


def analyze_question(question: str, stems: Stems) -> QuestionInfo:
    """Expected types, content terms, literals, names, head noun and unit of ``question``."""
    lowered = question.lower()
    types = expected_types(question)
    ignore = stems.terms(QUESTION_WORDS)
    terms = frozenset(t for t in stems.terms(asked_text(question)) if t not in ignore and len(t) > 1)
    literals = tuple(dict.fromkeys(literal_key(t) for t in LITERAL.findall(question) if any(c.isdigit() for c in t)))
    head_word = _head_noun(question)
    head = stems(head_word) if head_word else None
    classes: set[str] = set()
    if head in stems.classes:
        classes = {stems.classes[head]}
    elif wh := re.search(r"\b(who|whom|where)\b", lowered):
        classes = _IMPLIED_CLASSES[wh.group(1)]
    unit = _unit_noun(lowered)
    return QuestionInfo(
        text=question,
        types=dict(types),
        terms=terms,
        literals=literals,
        names=question_names(question),
        head=head,
        classes=frozenset(classes),
        unit=stems(unit) if unit else None,
        words=frozenset(normalize_answer(question).split())
        | frozenset(normalize_answer(_PARTS.sub(" ", question)).split()),
        plural=_asks_plural(lowered, stems),
    )


_PHRASE_END = {"?", "of", "in", "for", "from", "on", "at", "to", "with", "that", "which", "by"}  # after a noun phrase


def _asks_plural(lowered: str, stems: Stems) -> bool:
    """The noun phrase after "which" / "what" ends in a plural ("which C libraries does", "what file formats can",
    "which versions of", "which packages let"): the word right after it or before an auxiliary or a preposition,
    ending in s and stemming as it does without the s ("formats" as "format"; not "status"). "Which tool returns
    ..." names no plural."""
    match = re.search(r"\b(?:which|what)((?:\s+[a-z][\w-]*){1,4})", lowered)
    words = match.group(1).split() if match else []
    for i, (word, after) in enumerate(zip(words, words[1:] + ["?"])):
        if word in _AUX:
            return False  # "what does ...", "which is ...": no noun phrase
        stem = stems(word)
        plural = len(word) > 3 and word.endswith("s") and stem is not None and stem == stems(word[:-1])
        if (i == 0 and plural) or after in _AUX or after in _PHRASE_END:
            return plural
    return False


_WHAT_IS = re.compile(
    r"\bwhat (?:is|are|was|were) (?:the |a |an )?([\w\s-]+?)(?=\s+(?:in|of|for|under|at|on|to|from|with|per|by)\b|\?|$)"
)


def _unit_noun(lowered: str) -> str | None:
    """The unit of "how many ...": the first plural among the next three words ("how many remote days")."""
    match = re.search(r"\bhow many ((?:[a-z]+\s*){1,3})", lowered)
    if not match:
        return None
    words = match.group(1).split()
    return next((w for w in words if w.endswith("s") and w not in _AUX), words[0])


def _head_noun(question: str) -> str | None:
    """The noun asked about: "which depot", "what extension", "what is the receipt threshold in ..."."""
    lowered = question.lower()
    match = re.search(r"\b(?:which|what)\s+([a-z][\w-]*)", lowered)
    if match and match.group(1) not in _AUX:
        return match.group(1)
    match = _WHAT_IS.search(lowered)
    return match.group(1).split()[-1] if match else None


YESNO, SHORT, FULL = "yesno", "short", "full"
_PROCEDURE = re.compile(r"^\s*how (?:do|can|should|would|to)\b")


def answer_kind(question: str) -> str:
    """What an answer to ``question`` looks like: ``yesno`` (``is_polar``: "Are X and Y both ...?"), ``short``
    (a factoid: its first answer-type rule expects a name, number, date, code or the like, not a phrase) or
    ``full`` (a cause, a procedure, anything else: a sentence)."""
    if is_polar(question):
        return YESNO
    lowered = question.lower()
    if is_procedure(lowered):
        return FULL
    types = next((t for pattern, t in _TYPE_RULES if pattern.search(lowered)), None)
    if types is None or max(types, key=types.__getitem__) == PHRASE:
        return FULL
    return SHORT


_POLAR = re.compile(rf"^\s*(?:{'|'.join(sorted(_AUX | {'shall'}))})\b", re.IGNORECASE)  # an auxiliary opens it
_OPTIONS = re.compile(r"\bor\b", re.IGNORECASE)


def is_polar(question: str) -> bool:
    """A yes/no question: its last sentence (the question itself: "X has an OBE. Does Y also have one?") opens
    with an auxiliary verb and offers no alternatives ("Was it directed by A or B?" asks for a name)."""
    sentences = sentence_texts(question.strip())
    asked = sentences[-1] if sentences else question
    return bool(_POLAR.match(asked)) and not _OPTIONS.search(asked)


def is_procedure(question: str) -> bool:
    """Does ``question`` ask how to do something ("How do I ...?", "How to ...")? Its answer is steps."""
    return bool(_PROCEDURE.search(question.lower()))


_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_WH = ("which", "who", "what", "whose", "whom")
_RUN_OF_NAMES = re.compile(r"((?:[A-Z0-9][\w'.&-]*\s+)*[A-Z0-9][\w'.&-]*)$")


def offered_options(question: str) -> tuple[str, str] | None:
    """The two alternatives a "which ..., A or B?" question offers (A or B is its answer), else None.

    B runs from " or " to the question mark; A is what follows the last comma before " or " (", the Pterocarya
    or the Cotula?"), else, in a "which" question, the run of capitalized words before it ("first The Exies or
    Circus Diablo?"); a leading article is dropped. None for a question with no wh-word ("Does it run daily or
    weekly?"), and for " or " inside a clause of another wh-question ("What machine does not define BQP or
    QMA?": its answer is neither).
    """
    text = question.strip().rstrip("?").strip()
    wh = re.match(rf"^\s*({'|'.join(_WH)})\b", text, re.IGNORECASE)
    if " or " not in text or not wh:
        return None
    before, after = text.rsplit(" or ", 1)
    if "," in before:
        first = before.rsplit(",", 1)[1]
    elif wh.group(1).lower() != "which":
        return None
    else:
        run = _RUN_OF_NAMES.search(before)
        if run is None:
            return None
        first = run.group(1)
        while first and first.split()[0].lower() in _WH:
            first = first.split(" ", 1)[1] if " " in first else ""
    options = tuple(_ARTICLE.sub("", part.strip()) for part in (first, after))
    return (options[0], options[1]) if all(options) else None
