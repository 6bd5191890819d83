"""Candidate answers: the sentences of a text and the typed, minimal spans in each.

The extractive reader (``ragline.answer.extractive``) scores what this module proposes. A span is the
smallest piece of a sentence that can answer a question of some type: "SS-339", "$70", "4 weeks",
"Grid Ops East" -- never the whole sentence; a cause is the clause after its cue ("a memory leak in the report
scheduler on web-45"). Patterns are tried in priority order (URLs and paths, e-mail, money ... codes, options,
versions, identifiers, numbers), and a later match overlapping an earlier one is dropped; terms marked in Markdown
(```code```, ``**bold**``, ``[[link]]``), then capitalized-name runs outside them (initials included), and cue
clauses ("root cause was ...", "by ...") come last. :func:`list_spans` joins candidates into lists ("A, B and C"),
``ragline.text.code`` finds the lines of code a how-to question is answered by.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ragline.guard.firewall import REDACTED
from ragline.text.sentences import split_sentences

# --- answer types ----------------------------------------------------------------------------------

NAME, PHRASE, CODE, EMAIL = "name", "phrase", "code", "email"
MONEY, PERCENT, NUMBER = "money", "percent", "number"
DATE, YEAR, TIME, DURATION = "date", "year", "time", "duration"
COMMAND = "command"  # a line of code or a shell command: "gpgconf --launch gpg-agent", "pipx install oletools"
IDENT = "ident"  # a lowercase identifier joined by - _ or .: "update-passwd", "chromium-dbgsym", "gpg-agent.service"
OPTION = "option"  # a command-line option: "-z", "--disable-gpu", "--level=19"
LOCATION = "location"  # a URL or a file path: "https://gitlab.com/procps-ng/procps", "/var/cache/man", "~/.config/x/"
VERSION = "version"  # a release number: "1.11.2", "v0.50", "3.x", "HTTP/2"; a decimal ("1.1") is a number too

ID = "id"  # a bare integer of 3+ digits: an extension, a ticket number

# --- candidate patterns ----------------------------------------------------------------------------

_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_NUMWORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|fifteen|twenty|thirty|forty"
    r"|fifty|sixty|ninety|a hundred)"
)
_ONE_MONEY = rf"(?:[$€£]\s?{_NUM}(?:\s?(?:million|billion|thousand|bn)\b)?|{_NUM}\s?(?:dollars|euros|pounds)\b)"
_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_CLOCK = r"\b\d{1,2}:\d{2}(?:\s?(?:am|pm|AM|PM))?(?:\s?UTC)?"
_TIME_UNIT = r"(?:seconds?|minutes?|hours?|days?|nights?|weeks?|months?|years?|shifts?)"

# In priority order: a later pattern's match that overlaps an earlier one is not a candidate.
_TYPED: list[tuple[str, re.Pattern[str]]] = [
    (
        LOCATION,
        re.compile(
            r"\b(?:https?|ftp)://[^\s<>()\[\]\"'`]*[^\s<>()\[\]\"'`.,;:!?]"
            r"|(?<![\w.~/-])(?:~|\.{1,2})?/[\w.+-]+(?:/[\w.+-]*)*(?<!\.)|\b[\w.+-]+(?:/[\w.+-]+){2,}/?(?<!\.)"
        ),
    ),
    (EMAIL, re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    (MONEY, re.compile(rf"{_ONE_MONEY}(?:\s?(?:to|-|–|and)\s?{_ONE_MONEY})?")),  # ranges are one answer
    (PERCENT, re.compile(rf"{_NUM}\s?(?:%|percent\b|per cent\b)")),
    (
        DATE,
        re.compile(
            rf"\b{_DAY} {_MONTH},? \d{{4}}\b|\b{_MONTH} {_DAY},? \d{{4}}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b"
            rf"|\b{_MONTH} \d{{4}}\b|\b{_DAY} {_MONTH}\b|\b{_MONTH} {_DAY}\b"
        ),
    ),
    (TIME, re.compile(rf"{_CLOCK}(?:\s?(?:to|-|–|and|until)\s?{_CLOCK})?")),
    (
        DURATION,
        re.compile(
            rf"\b(?:{_NUM}|{_NUMWORD})[\s-](?:(?:business|working|calendar|consecutive|full)\s)?{_TIME_UNIT}\b",
            re.IGNORECASE,
        ),
    ),
    # "SS-339", "Pac-12", "M2"; not the front of a dotted number: "MPL-2.0" is no code "MPL-2"
    (CODE, re.compile(r"\b(?:[A-Z][A-Za-z]{0,4}-\d{1,6}[A-Za-z]?|[A-Z]{1,3}\d{1,4})\b(?!\.\d)")),
    (OPTION, re.compile(r"(?<![\w/.-])--?[A-Za-z][\w-]*(?:=[^\s,;)`'\"]+)?")),
    (VERSION, re.compile(r"(?<![\w.])(?:[vV]\d+(?:\.\d+)*|\d+(?:\.\d+){2,}|\d+\.x)\b|\b[A-Za-z]+/\d+(?:\.\d+)*\b")),
    (IDENT, re.compile(r"(?<![\w./-])[a-z]{2}[a-z0-9]*(?:[-_.][a-z0-9]+)+(?![\w/-]|\.\w)")),
    (NUMBER, re.compile(rf"(?<![\w.]){_NUM}(?:\s(?P<unit>[A-Za-z]+))?")),
]
_UNIT_WORDS = {"gb", "mb", "tb", "kb", "km", "kv", "kw", "mw", "kwh", "mwh", "times", "percent", "kg", "miles"}
_YEAR = re.compile(r"\b(?:1[5-9]|20)\d{2}\b")

# Cue clauses: the answer to "what caused X" follows "root cause was"; to "who" often follows "by".
_CAUSE_CUE = re.compile(
    r"\b(?:root cause (?:was|is|has been)|caused by|due to|because of|because|as a result of|resulted from)\s+",
    re.IGNORECASE,
)
_AGENT_CUE = re.compile(r"\bby\s+")
_BOUNDARY = set(
    "for of on in at to from with between behind during after before since until into onto over under within "
    "without through across that which who whom whose where when while because so and or but than as if unless "
    "is are was were has have had will would can could should must may".split()
)
_ARTICLES = {"a", "an", "the"}
_PRONOUNS = set("it its they them their this that these those he him his she her we us you i there one".split())
_MAX_PHRASE_WORDS = 8
# Words that end a cause's clause: another clause (relative, coordinated, subordinate) or its verb begins.
_VERBS = set("is are was were has have had will would can could should must may".split())
_CLAUSE_BREAK = {
    *"that which who whom whose where when while because so but as if unless although though whereas".split(),
    *"after before until since".split(),
    *_VERBS,
}
_MAX_CLAUSE_WORDS = 20

# Capitalized spans: tokens, connectors allowed inside a name, words that start sentences.
# a word ("Node.js" is one: a full stop before a lowercase letter, no space, joins), a number, a mark
TOKEN = re.compile(r"[^\W\d_][\w'’&-]*(?:\.(?=[a-z])[\w'’&-]+)*|\d[\w.,:-]*|[^\w\s]")
NAME_CONNECTORS = {"of", "and", "&", "de", "van", "von", "der", "du", "la", "le", "da", "di"}
_SENTENCE_STARTERS = set(
    "The A An This That These Those Each Every All Any Some Our Your Its Their His Her If When Where While Inside "
    "Outside Under For In On At To From By With After Before During Since Until Please Only No Most Many Once "
    "Also Then There Here It".split()
)
NOT_NAMES = set(
    "January February March April May June July August September October November December Monday Tuesday "
    "Wednesday Thursday Friday Saturday Sunday I".split()
)

_LINE_PREFIX = re.compile(r"^\s*(?:[-*+>•]|\d+[.)])\s+|^\s*>\s*")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
_HEADING = re.compile(r"^#{1,6}(?:\s|$)")
_FENCE_LINE = re.compile(r"^(?:`{3,}|~{3,})")


# --- sentences and candidate spans -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Span:
    """A candidate answer inside a sentence: character offsets in the sentence, its types, its unit."""

    start: int
    end: int
    types: frozenset[str]
    unit: str | None = None
    cue: str | None = None  # "cause" or "agent" for a clause found after a cue
    noun_end: int | None = None  # a name's closing lowercase noun ("the Geltenir florin"): where that noun ends


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of ``text`` that can state a fact (``ragline.text.sentences``).

    Markdown headings are skipped (they name a section; they do not state facts), list and quote
    markers are left out of the sentence, table rule lines and code fences are skipped.
    """
    spans: list[tuple[int, int]] = []
    for start, end in split_sentences(text):
        body = text[start:end]
        if _HEADING.match(body) or _TABLE_RULE.match(body) or _FENCE_LINE.match(body):
            continue
        prefix = _LINE_PREFIX.match(body)
        spans.append((start + prefix.end(), end) if prefix else (start, end))
    return [(a, b) for a, b in spans if a < b]


_REDACTED = re.compile(re.escape(REDACTED))


def candidate_spans(sentence: str, types: Iterable[str]) -> list[Span]:
    """Typed candidate spans of ``sentence`` for the answer types the question accepts."""
    wanted = set(types)
    spans: list[Span] = []
    claimed: list[tuple[int, int]] = []
    for kind, pattern in _TYPED:
        for match in pattern.finditer(sentence):
            start, end = match.span()
            if any(start < b and a < end for a, b in claimed):
                continue
            claimed.append((start, end))
            spans.extend(_typed_spans(kind, match, sentence))
    if NAME in wanted:
        marked = _marked_spans(sentence)
        spans.extend(marked)
        spans.extend(_name_spans(sentence, claimed + [(m.start, m.end) for m in marked]))
    if PHRASE in wanted:
        spans.extend(_cue_spans(sentence, _CAUSE_CUE, "cause"))
        spans.extend(_cue_spans(sentence, _AGENT_CUE, "agent"))
    # a guard's redaction marker stands where a source's text was removed: none of it is an answer
    removed = [m.span() for m in _REDACTED.finditer(sentence)] if REDACTED in sentence else []
    return [s for s in spans if s.types & wanted and not any(s.start < b and a < s.end for a, b in removed)]


# What stands between two items of a list: a comma, "and" / "or" (after a comma or not), "and finally"; the items'
# own marks (`code`, **bold**, quotes) may close and open around it.
_LIST_GAP = re.compile(
    r"[`*'\"’”)\]]*(?:\s*,\s*(?:(?:and|or)\s+)?(?:finally\s+)?|\s+(?:and|or)\s+(?:finally\s+)?)[`*'\"‘“(\[]*"
)
_OPEN_MARKS, _CLOSE_MARKS = "`*'\"‘“([", "`*'\"’”)]"


def list_spans(sentence: str, spans: list[Span]) -> list[Span]:
    """Lists of candidate spans: two or more joined by commas, "and" or "or" (".zst, .gz, .xz and .lz4", "Python
    2.6, 2.7 or 3.x"), each as one span with its items' marks and the types of its first item."""
    ordered: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if not ordered or span.start >= ordered[-1].end:
            ordered.append(span)
    runs: list[list[Span]] = []
    for span in ordered:
        if runs and _LIST_GAP.fullmatch(sentence[runs[-1][-1].end : span.start]):
            runs[-1].append(span)
        else:
            runs.append([span])
    out = []
    for run in (r for r in runs if len(r) > 1):
        start, end = run[0].start, run[-1].end
        while (
            start > 0 and end < len(sentence) and sentence[start - 1] in _OPEN_MARKS and sentence[end] in _CLOSE_MARKS
        ):
            start, end = start - 1, end + 1
        out.append(Span(start, end, run[0].types))
    return out


def _typed_spans(kind: str, match: re.Match[str], sentence: str) -> list[Span]:
    """The span of a pattern match, with its unit, and the year inside a date as a span of its own."""
    start, end = match.span()
    if kind == NUMBER:
        end, unit = _number_unit(match)
        text = sentence[start:end]
        types = {NUMBER}
        if _YEAR.fullmatch(text):
            types.add(YEAR)
        if unit is None and text.isdigit() and len(text) >= 3:
            types.add(ID)
        if unit is None and re.fullmatch(r"\d+\.\d+", text):
            types.add(VERSION)
        return [Span(start, end, frozenset(types), unit)]
    if kind == DURATION:
        return [Span(start, end, frozenset({DURATION}), match.group().split()[-1].split("-")[-1].lower())]
    spans = [Span(start, end, frozenset({kind}))]
    if kind == DATE and (year := _YEAR.search(match.group())):
        spans.append(Span(start + year.start(), start + year.end(), frozenset({YEAR})))
    return spans


# Text the author marked as a term in Markdown: `inline code`, **bold**, [[a wiki link]]. Commands, options, files
# and tool names are often lowercase ("`--disable-gpu`", "**[[olemeta]]**"), so no run of capitals finds them.
_MARKED = re.compile(r"`([^`\n]{1,80})`|\*\*(?:\[\[)?([^*\n\[\]]{1,80}?)(?:\]\])?\*\*|\[\[([^\]\n]{1,80})\]\]")


def _marked_spans(sentence: str) -> list[Span]:
    """The inside of each marked term (without its marks), as a name; one of several words that starts in lower
    case is a command, too ("**pip install -U olefile**")."""
    spans = []
    for match in _MARKED.finditer(sentence):
        group = next(g for g in (1, 2, 3) if match.group(g) is not None)
        start, end = match.span(group)
        term = sentence[start:end]
        if term.strip():
            command = len(term.split()) > 1 and not term[0].isupper()
            spans.append(Span(start, end, frozenset({NAME, COMMAND} if command else {NAME})))
    return spans


def _number_unit(match: re.Match[str]) -> tuple[int, str | None]:
    """A number keeps the word after it when that word is a unit ("750 GB", "3 devices", "1.75 times")."""
    unit = match.group("unit")
    if unit and (unit.lower() in _UNIT_WORDS or (unit.islower() and len(unit) > 3 and unit.endswith("s"))):
        return match.end(), unit.lower()
    return match.start() + len(match.group().split()[0]), None


def _name_spans(sentence: str, claimed: list[tuple[int, int]]) -> list[Span]:
    """Runs of capitalized words ("Line Crew East", "VendorPoint"), minus sentence-initial capitals."""
    tokens = list(TOKEN.finditer(sentence))
    words = [t.group() for t in tokens]
    spans: list[Span] = []
    i = 0
    while i < len(tokens):
        j = i
        while j < len(tokens):
            if _initial(tokens, words, j):
                j += 2  # "D. Brown", "Travis E. Oliphant": the initial and its full stop
            elif _name_word(words[j]) or (
                j > i and words[j] in NAME_CONNECTORS and j + 1 < len(tokens) and _name_word(words[j + 1])
            ):
                j += 1
            else:
                break
        if j == i:
            i += 1
            continue
        run = tokens[i:j]
        if i == 0 and (run[0].group() in _SENTENCE_STARTERS or (len(run) == 1 and not _camel(run[0].group()))):
            run = run[1:]  # capitalized only because it starts the sentence
        # one word alone is no name when it is a month or the like, a word capitalized only to start a sentence
        # (mid-"sentence" too: a heading underlined with ----- runs into the sentence after it, "... Patches ---- If
        # you send"), or a single letter (the "C" of "C library", the "Z" of ".Z file", the "S" of "S.gpg-agent")
        if len(run) == 1 and (
            run[0].group() in NOT_NAMES or run[0].group() in _SENTENCE_STARTERS or len(run[0].group()) == 1
        ):
            run = []
        if run:
            start, end = run[0].start(), run[-1].end()
            if not any(start < b and a < end for a, b in claimed):
                noun = _closing_noun(tokens, words, i, j)
                if noun is not None and any(noun.start() < b and a < noun.end() for a, b in claimed):
                    noun = None
                spans.append(Span(start, end, frozenset({NAME}), noun_end=noun.end() if noun else None))
        i = j
    return spans


def _closing_noun(tokens: list[re.Match[str]], words: list[str], i: int, j: int) -> re.Match[str] | None:
    """The lowercase noun that closes the noun phrase a name run (tokens ``i:j``) opens, if one does.

    "is the Geltenir florin." -> "florin": an article before the name, one lowercase word after it,
    then the phrase ends (punctuation, the sentence's end or a function word). Whether the noun
    belongs to the answer ("florin") or names the kind asked about ("the Blue Lake team") is the
    reader's call (``Span.noun_end``).
    """
    if i == 0 or words[i - 1].lower() not in _ARTICLES or j >= len(tokens):
        return None
    noun = words[j]
    if not (noun.isalpha() and noun.islower() and len(noun) >= 3) or noun in _BOUNDARY or noun.endswith("ly"):
        return None
    if j + 1 < len(tokens) and words[j + 1][0].isalnum() and words[j + 1].lower() not in _BOUNDARY:
        return None
    return tokens[j]


def _initial(tokens: list[re.Match[str]], words: list[str], j: int) -> bool:
    """A capital letter with a full stop right after it and a name word after that: a name's initial."""
    if j + 2 >= len(tokens) or len(words[j]) != 1 or not words[j].isupper() or words[j + 1] != ".":
        return False
    after = words[j + 2]
    if tokens[j + 1].start() != tokens[j].end():
        return False
    if len(after) == 1:  # "J. R. R. Tolkien" is initials; "U.S." is not
        return _initial(tokens, words, j + 2)
    return _name_word(after) and after not in _SENTENCE_STARTERS


def _name_word(word: str) -> bool:
    """Capitalized, no digits; an all-caps word longer than an acronym ("OVERRIDE") is shouting, not a name."""
    if not word[0].isupper() or any(c.isdigit() for c in word) or not any(c.isalpha() for c in word):
        return False
    return not (word.isupper() and len(word) > 5)


def _camel(word: str) -> bool:
    """An internal capital ("VendorPoint", "DeviceDock", "VPN") marks a name even at a sentence start."""
    return any(c.isupper() for c in word[1:])


def _cue_spans(sentence: str, cue: re.Pattern[str], kind: str) -> list[Span]:
    """The noun phrase after each cue: up to a punctuation mark, a function word, a participle.

    A cause is the whole clause after its cue ("a memory leak in the report scheduler on web-45"), up to a
    punctuation mark or a word that starts another clause, when it has at most ``_MAX_CLAUSE_WORDS`` words:
    the minimal phrase ("memory leak") names the fault but not where it was, which a user asking why needs.
    """
    spans: list[Span] = []
    for match in cue.finditer(sentence):
        words = list(re.finditer(r"[\w'’$%.,:-]*\w|[^\w\s]", sentence[match.end() :]))
        kept: list[re.Match[str]] = []
        for k, word in enumerate(words):
            text = word.group()
            lowered = text.lower()
            if not text[0].isalnum() and text[0] != "$":
                break
            if kept and (lowered in _BOUNDARY or (k >= 2 and lowered.endswith("ed"))):
                break
            if len(kept) == _MAX_PHRASE_WORDS:
                break
            kept.append(word)
        if kind == "cause":
            kept = max(kept, _clause(words), key=len)
        while kept and kept[0].group().lower() in _ARTICLES:
            kept = kept[1:]
        if kept and all(w.group().lower() in _PRONOUNS for w in kept):
            continue  # "because it": a pronoun names nothing by itself
        if kept:
            start, end = match.end() + kept[0].start(), match.end() + kept[-1].end()
            spans.append(Span(start, end, frozenset({PHRASE}), cue=kind))
    return spans


def _clause(words: list[re.Match[str]]) -> list[re.Match[str]]:
    """The words of a clause up to a punctuation mark or a clause word; none when it runs longer than allowed, or
    to the end of the text without a mark (a chunk cut mid-sentence: its clause would stop where the cut is).

    "and" / "or" join noun phrases ("between the data centre and the backup site") unless a verb follows them
    ("a disk failure and the alarm was silenced"): then the clause ends before the coordinator.
    """
    kept: list[re.Match[str]] = []
    coordinator = None
    for word in words:
        text = word.group()
        lowered = text.lower()
        if not text[0].isalnum() and text[0] != "$":
            break
        if kept and lowered in _CLAUSE_BREAK:
            if lowered in _VERBS and coordinator is not None:
                kept = kept[:coordinator]
            break
        if len(kept) == _MAX_CLAUSE_WORDS:
            return []
        if kept and lowered in ("and", "or"):
            coordinator = len(kept)
        kept.append(word)
    else:
        return []
    while kept and kept[-1].group().lower() in ("and", "or"):
        kept.pop()
    return kept
