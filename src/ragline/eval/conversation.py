"""The conversation evaluation: follow-up turns written by code from a corpus's questions, answered with and
without the conversation's history.

Conversations (``follow_ups``) are built from a typed question set (the Orrin worlds), never by hand:

* ``pair`` / ``triple``: questions whose first gold document is the same (they are about one thing) and share a
  subject phrase (a code, a name, or a definite noun phrase: "E-6843", "the travel policy"). The first turn is
  the first question as written; each later turn is another question with that phrase replaced by an anaphor
  ("that incident", "that policy", "it"), so it omits what the first turn named.
* ``swap``: questions of one template that differ only in their code ("What caused error E-1?", "... E-2?"):
  the second turn names only the new code ("And error E-2?"), so it omits the question the first turn asked.

Arms: ``blind`` retrieves and reads each turn as written; ``aware`` reads the standalone question
``ragline.answer.conversation.condense`` makes from the turns so far. Both answer with one pipeline over
one index, as the question's user (its filter inside retrieval), graded correct / wrong / abstained like
every answer evaluation (``grade_question``); later turns are compared with a paired test, first turns
are reported for both arms (a first turn has no history, so the arms must agree).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragline.answer.conversation import condense
from ragline.corpora.base import Question
from ragline.eval.answers import grade_question, match_for
from ragline.eval.stats import compare

_CODE = re.compile(r"\b[A-Z][A-Z0-9]*-\d[\w-]*\b")
_WORD = re.compile(r"[\w'-]+|[^\w\s]")
_STOPWORDS = set(
    "the a an of in on at to for by with from under above is are was were do does did what which who how when where "
    "and or i my me we our can could should must will may".split()
)


@dataclass(frozen=True)
class Turn:
    text: str  # the turn as the user writes it
    question: Question  # the question it asks, with its gold answer and documents


@dataclass(frozen=True)
class Conversation:
    id: str
    kind: str  # pair | triple | swap
    turns: tuple[Turn, ...]


def _words(text: str) -> list[str]:
    return text.rstrip("?").split()


def _shared_subject(first: str, later: str) -> str | None:
    """The longest run of words both questions share that names a thing: it holds a code or a capitalized
    word that does not start the question, or ``later`` writes it after "the"; None when there is none."""
    a = [w.strip(",;:?") for w in _words(first)]
    b = [w.strip(",;:?") for w in _words(later)]
    best: list[str] = []
    for i in range(len(b)):
        for j in range(i + 1, len(b) + 1):
            run = b[i:j]
            if len(run) <= len(best) or not _contains(a, run):
                continue
            if run[-1].lower() in _STOPWORDS or run[0].lower() in _STOPWORDS:
                continue
            named = any(
                _CODE.fullmatch(w) or (w[:1].isupper() and len(w) > 1 and w.lower() not in _STOPWORDS and k + i > 0)
                for k, w in enumerate(run)
            )
            if named or (i > 0 and b[i - 1].lower() == "the"):
                best = run
    return " ".join(best) or None


def _contains(words: list[str], run: list[str]) -> bool:
    lowered, wanted = [w.lower() for w in words], [w.lower() for w in run]
    return any(lowered[i : i + len(wanted)] == wanted for i in range(len(lowered) - len(wanted) + 1))


def anaphoric(text: str, subject: str) -> str | None:
    """``text`` with ``subject`` replaced by an anaphor: "incident E-6843" -> "that incident", "the travel
    policy" -> "that policy", else "it"; None when the subject is not found as a phrase of ``text``."""
    escaped = re.escape(subject)
    parts = subject.split()
    if len(parts) == 2 and parts[0].islower() and _CODE.fullmatch(parts[1]) and subject in text:
        return text.replace(subject, f"that {parts[0]}", 1)  # "error E-9484" -> "that error"
    noun_before = re.search(rf"\b([a-z]+) {escaped}\b", text)
    if noun_before and noun_before.group(1) not in _STOPWORDS:
        return text.replace(noun_before.group(0), f"that {noun_before.group(1)}", 1)
    the_before = re.search(rf"\b[Tt]he {escaped}\b", text)
    if the_before and len(subject.split()) > 1:
        return text.replace(the_before.group(0), f"that {subject.split()[-1]}", 1)
    if the_before:
        return text.replace(the_before.group(0), "it", 1)
    if re.search(rf"\b{escaped}\b", text):
        return re.sub(rf"\b{escaped}\b", "it", text, count=1)
    return None


def follow_ups(questions: Sequence[Question], seed: int = 0) -> list[Conversation]:
    """Every pair, triple and swap conversation the questions allow (answerable questions only), in a seeded order."""
    usable = [q for q in questions if not q.expected_abstain and q.gold_doc_ids]
    conversations: list[Conversation] = []
    by_doc: dict[str, list[Question]] = defaultdict(list)
    for q in usable:
        by_doc[q.gold_doc_ids[0]].append(q)
    for doc, group in by_doc.items():
        first, chain = group[0], [Turn(group[0].text, group[0])]
        for later in group[1:]:
            subject = _shared_subject(first.text, later.text)
            text = anaphoric(later.text, subject) if subject else None
            if text and text != later.text and subject and subject not in text:
                chain.append(Turn(text, later))
        if len(chain) >= 2:
            conversations.append(Conversation(f"{doc}:pair", "pair", tuple(chain[:2])))
        if len(chain) >= 3:
            conversations.append(Conversation(f"{doc}:triple", "triple", tuple(chain[:3])))
    by_template: dict[tuple[str, tuple[str, ...]], list[tuple[str, Question]]] = defaultdict(list)
    for q in usable:
        codes = _CODE.findall(q.text)
        if len(codes) == 1:
            by_template[(q.text.replace(codes[0], "{}"), tuple(q.user_groups))].append((codes[0], q))
    for members in by_template.values():
        for (_, a), (code_b, b) in zip(members, members[1:], strict=False):
            noun = re.search(rf"\b([a-z]+) {re.escape(code_b)}\b", b.text)
            named = f"{noun.group(1)} {code_b}" if noun and noun.group(1) not in _STOPWORDS else code_b
            turns = (Turn(a.text, a), Turn(f"And {named}?", b))
            conversations.append(Conversation(f"{a.id}>{b.id}:swap", "swap", turns))
    random.Random(seed).shuffle(conversations)
    return conversations


Answerer = Callable[[str, Question], tuple[Any, Any]]  # (question text, gold question) -> (Answer, Context)


def run(conversations: Sequence[Conversation], answer: Answerer, reader: str, llm: Any = None) -> dict[str, Any]:
    """Both arms over every conversation; outcomes per turn and the paired comparison on later turns."""
    match = match_for(reader)
    rows: list[dict[str, Any]] = []
    for conversation in conversations:
        history: list[dict[str, str]] = []
        for position, turn in enumerate(conversation.turns):
            history.append({"role": "user", "content": turn.text})
            condensed = condense(history, llm, "llm" if llm is not None else "rules")
            row: dict[str, Any] = {
                "conversation": conversation.id,
                "kind": conversation.kind,
                "turn": position + 1,
                "text": turn.text,
                "standalone": condensed.question,
                "question": turn.question.text,
            }
            for arm, asked in (("blind", turn.text), ("aware", condensed.question)):
                got, context = answer(asked, turn.question)
                grade = grade_question(turn.question, got, context, match)
                row[arm] = {"outcome": grade.outcome, "answer": got.text}
            rows.append(row)
            history.append({"role": "assistant", "content": row["aware"]["answer"] or "I don't know."})
    return {"rows": rows, **summarize(rows)}


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Correct / wrong / abstained per arm for first and later turns (and by kind), and the paired test."""
    out: dict[str, Any] = {"summary": {}, "paired": {}}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        later = row["turn"] > 1
        groups["first turns" if not later else "follow-ups"].append(row)
        if later:
            groups[f"follow-ups: {row['kind']}"].append(row)
    for name, members in groups.items():
        out["summary"][name] = {
            arm: {
                "n": len(members),
                **{o: sum(r[arm]["outcome"] == o for r in members) for o in ("correct", "wrong", "abstained")},
            }
            for arm in ("blind", "aware")
        }
    for name in ("first turns", "follow-ups"):
        members = groups.get(name, [])
        if len(members) >= 2:
            key = [f"{r['conversation']}#{r['turn']}" for r in members]
            blind = {k: float(r["blind"]["outcome"] == "correct") for k, r in zip(key, members, strict=True)}
            aware = {k: float(r["aware"]["outcome"] == "correct") for k, r in zip(key, members, strict=True)}
            out["paired"][name] = dict(compare(blind, aware))
    return out
