"""Aggregate and global questions: about many documents at once, not one passage.

"Which expense policy has the highest receipt threshold?", "List every active substation that Grid
Ops East looks after", "How many countries have salt as their main export?", "Which depot do the
most teams work out of?": a ranker that scores chunks one by one finds some of the documents such a
question needs, rarely all of them. Four types:

* ``comparison`` -- the item with the highest / lowest value of a numeric attribute across every
  document of a kind (gold: all of them, since each must be seen to know the extreme);
* ``listing`` -- every item whose categorical attribute has a value (gold: those items' documents);
* ``counting`` -- how many items have that value (gold: the same documents);
* ``theme`` -- the value that recurs most across a kind of document (gold: every document of the
  kind).

The questions are a separate, versioned addition (``AGGREGATE_VERSION``): ``build_orrin`` and
``build_countries`` and their fingerprints are untouched; ``with_aggregate`` returns a copy of a
corpus with these questions appended. One generic generator serves both worlds: a world contributes
only a table of *records* (item, attribute, value, the fact sentence) read from its facts and
metadata, and the question wordings; answers, evidence and gold documents are computed from the
records, so a training world (other seed) gets the same kinds of questions about its own values.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, replace

from ragline.corpora.base import Corpus, Fact, Question
from ragline.errors import ConfigError

AGGREGATE_VERSION = 1
AGGREGATE_TYPES = ("comparison", "listing", "counting", "theme")
# at most this many listing / counting questions per attribute, and items per listing answer
PER_ATTRIBUTE = 3
MAX_LISTED = 6

_NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()


@dataclass(frozen=True, slots=True)
class Record:
    """``item`` (an entity of ``kind``) has ``value`` for ``attribute``, said by ``fact``."""

    kind: str
    item: str
    attribute: str
    value: str
    fact: Fact
    number: float | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Wording:
    """How to ask about one (kind, attribute): templates with ``{value}`` where one is named."""

    highest: str = ""
    lowest: str = ""
    listing: str = ""
    counting: str = ""
    theme: str = ""


def aggregate_questions(corpus: Corpus) -> list[Question]:
    """The aggregate/global questions (version ``AGGREGATE_VERSION``) of an Orrin or countries world."""
    records, wordings = _world_tables(corpus)
    rng = random.Random(f"aggregate:{AGGREGATE_VERSION}:{corpus.name}:{corpus.seed}")
    drafts: list[tuple[str, str, str, list[str], list[Fact]]] = []  # type, text, answer, aliases, facts
    by_attribute: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for record in records:
        by_attribute[(record.kind, record.attribute)].append(record)
    for key, wording in wordings.items():
        group = sorted(by_attribute.get(key, []), key=lambda r: r.item)
        if len(group) < 3:
            continue
        facts = [r.fact for r in group]
        for template, pick in ((wording.highest, max), (wording.lowest, min)):
            numbered = [(r.number, r) for r in group if r.number is not None]
            if not template or len(numbered) < 3:
                continue
            best = pick(number for number, _ in numbered)
            winners = [r for number, r in numbered if number == best]
            if len(winners) == 1:  # a tie has no single answer
                drafts.append(("comparison", template, winners[0].item, list(winners[0].aliases), facts))
        values = Counter(r.value for r in group)
        if wording.theme:
            (top, n), *rest = values.most_common() or [("", 0)]
            if n >= 2 and (not rest or rest[0][1] < n):
                drafts.append(("theme", wording.theme, top, [], facts))
        shared = [v for v, n in sorted(values.items()) if 2 <= n <= MAX_LISTED]
        for qtype, template in (("listing", wording.listing), ("counting", wording.counting)):
            if not template:
                continue
            for value in sorted(rng.sample(shared, min(PER_ATTRIBUTE, len(shared)))):
                members = [r for r in group if r.value == value]
                if qtype == "listing":
                    answer, aliases = "; ".join(r.item for r in members), []
                else:
                    answer, aliases = str(len(members)), [_NUMBER_WORDS[len(members)]]
                drafts.append((qtype, template.format(value=value), answer, aliases, [r.fact for r in members]))
    counters: Counter[str] = Counter()
    questions = []
    for qtype, text, answer, aliases, facts in sorted(drafts, key=lambda d: AGGREGATE_TYPES.index(d[0])):
        counters[qtype] += 1
        questions.append(
            Question(
                id=f"{qtype}-{counters[qtype]:03d}",
                text=text,
                type=qtype,
                answer=answer,
                aliases=[a for a in dict.fromkeys(aliases) if a != answer],
                gold_doc_ids=list(dict.fromkeys(f.doc_id for f in facts)),
                evidence=[(f.doc_id, f.sentence) for f in facts],
            )
        )
    return questions


def with_aggregate(corpus: Corpus) -> Corpus:
    """A copy of ``corpus`` whose questions are followed by its aggregate questions (documents unchanged)."""
    return replace(corpus, questions=[*corpus.questions, *aggregate_questions(corpus)])


# --- the worlds' tables -----------------------------------------------------------------------------


def _world_tables(corpus: Corpus) -> tuple[list[Record], dict[tuple[str, str], Wording]]:
    from ragline.corpora.countries import CountriesCorpus
    from ragline.corpora.orrin import OrrinCorpus

    if isinstance(corpus, OrrinCorpus):
        return _orrin_records(corpus), ORRIN_WORDINGS
    if isinstance(corpus, CountriesCorpus):
        if corpus.language != "en":
            raise ConfigError(f"aggregate questions are worded in English only, not {corpus.language!r}")
        return _countries_records(corpus), COUNTRIES_WORDINGS
    raise ConfigError(f"corpus {corpus.name!r} has no aggregate questions (Orrin and countries worlds do)")


ORRIN_WORDINGS: dict[tuple[str, str], Wording] = {
    ("policy", "receipt_threshold"): Wording(
        highest="Which expense policy has the highest receipt threshold?",
        lowest="Which expense policy has the lowest receipt threshold?",
    ),
    ("policy", "approval_threshold"): Wording(
        highest="Which expense policy allows the largest single expense before pre-approval is needed?",
        lowest="Which expense policy requires pre-approval from the smallest single expense?",
    ),
    ("policy", "submission_deadline"): Wording(
        highest="Which expense policy gives employees the longest time to submit receipts?",
        lowest="Which expense policy has the shortest deadline for submitting receipts?",
    ),
    ("incident", "duration"): Wording(
        highest="Which incident lasted the longest?", lowest="Which incident was the shortest?"
    ),
    ("substation", "team"): Wording(
        listing="List every active substation that {value} maintains.",
        counting="How many active substations does {value} maintain?",
        theme="Which team maintains the most active substations?",
    ),
    ("team", "depot"): Wording(
        listing="Which teams are based at the {value} depot?",
        counting="How many teams are based at the {value} depot?",
        theme="Which depot are the most teams based at?",
    ),
}


def _orrin_records(corpus: Corpus) -> list[Record]:
    from ragline.corpora.orrin import templates as T

    documents = {d.id: d for d in corpus.documents}
    records = []
    for fact in corpus.facts:
        doc = documents[fact.doc_id]
        meta, key = doc.metadata, fact.fact_id.rpartition("#")[2]
        doc_type = meta.get("doc_type")
        if (
            doc_type == "policy"
            and "policy" in meta
            and key in ("receipt_threshold", "approval_threshold", "submission_deadline")
        ):
            short = str(T.EXPENSE_POLICIES[meta["policy"]]["short"])
            item = f"{short} policy"
            records.append(Record("policy", item, key, fact.value, fact, _number(fact.value), (short, doc.title)))
        elif doc_type == "incident_report" and key == "duration":
            code = str(meta["error_code"])
            records.append(Record("incident", code, key, fact.value, fact, _number(fact.value)))
        elif doc_type == "substation" and key == "team" and meta.get("status") == "active":
            records.append(Record("substation", str(meta["site_code"]), key, fact.value, fact))
        elif doc_type == "team" and key == "depot":
            records.append(Record("team", doc.title, key, fact.value, fact))
    return records


COUNTRIES_WORDINGS: dict[tuple[str, str], Wording] = {
    ("country", "population"): Wording(
        highest="Which country has the largest population?", lowest="Which country has the smallest population?"
    ),
    ("country", "founded"): Wording(
        highest="Which country was founded most recently?", lowest="Which country was founded first?"
    ),
    ("country", "export"): Wording(
        listing="List every country whose main export is {value}.",
        counting="How many countries have {value} as their main export?",
        theme="What is the most common main export among the countries?",
    ),
}


def _countries_records(corpus: Corpus) -> list[Record]:
    countries = {d.id: str(d.metadata["country"]) for d in corpus.documents}
    records = []
    for fact in corpus.facts:
        key = fact.fact_id.rpartition("#")[2]
        if any(key == attribute for _, attribute in COUNTRIES_WORDINGS):
            number = _number(fact.value) if key in ("population", "founded") else None
            records.append(Record("country", countries[fact.doc_id], key, fact.value, fact, number))
    return records


def _number(text: str) -> float | None:
    match = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    return float(match.group().replace(",", "")) if match else None
