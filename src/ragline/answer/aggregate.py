"""An LLM-free reader for questions about many documents: lists, counts, extremes and the most common value.

The extractive reader picks one span; a question about a set ("List every ...", "How many ...", "Which
... has the highest ...", "Which ... are the most ... at?") needs an answer put together from one reading
per document. This reader reads the context **per document** with the extractive reader's candidates
(the same question analysis, exact-match gate, scores and support check), then aggregates:

- **list** ("list/name every|all X ...", or "which Xs ..." with a plural noun): each document's best
  candidate that clears the threshold and whose sentence carries the question; the distinct ones, best first.
- **count** ("how many X ..."): the question read as "which X ...", listed, counted.
- **extreme** ("which X has the highest/lowest/longest/shortest/largest/smallest Y"): each document's best
  quantity (money, duration, number, percent; one kind, the best-scored one's), the document whose value is
  the largest or smallest; the answer is that document's title and its value.
- **most** ("which X ... the most/fewest Ys"): each document's best candidate; the value most (fewest)
  documents give.

Anything else is read by the extractive reader as it is. Every answer cites the chunks its items came from.
The reader knows nothing of a corpus: the forms are English question shapes, the values the span types.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ragline.answer.context import Context, document_id
from ragline.answer.extractive import Candidate, ExtractiveReader
from ragline.answer.pipeline import Reader
from ragline.answer.questions import analyze_question
from ragline.answer.spans import DURATION, MONEY, NUMBER, PERCENT
from ragline.components import register
from ragline.text.normalize import normalize_answer
from ragline.text.sentences import split_sentences
from ragline.types import Answer, Citation

_COUNT = re.compile(r"^\s*how many\s+(?P<rest>.+)$", re.I)
_LIST = re.compile(
    r"^\s*(?:please\s+)?(?:list|name|give|enumerate)\s+(?:me\s+)?(?:every|all|each|the)?\s*(?P<rest>.+)$", re.I
)
_PLURAL_WHICH = re.compile(r"^\s*(?:which|what)\s+(?:\w+\s+)?(?P<noun>\w+s)\s+(?:are|were|have|do|did|is)\b", re.I)
_MOST = re.compile(r"\bthe\s+(?P<which>most|fewest|least)\s+(?:\w+\s+)?\w+s\b", re.I)
_EXTREME = re.compile(
    r"\b(?:the\s+)?(?P<word>highest|lowest|largest|smallest|longest|shortest|biggest|greatest|least|most|earliest|latest)\b",
    re.I,
)
_MAX_WORDS = {"highest", "largest", "longest", "biggest", "greatest", "most", "latest"}
_QUANTITIES = (MONEY, DURATION, NUMBER, PERCENT)
_UNIT_MINUTES = {
    "second": 1 / 60,
    "minute": 1.0,
    "hour": 60.0,
    "day": 1440.0,
    "night": 1440.0,
    "week": 10080.0,
    "month": 43200.0,
    "year": 525600.0,
}
ITEM_THRESHOLD = 0.3  # an item's least score, chosen on the Orrin training world (seed 224)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def question_form(question: str) -> tuple[str, str]:
    """The form of a question (list, count, extreme, most, single) and the question each document is read for."""
    if m := _COUNT.match(question):
        return "count", f"Which {m['rest']}"
    if m := _LIST.match(question):
        return "list", f"Which {m['rest']}"
    if _MOST.search(question):  # each document read without the superlative: "which yard are crews based at?"
        return "most", re.sub(r"\bthe\s+(?:most|fewest|least)\s+", "", question, flags=re.I)
    if _EXTREME.search(question) and re.match(r"^\s*(?:which|what)\b", question, re.I):
        return (
            "extreme",
            f"How much {question.strip()[:1].lower()}{question.strip()[1:]}",
        )  # read for a quantity per document
    if (m := _PLURAL_WHICH.match(question)) and not m["noun"].lower().endswith("ss"):
        return "list", question
    return "single", question


def quantity(text: str) -> float | None:
    """A span's value as one number (durations in minutes), or None when it has no digits."""
    m = _NUMBER.search(text)
    if m is None:
        return None
    value = float(m.group().replace(",", ""))
    rest = text[m.end() :].lower()
    for unit, minutes in _UNIT_MINUTES.items():
        if re.match(rf"\s*(?:working\s+)?{unit}s?\b", rest):
            return value * minutes
    return value


@register("reader", "aggregate")
class AggregateReader(Reader):
    """Lists, counts, extremes and the most common value over the documents of the context (no LLM)."""

    name = "aggregate"

    def __init__(self, item_threshold: float = ITEM_THRESHOLD, **params: Any) -> None:
        self.item_threshold = float(item_threshold)
        self.reader = ExtractiveReader(**{"top_k": 50, **params})

    def config(self) -> dict[str, Any]:
        return {**self.reader.config(), "name": self.name, "item_threshold": self.item_threshold}

    def per_document(self, question: str, context: Context, types: tuple[str, ...] = ()) -> list[Candidate]:
        """Each document's best item (of ``types`` when given) at or above ``item_threshold``, best first.

        An item does not restate a name of the question, and either its own sentence carries the question
        (the support check) or it is its document's title while some sentence of the document carries the
        question's names and most of its content terms (a page about the item that answers the question).
        """
        info = analyze_question(question, self.reader._stems)
        names = list(info.names)
        best: dict[str, Candidate] = {}
        carries: dict[str, bool] = {}
        for candidate in self.reader.candidates(question, context):
            if candidate.score < self.item_threshold or (types and not set(candidate.types) & set(types)):
                continue
            doc = document_id(candidate.hit)
            said = normalize_answer(candidate.text)
            if doc in best or any(n in said or said in n for n in names) or not said:
                continue
            if types or self.reader._verdict(question, candidate).supported:
                best[doc] = candidate
            elif normalize_answer(candidate.hit.title) == said:
                if doc not in carries:
                    carries[doc] = self._carries(info, candidate.hit.text)
                if carries[doc]:
                    best[doc] = candidate
        return sorted(best.values(), key=lambda c: -c.score)

    def _carries(self, info: Any, text: str) -> bool:
        """Whether one sentence of ``text`` names every name of the question and half its content terms."""
        for start, end in split_sentences(text):
            sentence = text[start:end]
            said = normalize_answer(sentence)
            terms = self.reader._stems.terms(sentence)
            if all(n in said for n in info.names) and len(info.terms & terms) * 2 >= max(len(info.terms), 1):
                return True
        return False

    def read(self, question: str, context: Context) -> Answer:
        form, asked = question_form(question)
        if form == "single":
            return self.reader.read(question, context)
        details: dict[str, Any] = {"form": form, "read_as": asked}
        if form == "extreme":
            chosen = self._extreme(question, asked, context, details)
        else:
            found = self.per_document(asked, context)
            if form == "most":
                votes = Counter(normalize_answer(c.text) for c in found)
                if votes:
                    pick = min if _MOST.search(question)["which"].lower() != "most" else max  # type: ignore[index]
                    top = pick(votes.values())
                    key = next(k for k in votes if votes[k] == top)
                    details["votes"] = dict(votes)
                    chosen = [c for c in found if normalize_answer(c.text) == key]
                else:
                    chosen = []
            else:
                chosen, seen = [], set()
                for c in found:
                    if normalize_answer(c.text) not in seen:
                        seen.add(normalize_answer(c.text))
                        chosen.append(c)
        if not chosen:
            return Answer("", True, [], self.name, {**details, "reason": "no document gives an item"})
        items = list(dict.fromkeys(c.text for c in chosen))
        if form == "count":
            text = f"{len(items)} ({'; '.join(items)})"
        elif form == "extreme":
            text = f"{chosen[0].hit.title or document_id(chosen[0].hit)} ({chosen[0].text})"
        elif form == "most":
            text = f"{items[0]} ({len(chosen)} documents)"
        else:
            text = "; ".join(items)
        citations = [
            Citation(c.n, document_id(c.hit), c.hit.doc_id, c.hit.title, c.hit.text, True)
            for c in {c.hit.doc_id: c for c in chosen}.values()
        ]
        return Answer(text, False, citations, self.name, {**details, "items": items})

    def _extreme(self, question: str, asked: str, context: Context, details: dict[str, Any]) -> list[Candidate]:
        found = [c for c in self.per_document(asked, context, _QUANTITIES) if quantity(c.text) is not None]
        if not found:
            return []
        kind = next(t for t in found[0].types if t in _QUANTITIES)
        same = [c for c in found if kind in c.types]
        word = _EXTREME.search(question)["word"].lower()  # type: ignore[index]
        pick = max if word in _MAX_WORDS else min
        best = pick(same, key=lambda c: quantity(c.text) or 0.0)
        details["values"] = {document_id(c.hit): c.text for c in same}
        return [best]
