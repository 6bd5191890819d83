"""Document versions and conflicting sources: answering from every version, and where sources disagree.

Which versions retrieval may return (``VersionPolicy``: current, as-of a date, all) is
``ragline.answer.version_policy``.

A question about change ("what changed between the 2024 and 2026 policy?") is answered from every
version (``is_change_question``), and ``find_conflicts`` lines up sentences of different documents
that say the same thing with different values: between two versions of one document that is a
change (the current one preferred); between documents without version links it is a conflict,
flagged, not merged. ``change_answer`` answers a change question from those pairs, citing both;
``tied_conflict_answer`` answers with both sides when the best sources tie and contradict each other.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

from ragline.answer.context import Context, Source, document_id
from ragline.answer.version_policy import VersionPolicy, version_graph
from ragline.index.filters import Compare, FilterLike, restrict
from ragline.types import Answer, Citation, Hit

# -- change questions and conflicting sources ---------------------------------------------------------
_CHANGE = re.compile(
    r"\bwhat\b[^?]{0,40}\bchanged\b|\bhow\s+(has|have|did|does)\b[^?]{0,60}\bchanged?\b"
    r"|\bdifferences?\s+between\b|\bwhat('s|\s+is|\s+are)?\s+(new|different)\b|\bchanges?\s+(between|since)\b"
    r"|\bcompared?\s+(to|with)\b|\b(previous|prior|earlier|former|old)\s+(version|revision)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"[^\W_]+(?:[.,:/-][^\W_]+)*", re.UNICODE)
_VALUE = re.compile(r"\d")
_NAMED = re.compile(r"[^\W\d_]")  # a token with a letter; with a digit too, it names something (E-2952)
_STOP = frozenset("a an the of to in on for and or is are be by with at as it this that from per".split())


def is_change_question(question: str) -> bool:
    """Whether ``question`` asks what changed between versions (it needs every version retrieved)."""
    return bool(_CHANGE.search(question))


@dataclass(frozen=True)
class Conflict:
    """Two sources stating different values in the same statement."""

    kind: str  # "version": two versions of one document (``current`` is the newer); "conflict": unlinked
    a: int  # source numbers in the context
    b: int
    a_text: str
    b_text: str
    a_values: tuple[str, ...]
    b_values: tuple[str, ...]
    current: int | None = None  # the source of the newer version, for kind "version"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "sources": [self.a, self.b],
            "texts": [self.a_text, self.b_text],
            "values": [list(self.a_values), list(self.b_values)],
            "current": self.current,
        }

    def describe(self) -> str:
        left, right = ", ".join(self.a_values), ", ".join(self.b_values)
        if self.kind == "version":
            old = self.b if self.current == self.a else self.a
            old_v, new_v = (right, left) if self.current == self.a else (left, right)
            return f"[{old}] (older version) says {old_v}; [{self.current}] (current) says {new_v}"
        return f"sources disagree: [{self.a}] says {left}; [{self.b}] says {right} (no version metadata decides)"


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if len(s.strip()) > 3]


def _split(sentence: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """The sentence's words without values, and its values; a name with digits (E-2952) is a word."""
    words = [w.lower() for w in _WORD.findall(sentence)]
    values = tuple(w for w in words if _VALUE.search(w) and not _NAMED.search(w))
    return frozenset(w for w in words if w not in values and w not in _STOP), values


def _names(text: str) -> frozenset[str]:
    """Identifiers that mix letters and digits (incident E-2952, host api-21): they name a thing."""
    return frozenset(w.lower() for w in _WORD.findall(text) if _VALUE.search(w) and _NAMED.search(w))


def find_conflicts(context: Context, min_overlap: float = 0.75, question: str | None = None) -> list[Conflict]:
    """Pairs of sentences from different documents that say the same thing with different values.

    Two sentences state "the same thing" when their words without the values overlap (Jaccard >=
    ``min_overlap``) and they hold values (tokens with digits) that differ. With ``question``, only
    sentences sharing a word with it count. Versions of one document (linked by ``superseded_by`` or
    ``supersedes``) give kind ``version``; other documents give ``conflict``.
    """
    asked = _split(question)[0] if question else None
    rows: list[tuple[Source, str, frozenset[str], tuple[str, ...]]] = []
    for source in context.sources:
        for sentence in _sentences(source.text):
            words, values = _split(sentence)
            if values and len(words) >= 3 and (asked is None or words & asked):
                rows.append((source, sentence, words, values))
    found: list[Conflict] = []
    seen: set[tuple[int, int, frozenset[str], frozenset[str]]] = set()
    for i, (sa, ta, wa, va) in enumerate(rows):
        for sb, tb, wb, vb in rows[i + 1 :]:
            da, db = document_id(sa.hit), document_id(sb.hit)
            if da == db or set(va) == set(vb):
                continue
            if len(wa & wb) / len(wa | wb) < min_overlap:
                continue
            newer = _newer(sa, sb)
            # unlinked documents whose titles name different things (Incident E-2925, E-2952) state
            # values of different things, whatever their sentences share
            if newer is None and _names(sa.hit.title) != _names(sb.hit.title):
                continue
            key = (sa.n, sb.n, frozenset(va), frozenset(vb))
            if key in seen:
                continue
            seen.add(key)
            kind = "version" if newer is not None else "conflict"
            found.append(Conflict(kind, sa.n, sb.n, ta, tb, va, vb, newer))
    return found


def _newer(a: Source, b: Source) -> int | None:
    """The source number of the newer version when ``a`` and ``b`` are linked versions, else None."""
    da, db = document_id(a.hit), document_id(b.hit)
    ma, mb = a.hit.metadata, b.hit.metadata
    if ma.get("superseded_by") == db or mb.get("supersedes") == da:
        return b.n
    if mb.get("superseded_by") == da or ma.get("supersedes") == db:
        return a.n
    return None


def change_answer(question: str, context: Context, reader: str = "versions") -> Answer | None:
    """What changed between versions in ``context``, citing the older and the current source (None: no change)."""
    changes = [c for c in find_conflicts(context) if c.kind == "version"]
    if not changes:
        return None
    lines, cited = [], {}
    for change in changes:
        old = change.b if change.current == change.a else change.a
        old_text, new_text = (change.b_text, change.a_text) if old == change.b else (change.a_text, change.b_text)
        lines.append(f"{old_text.rstrip('.')} [{old}] is now: {new_text.rstrip('.')} [{change.current}]")
        for n in (old, change.current):
            source = context.source(n) if n is not None else None
            if source is not None:
                cited[n] = Citation(n, source.doc_id, source.chunk_id, source.hit.title, source.text)
    text = "Changed between versions: " + "; ".join(dict.fromkeys(lines)) + "."
    details = {"conflicts": [c.to_dict() for c in changes], "change_question": True}
    return Answer(text, False, list(cited.values()), reader=reader, details=details)


def _dated(source: Source | None, n: int | None, role: str) -> str:
    """``[n] (2024-03-01, older version)``: a source's number, effective date (when known) and role."""
    day = str(source.hit.metadata.get("effective_date") or "") if source is not None else ""
    return f"[{n}] ({', '.join(p for p in (day, role) if p)})"


def _stated(sentence: str, values: tuple[str, ...], other: tuple[str, ...]) -> str:
    """The values of ``sentence`` that the other sentence does not state, each with its unit word."""
    phrases = []
    for value in [v for v in values if v not in other] or list(values):
        # a bare number takes the word after it as its unit ("6 months"); "$400", "15:00" stand alone
        unit = r"(?:\s+(?!(?:of|and|or|to|the|a|an|per|for|is|are|was|were|in|on|at|by|from|with)\b)[^\W\d_]+)?"
        found = re.search(
            rf"(?<![\w.:,/-])([$€£]{re.escape(value)}|{re.escape(value)}(?![\w.:,/-]){unit})", sentence, re.IGNORECASE
        )
        phrases.append(found.group(1) if found else value)
    return ", ".join(dict.fromkeys(phrases))


def conflict_note(conflicts: list[Conflict], context: Context) -> str:
    """A clause per version pair, naming the current one last; the disagreements no version metadata settles
    in one clause, each source once ("[1] states $25; [2] states $40; [3] states $30"), not a clause per pair."""
    parts, said = [], set()
    undated: set[tuple[int, str]] = set()  # (source number, what it states), named in number order
    for c in conflicts:
        said_a, said_b = _stated(c.a_text, c.a_values, c.b_values), _stated(c.b_text, c.b_values, c.a_values)
        if frozenset((said_a, said_b)) in said:  # the same disagreement between other chunks of the same sources
            continue
        said.add(frozenset((said_a, said_b)))
        if c.kind == "version":
            old, new = (c.b, c.a) if c.current == c.a else (c.a, c.b)
            old_v, new_v = (said_b, said_a) if old == c.b else (said_a, said_b)
            parts.append(
                f"{_dated(context.source(old), old, 'older version')} states {old_v}; "
                f"{_dated(context.source(new), new, 'current')} states {new_v}"
            )
        else:
            undated |= {(c.a, said_a), (c.b, said_b)}
    if undated:
        stated = "; ".join(f"[{n}] states {value}" for n, value in sorted(undated))
        parts.append(f"the sources disagree: {stated} (no version metadata says which is current)")
    return "Note: " + "; ".join(dict.fromkeys(parts)) + "."


def reader_answer(answer: Answer) -> Answer:
    """``answer`` as its reader gave it: without the conflict note and the citations only the note added.

    For graders: the note names the other value and cites its source on purpose.
    """
    note, added = str(answer.details.get("note") or ""), set(answer.details.get("note_citations") or ())
    if not note:
        return answer
    text = answer.text[: -len(note)].rstrip() if answer.text.endswith(note) else answer.text
    return replace(answer, text=text, citations=[c for c in answer.citations if c.n not in added])


def with_both_versions(index: Any, context: Context, filter: FilterLike = None) -> Context:
    """The versions a change question compares, each read whole as one source (older first).

    Retrieval returns a few chunks of each version, rarely the same parts of both, and chunk
    boundaries cut the sentences that must be lined up. The versions compared are the best-ranked
    source that has a version link and the documents directly linked to it (``superseded_by``,
    ``supersedes``); each is put back together from its chunks (their ``start`` offsets) under the
    asker's ``filter``. ``context`` itself when no source has a version link. The context is not cut to
    a token budget: ``change_answer`` reads it, not a model.
    """
    from ragline.answer.context import build_context
    from ragline.store.base import as_collection

    best = next(
        (s for s in context.sources if s.hit.metadata.get("superseded_by") or s.hit.metadata.get("supersedes")), None
    )
    if best is None or index is None:
        return context
    graph = version_graph(index)
    doc = document_id(best.hit)
    linked = {doc, *graph.successors.get(doc, ())} | {d for d, nexts in graph.successors.items() if doc in nexts}
    # the asker's filter (their ACL) holds here as in retrieval: a version they may not read is not added
    node = restrict(filter, Compare("doc_id", "in", tuple(sorted(linked))))
    chunks: dict[str, list[Any]] = {}
    for chunk in as_collection(index).filter_documents(node):
        chunks.setdefault(chunk.document_id, []).append(chunk)
    if len(chunks) < 2:
        return context
    whole = [_whole(d, parts) for d, parts in chunks.items()]
    whole.sort(key=lambda h: (str(h.metadata.get("effective_date") or ""), h.doc_id))
    hits = [replace(h, rank=rank) for rank, h in enumerate(whole, start=1)]
    return build_context(hits, budget=10**9, order="rank", near_duplicate=None)


def _whole(doc: str, chunks: list[Any]) -> Hit:
    """A document as one hit, its text put back from its chunks' character offsets (overlaps once)."""
    chunks = sorted(chunks, key=lambda c: int(c.metadata.get("start", 0)))
    text, end = "", None
    for c in chunks:
        start = int(c.metadata.get("start", 0))
        if end is None or "start" not in c.metadata:
            piece = c.text
        elif start >= end:
            # chunks without overlap skip the whitespace between them: one character is a space, more
            # a paragraph break (or text not stored), kept as a line break so sentences stay apart
            piece = ("" if start == end else " " if start - end == 1 else "\n") + c.text
        else:
            piece = c.text[end - start :]
        text += piece
        end = int(c.metadata.get("end", start + len(c.text)))
    first = chunks[0]
    metadata = {k: v for k, v in first.metadata.items() if k not in ("start", "end", "section")}
    return Hit(doc, 0.0, 1, first.title, text, metadata, None)


def given_answer(
    question: str,
    context: Context,
    policy: VersionPolicy | str,
    reader: str,
    index: Any = None,
    filter: FilterLike = None,
) -> tuple[Answer | None, Context]:
    """The answer that needs no reader, with the context it cites; ``(None, context)``: the reader answers.

    A change question is answered from the versions that differ (citing both). ``policy`` is the
    pipeline's version policy: with version handling off (``all``) a change question is read like any
    other. With ``index``, a change question reads the compared versions whole (``with_both_versions``,
    under the asker's ``filter``). Else best sources that tie and contradict each other are answered
    with both sides (``tied_conflict_answer``).
    """
    if VersionPolicy.parse(policy).enabled and is_change_question(question):
        both = with_both_versions(index, context, filter)
        changed = change_answer(question, both, reader=f"versions+{reader}")
        if changed is not None:
            return changed, both
    return tied_conflict_answer(question, context, reader=f"conflict+{reader}"), context


def tied_conflict_answer(question: str, context: Context, reader: str = "conflict") -> Answer | None:
    """Both sides, each cited, when the best-scored sources tie and contradict each other; else None.

    A retriever breaks a tie by the order documents were indexed in, so a reader that takes the first
    source would let file order choose between a statement and its contradiction ("released in June
    2020" / "June 2010"). Without version metadata to decide (kind ``conflict``) and without a score
    to, the answer is the disagreement: the sentences it lines up share a word with the question, and
    both sources hold the context's top score.
    """
    if len(context.sources) < 2:
        return None
    top = max(s.hit.score for s in context.sources)
    tied = {s.n for s in context.sources if math.isclose(s.hit.score, top, rel_tol=1e-6, abs_tol=1e-12)}
    conflicts = [c for c in find_conflicts(context, question=question) if c.kind == "conflict" and {c.a, c.b} <= tied]
    if not conflicts:
        return None
    note = conflict_note(conflicts, context)
    text = note.removeprefix("Note: the sources disagree: ")
    text = f"The sources disagree and rank equally: {text}"
    cited = [n for n in dict.fromkeys(n for c in conflicts for n in (c.a, c.b))]
    citations = [Citation(s.n, s.doc_id, s.chunk_id, s.hit.title, s.text) for n in cited if (s := context.source(n))]
    details = {
        "conflicts": [c.to_dict() for c in conflicts],
        "notes": [c.describe() for c in conflicts],
        "note": text,
        "note_citations": cited,
        "tied": True,
    }
    return Answer(text, False, citations, reader=reader, details=details)


def about_answer(conflicts: list[Conflict], text: str) -> list[Conflict]:
    """The disagreements the answer takes a side in: a side's sentence holds the answer, else states a
    value the answer states; none when the answer states neither (the sources disagree on something else)."""
    said = " ".join(text.lower().split())
    holding = [
        c
        for c in conflicts
        if said and (said in " ".join(c.a_text.lower().split()) or said in " ".join(c.b_text.lower().split()))
    ]
    if holding:
        return holding
    values = set(_split(text)[1])
    return [c for c in conflicts if values & (set(c.a_values) | set(c.b_values))]


def annotate_conflicts(answer: Answer, context: Context, question: str | None = None) -> Answer:
    """``answer`` told where its sources disagree: a note in its text that cites both sides.

    The disagreements go in ``details["conflicts"]`` (and ``["notes"]``, one line each); an answer that
    was given (not an abstention) also ends with ``conflict_note``, kept in ``details["note"]`` so
    that graders can read the reader's answer alone (``reader_answer``), and cites every source the note
    names. A value two unlinked documents state differently is flagged, not merged into one answer.
    """
    conflicts = find_conflicts(context, question=question)
    if not conflicts:
        return answer
    answer.details["conflicts"] = [c.to_dict() for c in conflicts]
    answer.details["notes"] = [c.describe() for c in conflicts]
    if answer.abstained:
        return answer
    contested = about_answer(conflicts, answer.text)
    if not contested:
        return answer
    note = conflict_note(contested, context)
    answer.text = f"{answer.text.rstrip()}\n\n{note}" if answer.text.strip() else note
    answer.details["note"] = note
    cited = {c.n for c in answer.citations}
    added = []
    for n in dict.fromkeys(n for c in conflicts for n in (c.a, c.b)):
        source = context.source(n)
        if source is not None and n not in cited:
            answer.citations.append(Citation(n, source.doc_id, source.chunk_id, source.hit.title, source.text))
            added.append(n)
    answer.details["note_citations"] = added
    return answer


def drop_superseded(hits: list[Hit]) -> list[Hit]:
    """Hits without those whose document's ``superseded_by`` successor was retrieved too."""
    retrieved = {document_id(h) for h in hits}
    return [h for h in hits if h.metadata.get("superseded_by") not in retrieved]
