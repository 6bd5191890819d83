"""Conversations: a chat's history and its new message condensed into one standalone question.

A follow-up leans on what was said before ("How long did that incident last?", "And for E-2102?"). Retrieval
for the fragment finds the wrong documents, so the pipeline retrieves and answers for a *standalone*
question instead, which :func:`condense` makes from the user turns so far:

* ``rules`` (no model): every earlier user turn is condensed in order, so a third turn can lean on what
  the first named through the second. Against the previous standalone question:

  - an elliptical turn that names its own entity and little else ("And E-2102?", "What about the meals
    policy?") keeps the previous question and swaps its entity of the same shape (a code for a code, a
    name for a name) for the new one;
  - a turn that names no entity of its own takes the previous question's: "that/this/the same NOUN"
    becomes the previous question's phrase ending in NOUN ("the travel policy"), or NOUN and its code or
    name ("incident E-6843"); a pronoun (it, its, they, them, their, there) becomes the previous
    question's first entity; when no anaphor is found, the entities are added after the message;
  - any other turn (it names its own entities) is a new topic and stands as written.

  Entities are what the support check reads as a question's names (``question_names``), its literals
  with a digit (codes, numbers) and its quoted phrases: nothing here knows a corpus.
* ``llm``: the model rewrites the last message given the conversation (greedy, through the reply cache).
  A rewrite that drops an entity the rules carry, or that is empty, is replaced by the rules' question,
  so a small model's slip costs no follow-up.

The first turn of a conversation (no history) is its own standalone question, whatever the method.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragline.answer.support import LITERAL, norm_phrase, question_names
from ragline.errors import InputError, ModelError

METHODS = ("rules", "llm")
MAX_HISTORY_TURNS = 20  # user turns read back; older ones rarely carry what a follow-up leans on
_PRONOUNS = {
    "it": "",
    "its": "'s",
    "they": "",
    "them": "",
    "their": "'s",
    "there": "",
    "he": "",
    "she": "",
    "his": "'s",
    "her": "'s",
    "him": "",
}
_ANAPHOR = re.compile(r"\b(?:that|this|the same|these|those)\s+([a-z][a-z-]*)\b", re.IGNORECASE)
_PRONOUN = re.compile(r"\b(" + "|".join(_PRONOUNS) + r")\b", re.IGNORECASE)
_ELLIPSIS = re.compile(
    r"^\s*(?:and what about|and how about|and for|and|what about|how about|same for|what of)\b", re.IGNORECASE
)
_DETERMINERS = {"the", "a", "an", "our", "my", "your", "their", "its"}
_QUOTED = re.compile(r"[\"“”]([^\"“”]{2,80})[\"“”]")
ELLIPTICAL_WORDS = 6  # a turn this short that names its own entity leans on the previous question's predicate


@dataclass(frozen=True, slots=True)
class Condensed:
    """The standalone question of a conversation's last message, and how it was made."""

    question: str
    message: str
    method: str  # "none" (first turn, or a new topic), "rules" or "llm"

    def to_dict(self) -> dict[str, str]:
        return {"question": self.question, "message": self.message, "method": self.method}


def user_turns(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The text of the user messages, oldest first (a message's ``content`` a string)."""
    turns = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise InputError(f"messages[{i}]", 'expected {"role": ..., "content": "text"}')
        if message.get("role") == "user" and message["content"].strip():
            turns.append(message["content"].strip())
    return turns


def entities(text: str) -> list[str]:
    """The entities a question names, as written in it: codes and numbers, capitalized names, quoted phrases."""
    found: list[str] = [t for t in LITERAL.findall(text) if any(c.isdigit() for c in t)]
    found += [m for m in _QUOTED.findall(text)]
    lowered = text.lower()
    for name in question_names(text):  # normalized ("grid ops east"): find it as written
        at = _phrase_at(lowered, name)
        if at is not None:
            found.append(text[at[0] : at[1]])
    return list(dict.fromkeys(e for e in found if e))


def _phrase_at(lowered: str, phrase: str) -> tuple[int, int] | None:
    words = [re.escape(w) for w in phrase.split()]
    match = re.search(r"\b" + r"[\s\-]+".join(words) + r"\b", lowered)
    return (match.start(), match.end()) if match else None


def _shape(entity: str) -> str:
    """What kind of entity: a code or number (has a digit) or a name."""
    return "literal" if any(c.isdigit() for c in entity) else "name"


def _noun_phrase(previous: str, noun: str) -> str | None:
    """The previous question's phrase that ends in ``noun``: its determiner and modifiers ("the travel policy"),
    or the noun and the code after it ("error E-6843"); None when neither is there."""
    words = [w.strip(",;:?!.()") for w in previous.split()]
    lowered = [w.lower() for w in words]
    for end in range(len(words) - 1, -1, -1):
        if lowered[end] != noun.lower():
            continue
        if end + 1 < len(words) and any(c.isdigit() for c in words[end + 1]):
            return f"{words[end]} {words[end + 1]}"
        start = end
        while start > 0 and end - start < 4 and re.fullmatch(r"[a-z][a-z-]*", lowered[start - 1]):
            if lowered[start - 1] in _DETERMINERS or lowered[start - 1] in _STOP:
                break
            start -= 1
        before = lowered[start - 1] if start > 0 else ""
        if before in _DETERMINERS:
            return " ".join(words[start - 1 : end + 1])
        if before.endswith("'s"):  # "this year's summer social": the possessive determines it
            return " ".join(words[start : end + 1])
    return None


# Words that end a noun phrase's modifiers when reading back from its head ("receipts under the travel policy").
_STOP = set(
    "what which who whom whose when where why how is are was were be do does did i me we you can could should would "
    "must will may might for of in on at to by with from under above below over after before and or not".split()
)


def _with_entity(message: str, previous: str, entity_list: list[str]) -> str:
    """``message`` with its anaphors and pronouns replaced from the previous standalone question."""
    replaced = False

    def anaphor(match: re.Match[str]) -> str:
        nonlocal replaced
        noun = match.group(1)
        phrase = _noun_phrase(previous, noun)
        if phrase:
            replaced = True
            return phrase
        if entity_list:
            replaced = True
            return f"{noun} {entity_list[0]}"
        return match.group(0)

    text = _ANAPHOR.sub(anaphor, message)
    if not replaced and entity_list:

        def pronoun(match: re.Match[str]) -> str:
            nonlocal replaced
            replaced = True
            return entity_list[0] + _PRONOUNS[match.group(1).lower()]

        text = _PRONOUN.sub(pronoun, text, count=1)
    if not replaced and entity_list:
        text = f"{text.rstrip()} ({', '.join(entity_list)})"
    return text


def _swap_entity(message: str, previous: str, own: list[str], before: list[str]) -> str | None:
    """The previous question with its entity of each shape the message names swapped for the message's."""
    result, swapped = previous, False
    for entity in own:
        same = [e for e in before if _shape(e) == _shape(entity)]
        if same and same[0] in result:
            result, swapped = result.replace(same[0], entity, 1), True
    return result if swapped else None


def condense_rules(turns: Sequence[str]) -> str:
    """The standalone question of the last of ``turns`` (user messages, oldest first), by the rules above."""
    if not turns:
        raise InputError("messages", "no user message with text: the last user message is the question")
    standalone = turns[0]
    for message in turns[1:]:
        standalone = _condense_one(standalone, message)
    return standalone


def _condense_one(previous: str, message: str) -> str:
    own, before = entities(message), entities(previous)
    words = len(message.split())
    if own and (_ELLIPSIS.match(message) or words <= ELLIPTICAL_WORDS and not _PRONOUN.search(message)):
        swapped = _swap_entity(message, previous, own, before)
        if swapped and (_ELLIPSIS.match(message) or words <= len(own[0].split()) + 2):
            return swapped
    if own:
        return message  # a new topic: it names what it is about
    marker = _ELLIPSIS.match(message)
    if marker:  # "What about the meals policy?": the previous question, its phrase with that head swapped
        rest = message[marker.end() :].strip(" ?!.,")
        head = rest.split()[-1] if rest else ""
        phrase = _noun_phrase(previous, head) if head else None
        if phrase:
            return previous.replace(phrase, rest, 1)
    subject = before or [p for p in [_last_noun_phrase(previous)] if p]
    if not subject:  # nothing to carry: an anaphor may still name a noun phrase of the previous question
        return _with_entity(message, previous, []) if _ANAPHOR.search(message) else message
    return _with_entity(message, previous, subject)


def _last_noun_phrase(question: str) -> str | None:
    """The previous question's last definite noun phrase ("the VPN"), the subject a pronoun takes without names."""
    words = [w.strip(",;:?!.()") for w in question.split()]
    for start in range(len(words) - 2, -1, -1):
        if words[start].lower() == "the":
            end = start + 1
            while end < len(words) and end - start <= 3 and words[end].lower() not in _STOP:
                end += 1
            if end > start + 1:
                return " ".join(words[start:end])
    return None


REWRITE_PROMPT = (
    "Rewrite the user's last message as one standalone question that can be understood without the "
    "conversation. Keep every name, code and number it refers to. Write only the question.\n\n"
)


def condense_llm(llm: Any, turns: Sequence[str], max_tokens: int = 64) -> str:
    """The model's standalone rewrite of the last turn, or the rules' when the rewrite drops what they carry."""
    ruled = condense_rules(turns)
    if len(turns) < 2:
        return ruled
    history = "\n".join(f"User: {t}" for t in turns[-MAX_HISTORY_TURNS:-1])
    prompt = f"{REWRITE_PROMPT}Conversation:\n{history}\n\nLast message: {turns[-1]}\n\nStandalone question:"
    try:
        reply = llm.chat([{"role": "user", "content": prompt}], max_tokens=max_tokens, stop=["\n"])
    except ModelError:
        return ruled
    rewrite = reply.strip().strip('"').strip()
    keys = {norm_phrase(e) for e in entities(ruled)}
    if not rewrite or not all(norm_phrase(k) in norm_phrase(rewrite) for k in keys):
        return ruled
    return rewrite


def condense(messages: Sequence[dict[str, Any]], llm: Any = None, method: str = "rules") -> Condensed:
    """The standalone question of ``messages`` (OpenAI-style dicts; the last user message is the new one).

    ``method``: ``rules``, or ``llm`` (needs ``llm``; the rules stand in where the rewrite drops an entity).
    """
    if method not in METHODS:
        raise InputError("condense", f"method must be one of {', '.join(METHODS)}, not {method!r}")
    turns = user_turns(messages)[-MAX_HISTORY_TURNS:]
    if not turns:
        raise InputError("messages", "no user message with text: the last user message is the question")
    if len(turns) == 1:
        return Condensed(turns[0], turns[0], "none")
    if method == "llm" and llm is not None:
        question = condense_llm(llm, turns)
        return Condensed(question, turns[-1], "llm" if question != condense_rules(turns) else "rules")
    question = condense_rules(turns)
    return Condensed(question, turns[-1], "rules" if question != turns[-1] else "none")
