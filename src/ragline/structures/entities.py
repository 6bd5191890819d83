"""Entities of a text: named things a graph over a collection links its chunks by.

Two extractors, the same output (surface names per sentence):

- ``rules`` (the default, no model): runs of capitalized words ("Christopher Nolan", "University of
  Oxford"; the small words ``of``, ``the``, ``de``, ``and``, ``for`` may join two capitalized words), acronyms
  and quoted titles; a sentence's first word only when it is no stopword. A chunk's title is an entity of each
  of its sentences: a passage's title names what it is about. Limits: lower-case names ("iPhone") and
  names in scripts without case (Chinese) are not found; a capitalized common word after a colon is.
- ``llm`` (:class:`LLMEntityExtractor`): the configured LLM lists a chunk's entities and relations as JSON
  that a schema constrains; replies are cached by the model, the prompt and the text
  (:class:`~ragline.models.llm.CachedLLM`), so a build that stops resumes where it was.

:func:`entity_key` is the one normalization (NFKC, case, punctuation, a leading article, a trailing
parenthetical): two names with the same key are one entity.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragline.structures.base import Cost
from ragline.text.sentences import split_sentences
from ragline.text.stopwords import LUCENE_ENGLISH

# A capitalized word (letters, digits, inner apostrophes, hyphens, dots of initials) or an acronym.
_WORD = r"(?:[A-Z][\w'’.\-]*\w|[A-Z]\.?|\d+[A-Z][\w-]*)"
_JOIN = r"(?:of|the|de|la|del|von|van|da|du|and|for|on|in|&)"
_NAME = re.compile(rf"(?<![\w'’-]){_WORD}(?:\s+(?:{_JOIN}\s+)?{_WORD})*")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,60})[\"”]")
_ACRONYM = re.compile(r"[A-Z0-9][A-Z0-9.&-]*[A-Z0-9]\.?")
_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
_PUNCT = re.compile(r"[^\w\s]+")
# Capitalized words that start sentences or name months and days: never an entity alone.
_COMMON = LUCENE_ENGLISH | frozenset(
    "he she his her its they we you i our my it this these those there what which who when where why how "
    "after before during following however although while since until also both each many most some all "
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)


def entity_key(name: str) -> str:
    """The normalized form two names of one entity share ("The Beatles" and "beatles" -> "beatles")."""
    text = unicodedata.normalize("NFKC", name).strip()
    text = _PAREN.sub("", text) or text
    text = _PUNCT.sub(" ", text.lower())
    text = _ARTICLE.sub("", " ".join(text.split()))
    return text.strip()


def _names_in(sentence: str) -> list[str]:
    found = []
    for match in _NAME.finditer(sentence):
        words = match.group(0).split()
        while words and words[0].lower().strip(".") in _COMMON:  # "The", "In" before a name
            words.pop(0)
        while words and words[-1].lower() in _COMMON:
            words.pop()
        name = " ".join(words).strip(".'’-")
        if len(words) == 1 and not sentence[: match.start()].strip() and not _ACRONYM.fullmatch(name):
            continue  # one capitalized word opening the sentence: capitalized for the sentence's sake
        if len(name) > 1 and entity_key(name) and entity_key(name) not in _COMMON:
            found.append(name)
    found += [m.group(1).strip() for m in _QUOTED.finditer(sentence) if m.group(1)[:1].isupper()]
    return found


@dataclass
class Extraction:
    """What one chunk yields: entity names per sentence (sentence text, names) and relations."""

    sentences: list[tuple[str, list[str]]] = field(default_factory=list)
    relations: list[tuple[str, str, str]] = field(default_factory=list)  # (source, relation, target)

    def names(self) -> list[str]:
        """Every entity name, once, in order of first mention."""
        return list(dict.fromkeys(n for _, names in self.sentences for n in names))


class RuleEntityExtractor:
    """Names found by capitalization (see the module); relations are co-occurrence in a sentence."""

    name = "rules"

    def extract(self, text: str, title: str = "") -> Extraction:
        out = Extraction()
        head = [title.strip()] if title.strip() and entity_key(title) else []
        for span in split_sentences(text):
            sentence = text[span[0] : span[1]]
            names = list(dict.fromkeys(head + _names_in(sentence)))
            out.sentences.append((sentence, names))
        return out

    def query_names(self, query: str) -> list[str]:
        """The names in a question (the same rules)."""
        return list(dict.fromkeys(_names_in(query)))

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


ENTITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        # caps chosen on the Orrin training world's first 12 chunks: at 20 and 20 the 0.5B model ran out of its
        # 384 reply tokens in 10 of 12 replies, at 12 and 6 in 2 (BENCHMARKS.md, "The LLM extractor's cost")
        "entities": {"type": "array", "items": {"type": "string"}, "maxItems": 12},
        "relations": {
            "type": "array",
            "maxItems": 6,
            "items": {
                "type": "object",
                "properties": {
                    "source": {"type": "string"},
                    "relation": {"type": "string"},
                    "target": {"type": "string"},
                },
                "required": ["source", "relation", "target"],
            },
        },
    },
    "required": ["entities", "relations"],
}

PROMPT = (
    "List the named entities (people, organizations, places, products, works, events, codes) in the text, "
    "and the relations between them that the text states, as JSON.\n\nText:\n{text}"
)


class LLMEntityExtractor:
    """Entities and relations by the configured LLM, one JSON-schema call per chunk (cached, resumable).

    A relation whose ends are not both among the chunk's entities is dropped; the names are placed in the
    sentences that mention them (a name no sentence contains is placed in the first), so that a graph
    built from either extractor has the same shape. ``cost`` counts the calls the model answered (not the reply
    cache) and their prompt and reply tokens (``Cost.charge``, as the LLM writer of reports and summaries does). A
    reply that is no JSON of the schema (cut by the token limit: a 0.5B model lists every noun) falls back to the
    rules extractor for that chunk, counted in ``fallbacks``: one chunk does not stop the graph.
    """

    name = "llm"

    def __init__(self, llm: Any = None, model: str | None = None, max_tokens: int = 384) -> None:
        from ragline.models.llm import CachedLLM

        self._llm = None if llm is None else CachedLLM.wrap(llm)
        self.model, self.max_tokens = model, int(max_tokens)
        self.cost, self.fallbacks = Cost(), 0
        self._rules = RuleEntityExtractor()

    @property
    def llm(self) -> Any:
        if self._llm is None:
            from ragline.models.llm import shared_llm

            self._llm = shared_llm(self.model)
        return self._llm

    def extract(self, text: str, title: str = "") -> Extraction:
        messages = [{"role": "user", "content": PROMPT.format(text=(f"{title}\n{text}" if title else text))}]
        from ragline.models.llm.json_schema import JSONReplyError

        model = self.llm
        misses = model.misses
        try:
            reply = model.generate_json(messages, ENTITY_SCHEMA, max_tokens=self.max_tokens)
        except JSONReplyError:
            self.cost.charge(model, misses, [messages[0]["content"]], self.max_tokens)  # the reply ran to the cap
            self.fallbacks += 1
            return self._rules.extract(text, title)
        self.cost.charge(model, misses, [messages[0]["content"], json.dumps(reply)])
        names = [str(n).strip() for n in reply.get("entities", []) if str(n).strip() and entity_key(str(n))]
        if title.strip() and entity_key(title):
            names.insert(0, title.strip())
        keys = {entity_key(n) for n in names}
        out = Extraction()
        placed: set[str] = set()
        for span in split_sentences(text):
            sentence = text[span[0] : span[1]]
            low = sentence.lower()
            here = [n for n in names if n.lower() in low]
            placed.update(here)
            out.sentences.append((sentence, here))
        if out.sentences:
            first_sentence, first_names = out.sentences[0]
            missing = [n for n in names if n not in placed]
            out.sentences[0] = (first_sentence, list(dict.fromkeys(first_names + missing)))
        for rel in reply.get("relations", []):
            source, target = str(rel.get("source", "")), str(rel.get("target", ""))
            if entity_key(source) in keys and entity_key(target) in keys:
                out.relations.append((source, str(rel.get("relation", "")), target))
        return out

    def query_names(self, query: str) -> list[str]:
        return self._rules.query_names(query)

    def config(self) -> dict[str, Any]:
        model = self._llm.id if self._llm is not None else (self.model or "default")
        return {"name": self.name, "model": model, "max_tokens": self.max_tokens}


def make_extractor(name: str = "rules", llm: Any = None, model: str | None = None) -> Any:
    """The extractor ``name`` (``rules`` or ``llm``)."""
    from ragline.errors import ConfigError

    if name == "rules":
        return RuleEntityExtractor()
    if name == "llm":
        return LLMEntityExtractor(llm=llm, model=model)
    raise ConfigError(f"unknown entity extractor {name!r}; use 'rules' or 'llm'")


def query_keys(query: str, keys: Sequence[str] | set[str] | dict[str, Any], max_words: int = 6) -> list[str]:
    """Keys of known entities the query mentions: its word n-grams (up to ``max_words``) that are keys.

    Finds lower-case mentions of names of several words ("the beatles"), which capitalization alone
    would miss; a single word counts only when capitalized and not the first; n-grams of stopwords only are
    skipped. Longest match first, each position used once.
    """
    raw = [w for w in unicodedata.normalize("NFKC", query).split() if entity_key(w)]
    words = [entity_key(w) for w in raw]
    found: list[str] = []
    used = [False] * len(words)
    for n in range(min(max_words, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            if any(used[i : i + n]):
                continue
            gram = " ".join(words[i : i + n])
            if n == 1 and (i == 0 or not raw[i][:1].isupper()):
                continue  # one word: a name only when capitalized, and not the question's first word
            if gram in keys and not all(w in _COMMON for w in words[i : i + n]):
                found.append(gram)
                used[i : i + n] = [True] * n
    return found
