"""Documents and questions under construction, assembled into an ``OrrinCorpus``.

A family renders a document from template blocks with ``KnowledgeBase.add`` (which records every
``F`` sentence as a ``Fact`` and checks it survives rendering) and asks questions about those facts
with ``KnowledgeBase.ask``; ``KnowledgeBase.corpus`` numbers the questions per type, in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ragline.corpora.base import Corpus, Fact, Question
from ragline.corpora.orrin import templates as T
from ragline.corpora.orrin.formats import fill, money_aliases
from ragline.corpora.orrin.templates import F
from ragline.corpora.orrin.world import World
from ragline.types import Document


@dataclass(slots=True)
class OrrinCorpus(Corpus):
    """An Orrin world. ``entities`` lists its names by kind (people, teams, sites, ...)."""

    company: str = ""
    world: str = "eval"
    entities: dict[str, list[str]] = field(default_factory=dict)


class DocumentBuilder:
    """Accumulates the Markdown blocks of one document and the facts its sentences carry."""

    def __init__(self, doc_id: str, title: str, metadata: dict[str, Any]) -> None:
        self.doc_id = doc_id
        self.title = title
        self.metadata = metadata
        self.blocks: list[str] = [f"# {title}"]
        self.facts: dict[str, Fact] = {}

    def render(self, blocks: Iterable[T.Block], values: dict[str, Any]) -> None:
        for kind, *items in blocks:
            if kind == "h":
                self.blocks.append(f"## {fill(items[0], values)}")
            elif kind == "p":
                self.blocks.append(" ".join(self._sentence(item, values) for item in items))
            elif kind == "ul":
                self.blocks.append("\n".join(f"- {self._sentence(item, values)}" for item in items))
            elif kind == "quote":
                self.blocks.append("\n".join(f"> {self._sentence(item, values)}" for item in items))
            elif kind == "table":
                header, rows = items[0], values[items[1]]
                lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
                self.blocks.append("\n".join(lines))
            elif kind == "raw":
                self.blocks.append(fill(items[0], values))
            else:
                raise ValueError(f"unknown block kind {kind!r} in document {self.doc_id}")

    def _sentence(self, item: object, values: dict[str, Any]) -> str:
        if not isinstance(item, F):
            return fill(str(item), values)
        sentence = fill(item.template, values)
        value = str(values[item.value])
        if value not in sentence:
            raise ValueError(f"{self.doc_id}: fact {item.key!r} does not contain its value {value!r}")
        self.facts[item.key] = Fact(self.doc_id, sentence, f"{self.doc_id}#{item.key}", value)
        return sentence

    def build(self) -> Document:
        text = "\n\n".join(self.blocks) + "\n"
        for fact in self.facts.values():
            if fact.sentence not in text:
                raise ValueError(f"{self.doc_id}: fact sentence lost in rendering: {fact.sentence!r}")
        return Document(self.doc_id, text, self.title, self.metadata, source=f"{self.doc_id}.md")


@dataclass
class QuestionDraft:
    """A question before its id is assigned (ids are numbered per type, in order of creation)."""

    qtype: str
    text: str
    answer: str
    facts: list[Fact]
    aliases: list[str]
    user_groups: list[str]
    expected_abstain: bool
    bridge: str | None
    distractors: list[str]


class KnowledgeBase:
    """Collects documents, facts and question drafts, then assembles the ``OrrinCorpus``."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.documents: list[Document] = []
        self.facts: list[Fact] = []
        self.drafts: list[QuestionDraft] = []

    def add(
        self,
        doc_id: str,
        title: str,
        blocks: Iterable[T.Block],
        values: dict[str, Any],
        *,
        doc_type: str,
        department: str,
        effective: date,
        version: int = 1,
        acl: Sequence[str] = ("all",),
        **extra: Any,
    ) -> dict[str, Fact]:
        """Render and store a document; return its facts by key."""
        merged = {**self.world.values, **values}
        metadata: dict[str, Any] = {
            "doc_type": doc_type,
            "acl": list(acl),
            "version": version,
            "effective_date": effective.isoformat(),
            "department": department,
            **{key: value for key, value in extra.items() if value is not None},
        }
        builder = DocumentBuilder(doc_id, fill(title, merged), metadata)
        builder.render(blocks, merged)
        self.documents.append(builder.build())
        self.facts.extend(builder.facts.values())
        return builder.facts

    def ask(
        self,
        qtype: str,
        text: str,
        facts: Sequence[Fact],
        *,
        answer: str | None = None,
        aliases: Sequence[str] = (),
        user_groups: Sequence[str] = ("all",),
        expected_abstain: bool = False,
        bridge: str | None = None,
        distractors: Iterable[str] = (),
    ) -> None:
        answer = facts[-1].value if answer is None else answer
        aliases = [*aliases, *money_aliases(answer)]
        self.drafts.append(
            QuestionDraft(
                qtype,
                text,
                answer,
                list(facts),
                aliases,
                list(user_groups),
                expected_abstain,
                bridge,
                [d for d in dict.fromkeys(distractors) if d != answer],
            )
        )

    def corpus(self) -> OrrinCorpus:
        counters: dict[str, int] = {}
        questions = []
        for draft in self.drafts:
            counters[draft.qtype] = counters.get(draft.qtype, 0) + 1
            doc_ids = list(dict.fromkeys(fact.doc_id for fact in draft.facts))
            questions.append(
                Question(
                    id=f"{draft.qtype}-{counters[draft.qtype]:03d}",
                    text=draft.text,
                    type=draft.qtype,
                    answer=draft.answer,
                    aliases=draft.aliases,
                    gold_doc_ids=[] if draft.expected_abstain else doc_ids,
                    evidence=[(fact.doc_id, fact.sentence) for fact in draft.facts],
                    user_groups=draft.user_groups,
                    expected_abstain=draft.expected_abstain,
                    bridge=draft.bridge,
                    distractor_answers=draft.distractors,
                    forbidden_doc_ids=doc_ids if draft.expected_abstain else [],
                )
            )
        world = self.world
        entities = {
            "company": [world.company],
            "people": sorted(world.people.values()),
            "teams": sorted(team.name for team in world.teams),
            "places": sorted(p for group in world.places.values() for p in group),
            "sites": sorted(d.metadata["site_code"] for d in self.documents if "site_code" in d.metadata),
            "error_codes": sorted(d.metadata["error_code"] for d in self.documents if "error_code" in d.metadata),
        }
        return OrrinCorpus(
            name="orrin" if world.half == "eval" else f"orrin-train-{world.seed}",
            seed=world.seed,
            documents=self.documents,
            questions=questions,
            facts=self.facts,
            company=world.company,
            world=world.half,
            entities=entities,
        )
