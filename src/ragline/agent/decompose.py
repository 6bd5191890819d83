"""Question decomposition: a multi-hop question as a chain of sub-questions, each hop's filled from the last.

``RuleDecomposer`` knows English syntax, not any corpus. A question that asks about something
described by a clause (``Who leads the X that <verb> <Entity>?``, ``... the X whose <noun> is
<Entity>``, ``... the X <verb>ed by <Entity>``, ``... the X responsible for <verb>ing <Entity>``) is
two hops: first the clause ("X that <verb> <Entity>"), whose answer is the *bridge* entity; then the
question with the clause replaced by the bridge (``Who leads {bridge}?``). Clauses nest, innermost
first. A question without such a clause is one hop; the loop may still bridge from what it read
(IRCoT-style). ``LLMDecomposer`` asks a model for the same chain, one sub-question a line.

``bridge_candidates`` reads a hop's hits for the entity that answers its sub-question: named spans
(capitalized or coded words) of the sentences that best match the sub-question, minus what the
sub-question already names, preferring a span next to the clause's head noun.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragline.agent.grader import sentences
from ragline.types import Hit

BRIDGE = "{bridge}"
_WORD = re.compile(r"[^\W_][\w'’-]*|[^\w\s]")
RELATIVE = {"that", "which", "who", "whose", "whom", "where"}
DETERMINERS = {"the", "a", "an", "this", "that"}
PREPOSITIONS = {"to", "in", "on", "at", "from", "near", "of"}
QUESTION_WORDS = {"who", "what", "which", "where", "when", "how", "why", "whom", "whose", "in", "at", "on"}
# lowercase words that may join the parts of a name ("Haymo of Faversham", "Bank of the West")
NAME_JOINERS = {"of", "the", "de", "la", "von", "van", "del", "da", "and", "&"}
ADJECTIVE_LINKS = {
    ("responsible", "for"),
    ("known", "for"),
    ("famous", "for"),
    ("located", "in"),
    ("based", "in"),
    ("named", "after"),
}


@dataclass(frozen=True, slots=True)
class Hop:
    """One sub-question; ``{bridge}`` in ``text`` is filled with the previous hop's bridge entity."""

    text: str
    head: str = ""  # the noun the clause describes ("team"): the bridge is a name of one


def is_name_token(token: str) -> bool:
    return token[:1].isupper() or any(c.isdigit() for c in token)


class RuleDecomposer:
    """Splits a question at relative and participle clauses (English syntax; no corpus knowledge)."""

    name = "rules"

    def decompose(self, question: str) -> list[Hop]:
        hops: list[Hop] = []
        text = question.strip()
        for _ in range(4):  # at most four nested clauses
            found = _clause(text)
            if found is None:
                break
            start, end, clause, head = found
            hops.append(Hop(clause, head))
            text = text[:start] + BRIDGE + text[end:]
        if not hops:
            return [Hop(question.strip())]
        return [*hops, Hop(text)]

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


class LLMDecomposer:
    """Asks an LLM for the sub-questions, one a line, a later line using ``{bridge}`` for the earlier answer."""

    name = "llm"
    PROMPT = (
        "Split the question into simple sub-questions, one per line, in the order they must be answered. "
        "Where a sub-question needs the answer of the previous one, write {bridge} in its place. "
        "A question that needs one lookup is one line. Write only the sub-questions.\n\nQuestion: "
    )

    def __init__(self, llm: Any, max_tokens: int = 96) -> None:
        self.llm, self.max_tokens = llm, max_tokens
        self.calls = 0

    def decompose(self, question: str) -> list[Hop]:
        self.calls += 1
        reply = self.llm.chat([{"role": "user", "content": self.PROMPT + question}], max_tokens=self.max_tokens)
        lines = [re.sub(r"^\s*(\d+[.)]|[-*])\s*", "", line).strip() for line in reply.splitlines()]
        hops = [Hop(line) for line in lines if len(line) > 3][:4]
        return hops or RuleDecomposer().decompose(question)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "model": getattr(self.llm, "id", "?")}


def _clause(text: str) -> tuple[int, int, str, str] | None:
    """The last clause of ``text`` that ends in a name: (start, end, clause text, head noun)."""
    tokens = [(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)]
    words = [t[0].lower() for t in tokens]
    for i in range(len(tokens) - 1, 0, -1):
        link = _link_length(words, i)
        if not link or words[i - 1] in QUESTION_WORDS or not tokens[i - 1][0].isalpha():
            continue
        end = _name_end(tokens, i + link)
        if end is None:
            continue
        # a trailing "to the south" belongs to the clause ("borders X to the south")
        if (
            end + 3 < len(tokens)
            and words[end + 1] in PREPOSITIONS
            and words[end + 2] in DETERMINERS
            and tokens[end + 3][0].isalpha()
            and tokens[end + 3][0].islower()
        ):
            end += 3
        head_at = i - 1
        start_at = head_at
        for back in range(head_at - 1, max(head_at - 4, -1), -1):  # "the [big] team": the determiner
            if words[back] in DETERMINERS:
                start_at = back
                break
            if words[back] in QUESTION_WORDS or not tokens[back][0].isalpha():
                break
        clause = text[tokens[head_at][1] : tokens[end][2]]
        return tokens[start_at][1], tokens[end][2], clause, words[head_at]
    return None


def _link_length(words: list[str], i: int) -> int:
    """How many words at ``i`` link a noun to its clause (0: none): that / whose / led by / responsible for."""
    if words[i] in RELATIVE:
        return 1
    if i + 1 < len(words) and words[i + 1] == "by" and re.fullmatch(r"\w+(ed|en|wn)", words[i]):
        return 2
    if i + 1 < len(words) and (words[i], words[i + 1]) in ADJECTIVE_LINKS:
        return 2
    return 0


def _name_end(tokens: list[tuple[str, int, int]], start: int) -> int | None:
    """The index of the last token of the first name at or after ``start`` (a run of name tokens)."""
    for j in range(start, len(tokens)):
        if tokens[j][0] == BRIDGE or (is_name_token(tokens[j][0]) and tokens[j][0].isalnum() | ("-" in tokens[j][0])):
            end = j
            while end + 1 < len(tokens) and is_name_token(tokens[end + 1][0]) and tokens[end + 1][0][0].isalnum():
                end += 1
            return end
        if tokens[j][0] == "{":  # an earlier hop's placeholder counts as a name
            close = next((k for k in range(j, len(tokens)) if tokens[k][0] == "}"), None)
            return close
    return None


@dataclass(frozen=True, slots=True)
class Bridge:
    """A name a hop read; ``phrase`` is how the next sub-question says it (with the head noun when the
    evidence puts the noun beside the name: "the Blue Lake team", else the name alone)."""

    name: str
    score: float
    phrase: str


def bridge_candidates(
    subquestion: str, head: str, hits: list[Hit], analyze: Callable[[str], list[str]], top_sentences: int = 3
) -> list[Bridge]:
    """Names in the hits' best-matching sentences that the sub-question does not name, best first."""
    asked = set(analyze(subquestion))
    if not asked:
        return []
    head_terms = set(analyze(head)) if head else set()
    scored = []
    for rank, hit in enumerate(hits):
        for sentence in sentences(hit.text):
            overlap = len(asked & set(analyze(sentence))) / len(asked)
            scored.append((overlap - 0.01 * rank, sentence))
    scored.sort(key=lambda pair: -pair[0])
    found: dict[str, Bridge] = {}
    for score, sentence in scored[:top_sentences]:
        if score <= 0:
            continue
        for name, near_head in _names(sentence, head_terms, analyze):
            terms = set(analyze(name))
            if not terms or terms <= asked:
                continue
            value = score + (0.5 if near_head else 0.0)
            if name not in found or value > found[name].score:
                found[name] = Bridge(name, round(value, 4), f"the {name} {head}" if near_head else name)
    return sorted(found.values(), key=lambda b: -b.score)


def _names(sentence: str, head_terms: set[str], analyze: Callable[[str], list[str]]) -> list[tuple[str, bool]]:
    """Maximal runs of name tokens (joined by ``of``, ``the``, ...), and whether each touches the head noun."""
    tokens = [(m.group(), m.start(), m.end()) for m in _WORD.finditer(sentence)]
    out = []
    i = 0
    while i < len(tokens):
        if not (is_name_token(tokens[i][0]) and tokens[i][0][0].isalnum()):
            i += 1
            continue
        j = i
        while j + 1 < len(tokens):
            nxt = tokens[j + 1][0]
            if is_name_token(nxt) and nxt[0].isalnum():
                j += 1
            elif (
                nxt.lower() in NAME_JOINERS
                and j + 2 < len(tokens)
                and is_name_token(tokens[j + 2][0])
                and tokens[j + 2][0][0].isalnum()
            ):
                j += 2
            else:
                break
        first = i
        while first <= j and not analyze(tokens[first][0]):  # a leading "The" or "To" is no name
            first += 1
        if first <= j:
            name = sentence[tokens[first][1] : tokens[j][2]]
            around = {w.lower() for w, _, _ in tokens[max(i - 2, 0) : i] + tokens[j + 1 : j + 3]}
            near = bool(head_terms & {t for w in around for t in analyze(w)})
            out.append((name, near))
        i = j + 1
    return out


_LINK_TOKEN = re.compile(r"\w+|[^\w\s]")
_DISAMBIGUATOR = re.compile(r"\s*\([^)]*\)\s*$")  # "Lilu (mythology)" is mentioned as "Lilu"
MAX_TITLE_TOKENS = 8


class TitleLinks:
    """The index's document titles as link targets: a passage that names another document's title
    (as Wikipedia passages name the entities they mention) links to it, a strong bridge for the next hop.

    Titles are matched case-sensitively as whole token runs, their trailing parenthetical
    disambiguator dropped; a title needs a capital or a digit (a name, not a common word) and at
    most ``MAX_TITLE_TOKENS`` tokens. Lookup scans a passage's token n-grams, so the cost grows
    with the passage, not with the number of titles.
    """

    def __init__(self, titles: dict[str, set[str]]) -> None:
        self.targets: dict[tuple[str, ...], tuple[str, set[str]]] = {}
        for title, doc_ids in titles.items():
            name = _DISAMBIGUATOR.sub("", title).strip()
            key = tuple(_LINK_TOKEN.findall(name))
            if not key or len(key) > MAX_TITLE_TOKENS or not any(is_name_token(t) for t in key):
                continue
            if not any(t[0].isalnum() for t in key):
                continue
            known = self.targets.get(key)
            self.targets[key] = (name, (known[1] if known else set()) | set(doc_ids))
        self.longest = max((len(k) for k in self.targets), default=0)

    @classmethod
    def of_index(cls, index: Any) -> TitleLinks:
        titles: dict[str, set[str]] = {}
        for doc in index.documents():
            if doc.title:
                titles.setdefault(doc.title, set()).add(doc.document_id)
        return cls(titles)

    def mentioned(self, text: str, exclude: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
        """Titles named in ``text`` in reading order (longest match first), skipping those whose
        documents are all in ``exclude``."""
        tokens = _LINK_TOKEN.findall(text)
        found: list[str] = []
        i = 0
        while i < len(tokens):
            for n in range(min(self.longest, len(tokens) - i), 0, -1):
                target = self.targets.get(tuple(tokens[i : i + n]))
                if target is not None:
                    if not target[1] <= exclude and target[0] not in found:
                        found.append(target[0])
                    i += n - 1
                    break
            i += 1
        return found
