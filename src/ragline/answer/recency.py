"""Questions about the newest or oldest of something ("the root cause of the most recent incident"): the
answer is in one document chosen by a date, and relevance alone cannot choose it (every incident report
matches "root cause of incident" equally well, and the newest need not rank in the top k).

``recency_ask`` finds the ask: a cue (most recent, latest, newest / earliest, oldest; 最新, 最近 / 最早) and the
word after it, the thing asked about. ``newest_first`` then takes a wider set of retrieved hits (the filter
and version policy were already inside retrieval, so only readable, admissible chunks are here), keeps the
hits that name that thing (title or text, compared as the index's analyzer terms), and returns the hits of the
newest (oldest) document by a date in its metadata. The date field is chosen from the hits, not named in
advance: a field named after the thing (``incident_date`` for "incident"), else the date field most of them
carry. Where the hits carry no dates, or none names the thing, nothing changes: the question is answered by
relevance as before. The reader then reads the question without its cue (``without_cue``): the sentence
that answers it states the cause, not that it is the most recent, and the support check looks for the
question's words in it. Ordinals ("the last step", "the first county") are not cues: they usually mean a
position in a list, not a date.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ragline.answer.context import document_id
from ragline.types import Hit

NEWEST, OLDEST = "newest", "oldest"
DATE_ORDER_DEPTH = 50  # candidates searched for the newest/oldest dated document (the filter already inside)
_NEWEST_CUE = r"most\s+recent(?:ly)?|latest|newest|最新的?|最近的?"
_OLDEST_CUE = r"least\s+recent|earliest|oldest|最早的?"
# The cue words alone: once the dated document is chosen, the reader reads the question without them (no
# source says it is "the most recent"; its sentence states the cause).
CUE = re.compile(rf"\b(?:{_NEWEST_CUE}|{_OLDEST_CUE})\b|(?:最新|最近|最早)的?", re.IGNORECASE)
_CUES = (
    (NEWEST, re.compile(rf"(?:\b(?:{_NEWEST_CUE})\s+([A-Za-z][\w-]*)|(?:最新|最近)的?([\u4e00-\u9fff]{{0,2}}))", re.I)),
    (OLDEST, re.compile(rf"(?:\b(?:{_OLDEST_CUE})\s+([A-Za-z][\w-]*)|最早的?([\u4e00-\u9fff]{{0,2}}))", re.I)),
)
# Words that can follow a cue without being the thing asked about ("the latest of the reports")
_NOT_NOUNS = frozenset({"of", "one", "ones", "in", "on", "at", "for", "the", "a", "an", "version", "versions"})


@dataclass(frozen=True)
class RecencyAsk:
    direction: str  # newest | oldest
    noun: str | None  # the thing asked about, when one follows the cue


def recency_ask(question: str) -> RecencyAsk | None:
    """The newest/oldest ask in ``question``, or None when it asks for no date order."""
    for direction, pattern in _CUES:
        found = pattern.search(question)
        if found:
            noun = (found.group(1) or found.group(2) or "").lower() or None
            return RecencyAsk(direction, None if noun in _NOT_NOUNS else noun)
    return None


def without_cue(question: str) -> str:
    """``question`` without its date-order cue: what the chosen document is asked."""
    return re.sub(r"\s{2,}", " ", CUE.sub(" ", question)).strip()


def as_date(value: Any) -> date | None:
    """``value`` as a date when it is one or an ISO date (or date-time) text, else None."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and re.match(r"\d{4}-\d{2}-\d{2}", value):
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None


def dates_of(hit: Hit) -> dict[str, date]:
    """The hit's metadata fields that hold a date."""
    return {key: day for key, value in hit.metadata.items() if (day := as_date(value)) is not None}


def date_field(hits: list[Hit], noun: str | None) -> str | None:
    """The metadata date field to order ``hits`` by: one named after ``noun``, else the most common."""
    counts = Counter(key for hit in hits for key in dates_of(hit))
    if not counts:
        return None
    named = [key for key in counts if noun and noun.rstrip("s") in key.lower()]
    return max(named or counts, key=lambda key: (counts[key], key))


def newest_first(hits: list[Hit], ask: RecencyAsk, analyzer: Any) -> tuple[list[Hit], str] | None:
    """The hits of the newest (oldest) dated document among ``hits`` that name the thing asked about, best
    first, and how they were chosen; None when no hit both names it and carries a date (answer by relevance)."""
    if ask.noun:
        wanted = set(analyzer(ask.noun))
        hits = [h for h in hits if wanted & set(analyzer(f"{h.title}\n{h.text}"))] if wanted else hits
    field = date_field(hits, ask.noun)
    if field is None:
        return None
    dated = [(day, h) for h in hits if (day := dates_of(h).get(field)) is not None]
    chosen = max(day for day, _ in dated) if ask.direction == NEWEST else min(day for day, _ in dated)
    keep = {document_id(h) for day, h in dated if day == chosen}
    return [h for h in hits if document_id(h) in keep], f"date order: {ask.direction} {field} ({chosen.isoformat()})"
