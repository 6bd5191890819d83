"""The sentence splitter: one for the whole project (chunkers, the extractive reader, the agent).

:func:`split_sentences` gives the spans of the sentences of a text, in order, each stripped of the
whitespace around it, as offsets into the text (so a chunk can be cut exactly at them).

Blocks a sentence never crosses: a blank line; a Markdown heading or table row (a sentence of its
own, whatever its punctuation, never split); a list item, a quote line or a record's field line ("Maintainer: Oksana
Hall") (each starts a new sentence); a fenced
code block (each of its lines stands alone, and nothing inside it is a heading or a sentence end).
A single line break does not end a sentence: hard-wrapped prose stays one sentence.

Inside a block a sentence ends at ``. ! ?`` (then closing quotes, brackets or emphasis marks) before
whitespace and a character that is not a lower-case letter, or at ``。！？`` (Chinese needs no
space after them). It does not end:

- inside a code span (`` `a. B` ``);
- after an abbreviation: a title or word of a closed list ("Dr.", "e.g.", "approx."), dotted letters
  ("U.S.", "i.e."), a single capital initial ("J."), or a word that abbreviates before a number only
  ("No. 5", "Fig. 3", "Jan. 12", "v. 2");
- inside a number: "$60.50", "3.5%", "v2.3.1" and "Milvus Lite 3.2.2" hold no space after the dot, so
  they never end a sentence (a version at the very end of a sentence does: "... 3.2.2. Next").

Limits (rules, not a model): an abbreviation outside the lists ("Gen. Lee" is in, "Ave. Maria" is not)
ends a sentence; one inside them never does, even where a sentence does end there ("... in the U.S.
Then"); a sentence that starts in lower case stays joined to the one before; an ellipsis before a
capital ends a sentence. ``benchmarks/sentence_split.py`` measures it against pysbd on hand-labelled text.

Bump :data:`SPLITTER_VERSION` when a change moves any boundary: it is part of the built-in index's
cache key (through the chunkers' version), so a changed splitter rebuilds the index.
"""

from __future__ import annotations

import re

from ragline.text.stopwords import LUCENE_ENGLISH

Span = tuple[int, int]

SPLITTER_VERSION = 2  # 1: the regex of ragline.ingest.chunkers before the splitters were merged

# A candidate end: . ! ? then closers, before whitespace and a character that is not a lower-case letter;
# or Chinese 。！？ then closers, with or without a space.
_END = re.compile(r"[.!?]+[\"'’”)\]*_`]*(?=\s+\S)|[。！？]+[”’」』）)]*")
# Abbreviations that are followed by a name or a word: never the end of a sentence.
_ALWAYS = frozenset(
    "mr mrs ms dr prof st jr sr gen col lt sgt capt rev hon gov sen rep pres messrs mt ft "
    "cf vs al etc approx incl esp resp dept est min max avg ca inc ltd co corp bros".split()
)
# Abbreviations that stand before a number ("No. 5", "Fig. 3", "Jan. 12"): an end before anything else.
_BEFORE_NUMBER = frozenset(
    "no nos fig figs eq eqs sec ch vol p pp art ref v ver op tab ex nr "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
# Words that start sentences and are no names: after them a single capital ("... creating B. Also, ...")
# is no initial.
_STARTERS = LUCENE_ENGLISH | frozenset("also however we you he she our its after before each all see when".split())
_LAST_WORD = re.compile(r"([\w.]+)$")
_NEXT_WORD = re.compile(r"\s*[\"'(\[]*(\w+)")
_INITIALS = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")
_CODE_SPAN = re.compile(r"(`+)[^`]+?\1")
# A TeX-style quote (`gcc') is no code span: its backtick must not pair with the next code span's.
_TEX_QUOTE = re.compile(r"`[^`'\n]*'(?!\w)")
# Lines that stand alone whatever their punctuation: headings and table rows; list items and quotes start anew.
_STANDALONE = re.compile(r"^ {0,3}(#{1,6}(\s|$)|\|)")
_ITEM = re.compile(r"^\s*([-*+•]|\d+[.)]|>)\s")
# A field of a record ("Maintainer: Oksana Hall", "Requires-Python: >=3.10"): starts anew, like an item.
# Groups: the label, the value (to the end of the line); the support check reads them.
FIELD_LINE = re.compile(r"^\s*([A-Z][\w-]*(?: [\w-]+){0,2}):\s+(\S.*)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Spans of the sentences of ``text[start:end]``, stripped of surrounding whitespace (see the module)."""
    end = len(text) if end is None else end
    out: list[Span] = []
    for piece_start, piece_end, whole in _pieces(text, start, end):
        if whole:
            out.append(strip_span(text, piece_start, piece_end))
            continue
        masked = _masked_code_spans(text, piece_start, piece_end)
        begin = piece_start
        for match in _END.finditer(text, piece_start, piece_end):
            if any(a < match.start() < b for a, b in masked) or _abbreviation(text, begin, match):
                continue
            out.append(strip_span(text, begin, match.end()))
            begin = match.end()
        out.append(strip_span(text, begin, piece_end))
    return [span for span in out if span[0] < span[1]]


def sentence_texts(text: str) -> list[str]:
    """The sentences of ``text`` as strings, the whitespace inside each collapsed to single spaces."""
    return [" ".join(text[a:b].split()) for a, b in split_sentences(text)]


def strip_span(text: str, start: int, end: int) -> Span:
    """``(start, end)`` moved inwards past whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _abbreviation(text: str, begin: int, match: re.Match[str]) -> bool:
    """Is the end that ``match`` found no sentence end: an abbreviation's dot, or a dot before lower case?"""
    mark = match.group()
    after = text[match.end() :].lstrip()[:1]
    following = _NEXT_WORD.match(text, match.end())
    next_word = following.group(1) if following else ""
    word = _LAST_WORD.search(text, begin, match.start())
    token = word.group(1).lstrip(".") if word and word.end() == match.start() else ""
    if after.islower():
        # "e.g. bash", "approx. ten", "wait... then", "'.' as" go on; "(`milvus-bm25`). ragline's analyzer"
        # ends: a plain full stop after a word of two or more letters that abbreviates nothing, or after
        # a closing bracket or code span.
        if not mark.startswith(".") or mark.startswith(".."):
            return True
        before = text[match.start() - 1] if match.start() > begin else " "
        if before not in ")]`" and (len(token) < 2 or token[-1].isdigit()):
            return True
    if not mark.startswith(".") or not token:
        return False
    if _INITIALS.fullmatch(token):  # "U.S", "e.g": letters separated by dots
        return True
    lowered = token.lower()
    if lowered in _ALWAYS:
        return True
    if len(token) == 1 and token.isupper():  # "J. Smith"; but "... creating B. Also, ..." ends
        return after.isupper() and next_word.lower() not in _STARTERS
    if lowered in _BEFORE_NUMBER:
        return after.isdigit()
    return False


def _masked_code_spans(text: str, start: int, end: int) -> list[Span]:
    """Code spans of ``text[start:end]``: no sentence ends inside them."""
    piece = text[start:end]
    if "`" not in piece:
        return []
    piece = _TEX_QUOTE.sub(lambda m: " " * len(m.group()), piece)
    return [(start + a, start + b) for a, b in (m.span() for m in _CODE_SPAN.finditer(piece))]


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int, bool]]:
    """Blocks of lines that a sentence cannot cross, each with "is one unit whole" (a heading, a table
    row or a line of a fenced code block: no sentence ends inside it)."""
    pieces: list[tuple[int, int, bool]] = []
    current: list[int] | None = None  # [start, end] of the open piece
    fence: str | None = None  # the opening run of the code block we are in

    def close() -> None:
        nonlocal current
        if current:
            pieces.append((current[0], current[1], False))
        current = None

    line_start = start
    while line_start < end:
        newline = text.find("\n", line_start, end)
        line_end = end if newline < 0 else newline
        line = text[line_start:line_end]
        fence_match = _FENCE.match(line)
        if fence is not None or fence_match:
            close()
            if fence is None:
                fence = fence_match.group(1)  # type: ignore[union-attr]
            elif fence_match and fence_match.group(1)[0] == fence[0] and len(fence_match.group(1)) >= len(fence):
                fence = None
            if line.strip():
                pieces.append((line_start, line_end, True))
        elif not line.strip() or _STANDALONE.match(line) or _ITEM.match(line) or FIELD_LINE.match(line):
            close()
            if _STANDALONE.match(line):
                pieces.append((line_start, line_end, True))
            elif line.strip():
                current = [line_start, line_end]
        elif current is None:
            current = [line_start, line_end]
        else:
            current[1] = line_end
        line_start = line_end + 1
    close()
    return pieces
