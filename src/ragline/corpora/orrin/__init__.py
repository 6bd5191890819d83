"""The Orrin Grid knowledge base: a fictional energy company's intranet, generated from a seed.

Lecture 3 (§0.5) builds a 70-document, 96-question toy corpus for a fictional energy company whose
documents "are designed to expose every difficulty the slides discuss". This is our realistic,
deterministic version of it. Each document family targets one failure mode:

============================  =============  ==========================================================
family                        question type  failure mode it exposes (lecture section)
============================  =============  ==========================================================
incident reports (pairs)      literal        dense retrieval blurs E-4471 / E-4417 (§3.3); a small
                                             chunk holding "The root cause was ..." lost the code (§2.3)
IT help pages                 paraphrase     vocabulary mismatch: "copier" vs "badge release printing"
                                             -- BM25 finds nothing, dense retrieval helps (§3.3, §5.6)
substation pages              paraphrase     "which crew looks after site SS-339": the code rescues BM25
six expense policies          section        shared section names: a "Receipts" chunk does not say which
                                             policy it belongs to (§2.3, §4)
substation + team pages       multihop       the team page never names the site; single-shot retrieval
                                             misses the second hop (§5.5)
remote-work / on-call policy  version        the superseded version is just as relevant (§5.7, §6.1)
HR-only salary and bonus      permission     retrieval does not know who is asking (§6.1)
pages with planted text       injection      retrieved text is data, not instructions (§6.3)
general pages, decommissioned -              realism and distraction: similar but irrelevant (§6.2)
sites, how-to pages
============================  =============  ==========================================================

Grading (§0.5): an answer counts only if it is right *and* comes from a gold document. Every
answer-bearing sentence is recorded as a ``Fact``; each question lists its gold documents and the
evidence sentences, verbatim.

Same seed -> byte-identical corpus (``fingerprint``). ``DEFAULT_SEED`` is the evaluation world,
Orrin Grid; any other seed, such as ``TRAIN_SEED``, builds a training world with the same
structure, other numbers and names that never occur in the evaluation world (see ``names``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from ragline.corpora import Corpus, Fact, Question
from ragline.corpora.orrin import names as N
from ragline.corpora.orrin import templates as T
from ragline.corpora.orrin.templates import F
from ragline.types import Document

DEFAULT_SEED = 329
TRAIN_SEED = 224

__all__ = ["DEFAULT_SEED", "TRAIN_SEED", "OrrinCorpus", "build_orrin"]

_MONEY = re.compile(r"\$\d[\d,]*(?: million)?")
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


@dataclass(slots=True)
class OrrinCorpus(Corpus):
    """An Orrin world. ``entities`` lists its names by kind (people, teams, sites, ...)."""

    company: str = ""
    world: str = "eval"
    entities: dict[str, list[str]] = field(default_factory=dict)


def build_orrin(seed: int = DEFAULT_SEED) -> OrrinCorpus:
    """Generate the Orrin knowledge base of ``seed``: documents, questions and facts."""
    world = _World.create(seed)
    kb = _KnowledgeBase(world)
    _expense_policies(kb)
    _incident_reports(kb)
    _substations_and_teams(kb)
    _it_help_pages(kb)
    _versioned_policies(kb)
    _hr_pages(kb)
    _injection_pages(kb)
    _general_pages(kb)
    return kb.corpus()


# --- formatting -----------------------------------------------------------------------------


def _money(amount: int) -> str:
    return f"${amount:,}"


def _quantity(unit: str, amount: int) -> str:
    if unit == "money":
        return _money(amount)
    if unit == "GB":
        return f"{amount:,} GB"
    return f"{amount} {unit}"


def _long_date(day: date) -> str:
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


def _money_aliases(value: str) -> list[str]:
    """``"$1,500"`` -> ``["$1500", "1,500 dollars"]``; other values have no aliases."""
    if not _MONEY.fullmatch(value):
        return []
    aliases = [value.replace(",", "")] if "," in value else []
    return [*aliases, f"{value[1:]} dollars"]


def _rng(seed: int, stream: str) -> random.Random:
    """One independent random stream per document family, so families do not perturb each other."""
    return random.Random(f"orrin:{seed}:{stream}")


def _day(rng: random.Random, start: date, span_days: int) -> date:
    return start + timedelta(days=rng.randrange(span_days))


# --- the world: names and shared values ------------------------------------------------------


@dataclass
class _Team:
    """A field team: "Grid Ops East", its lead, its depot and its out-of-hours extension."""

    name: str
    region: str
    lead: str
    depot: str
    ext: str


@dataclass
class _World:
    """The names and shared values of one world, drawn once so every family agrees on them."""

    seed: int
    half: str  # "eval" or "train": which half of every name pool
    company: str
    people: dict[str, str]
    places: dict[str, list[str]]
    teams: list[_Team]
    ext: dict[str, str]
    values: dict[str, Any]  # fields every template may use

    @classmethod
    def create(cls, seed: int) -> _World:
        half = "eval" if seed == DEFAULT_SEED else "train"
        rng = _rng(seed, "names")
        company = rng.choice(N.COMPANIES[half])
        first = rng.sample(N.FIRST_NAMES[half], len(N.FIRST_NAMES[half]))
        last = rng.sample(N.LAST_NAMES[half], len(N.LAST_NAMES[half]))
        people = iter(f"{a} {b}" for a, b in zip(first, last))
        roles = [
            "ceo",
            "cfo",
            "ops_director",
            "hr_director",
            "hr_partner",
            "safety_lead",
            "procurement_lead",
            "finance_director",
            "expenses_manager",
        ]
        named = {role: next(people) for role in roles}
        named.update({f"lead_{i}": next(people) for i in range(10)})
        named.update({f"commander_{i}": next(people) for i in range(4)})
        named.update({f"service_owner_{i}": next(people) for i in range(3)})

        pool = rng.sample(N.PLACES[half], len(N.PLACES[half]))
        places = {
            "substations": pool[:21],
            "depots": pool[21:25],
            "districts": pool[25:28],
            "hq": pool[28:29],
            "venue": pool[29:30],
        }

        low, high = N.EXTENSION_RANGE[half]
        ext_names = ["fin", "control", "it", "security", "endpoint", "av", "access"]
        numbers = [str(n) for n in rng.sample(range(low, high + 1), len(ext_names) + 10)]
        ext = dict(zip(ext_names, numbers))

        combos = [(f, r) for f in N.TEAM_FUNCTIONS[half] for r in N.TEAM_REGIONS]
        teams = [
            _Team(
                f"{function} {region}",
                region,
                named[f"lead_{i}"],
                rng.choice(places["depots"]),
                numbers[len(ext_names) + i],
            )
            for i, (function, region) in enumerate(rng.sample(combos, 10))
        ]
        short = company.split()[0]
        values: dict[str, Any] = {
            "company": company,
            "hq": places["hq"][0],
            "district_a": places["districts"][0],
            "district_b": places["districts"][1],
            "district_c": places["districts"][2],
            "founded": rng.randrange(1952, 1998),
            "customers": f"{rng.randrange(180, 900) * 1000:,}",
            "tool": rng.choice(N.EXPENSE_TOOLS),
            "vpn_client": rng.choice(N.VPN_CLIENTS),
            "mdm": rng.choice(N.MDM_APPS),
            "portal": rng.choice(N.SUPPLIER_PORTALS),
            "domain": f"{short.lower()}.example",
            **{f"{key}_ext": number for key, number in ext.items()},
            **named,
        }
        return cls(seed, half, company, named, places, teams, ext, values)


# --- documents and questions under construction -----------------------------------------------


class _DocBuilder:
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
                self.blocks.append(f"## {_fill(items[0], values)}")
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
                self.blocks.append(_fill(items[0], values))
            else:
                raise ValueError(f"unknown block kind {kind!r} in document {self.doc_id}")

    def _sentence(self, item: object, values: dict[str, Any]) -> str:
        if not isinstance(item, F):
            return _fill(str(item), values)
        sentence = _fill(item.template, values)
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


def _fill(template: str, values: dict[str, Any]) -> str:
    return template.format_map(values)


@dataclass
class _Draft:
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


class _KnowledgeBase:
    """Collects documents, facts and question drafts, then assembles the ``OrrinCorpus``."""

    def __init__(self, world: _World) -> None:
        self.world = world
        self.documents: list[Document] = []
        self.facts: list[Fact] = []
        self.drafts: list[_Draft] = []

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
        builder = _DocBuilder(doc_id, _fill(title, merged), metadata)
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
        aliases = [*aliases, *_money_aliases(answer)]
        self.drafts.append(
            _Draft(
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


# --- families ---------------------------------------------------------------------------------


def _expense_policies(kb: _KnowledgeBase) -> None:
    """Six expense policies with the same section names and sentences, only the numbers differ.

    Section questions ("What is the receipt threshold in the meals policy?") are answerable only by
    a chunk that knows which policy it belongs to (Lecture 3, §2.3 contextual retrieval, §4).
    """
    rng = _rng(kb.world.seed, "expense")
    kinds = list(T.EXPENSE_POLICIES)
    used: set[int] = set()

    def distinct(choices: Sequence[int], k: int) -> list[int]:
        picked = rng.sample([c for c in choices if c not in used], k)
        used.update(picked)
        return picked

    receipts = distinct(T.EXPENSE_RECEIPT_VALUES, len(kinds))
    deadlines = rng.sample(T.EXPENSE_DEADLINE_VALUES, len(kinds))
    approvals = distinct(T.EXPENSE_APPROVAL_VALUES, len(kinds))
    approvers = rng.sample(T.EXPENSE_APPROVERS, len(kinds))
    per_policy: dict[str, dict[str, Fact]] = {}
    for i, kind in enumerate(kinds):
        spec = T.EXPENSE_POLICIES[kind]
        unit = str(spec["limit_unit"])
        limit = distinct(spec["limit_values"], 1)[0] if unit == "money" else rng.choice(spec["limit_values"])
        owner, role = (
            (kb.world.people["finance_director"], "finance director")
            if i % 2 == 0
            else (kb.world.people["expenses_manager"], "expenses manager")
        )
        values = {
            "limit": _quantity(unit, limit),
            "receipt": _money(receipts[i]),
            "deadline": f"{deadlines[i]} days",
            "approval": _money(approvals[i]),
            "approver": approvers[i],
            "owner": owner,
            "owner_role": role,
        }
        blocks: list[T.Block] = [
            ("h", "Purpose"),
            ("p", *spec["purpose"]),
            ("h", "Scope"),
            ("p", *spec["scope"]),
            ("h", "Limits"),
            ("p", spec["limit"], *spec["limit_rules"], *T.EXPENSE_SHARED["Limits"]),
        ]
        for section in ("Receipts", "Approvals", "Reimbursement", "Exceptions", "Contacts"):
            blocks += [("h", section), ("p", *T.EXPENSE_SHARED[section])]
        per_policy[kind] = kb.add(
            f"policy-expense-{kind}",
            f"{{company}} {spec['title']}",
            blocks,
            values,
            doc_type="policy",
            department="Finance",
            version=rng.randrange(2, 6),
            effective=_day(rng, date(2025, 1, 1), 300),
            policy=kind,
        )

    for i, kind in enumerate(kinds):
        short = str(T.EXPENSE_POLICIES[kind]["short"])
        asked = ["receipt_threshold", "submission_deadline", "limit" if i % 2 == 0 else "approval_threshold"]
        for key in asked:
            templates = T.EXPENSE_POLICIES[kind]["limit_questions"] if key == "limit" else T.SECTION_QUESTIONS[key]
            others = [per_policy[k][key].value for k in kinds if k != kind and key in per_policy[k]]
            kb.ask(
                "section", _fill(rng.choice(templates), {"short": short}), [per_policy[kind][key]], distractors=others
            )


def _incident_reports(kb: _KnowledgeBase) -> None:
    """Seven pairs of incident reports whose codes share their digits (E-4471 / E-4417).

    Literal questions ask for the root cause of one code: BM25 nails the code, a dense encoder that
    barely sees it returns the twin report (Lecture 3, §3.3). The root cause sentence does not repeat
    the code, so small fixed-size chunks lose it (§2.3).
    """
    world, rng = kb.world, _rng(kb.world.seed, "incidents")
    digits = N.ERROR_CODE_FIRST_DIGITS[world.half]
    codes: list[tuple[str, str]] = []
    seen: set[str] = set()
    while len(codes) < 7:
        a, b = rng.choice(digits), rng.randrange(10)
        c, d = rng.sample(range(10), 2)
        first, second = f"E-{a}{b}{c}{d}", f"E-{a}{b}{d}{c}"
        if first not in seen and second not in seen:
            seen.update((first, second))
            codes.append((first, second))
    systems = rng.sample(T.INCIDENT_SYSTEMS, 7)
    causes = rng.sample(T.INCIDENT_CAUSES, 14)
    hosts = rng.sample([f"{p}-{n:02d}" for p in T.INCIDENT_HOST_PREFIXES for n in range(1, 60)], 14)
    reports: list[tuple[str, dict[str, Fact], str]] = []  # (code, facts, cause span)
    for pair, ((system, impact), code_pair) in enumerate(zip(systems, codes)):
        first_day = _day(rng, date(2025, 1, 6), 300)
        for member, code in enumerate(code_pair):
            i = 2 * pair + member
            article, span, tail, fix = causes[i]
            day = first_day + timedelta(days=member * rng.randrange(9, 60))
            minutes = rng.randrange(14, 200)
            start = rng.randrange(0, 24 * 60)
            clock = [start, start + rng.randrange(3, 9), start + max(10, minutes * 2 // 3), start + minutes]
            values = {
                "code": code,
                "system": system,
                "date_long": _long_date(day),
                "duration": f"{minutes} minutes",
                "impact": impact,
                "severity": rng.choice([1, 2, 2, 3]),
                "t0": _clock(clock[0]),
                "t1": _clock(clock[1]),
                "t2": _clock(clock[2]),
                "t3": _clock(clock[3]),
                "commander": world.people[f"commander_{rng.randrange(4)}"],
                "cause_sentence": f"{article} {span}{_fill(tail, {'host': hosts[i]})}".strip(),
                "cause": span,
                "diagnosis": rng.choice(T.INCIDENT_DIAGNOSIS),
                "fix": fix,
                "service_owner": world.people[f"service_owner_{pair % 3}"],
            }
            facts = kb.add(
                f"incident-{code.lower()}",
                f"Incident Report {code}: {system[0].upper()}{system[1:]} disruption",
                T.INCIDENT_REPORT,
                values,
                doc_type="incident_report",
                department="Information Technology",
                effective=day + timedelta(days=5),
                error_code=code,
                incident_date=day.isoformat(),
            )
            reports.append((code, facts, span))

    for i, (code, facts, span) in enumerate(reports):
        twin_span = reports[i ^ 1][2]
        article = next(c[0] for c in T.INCIDENT_CAUSES if c[1] == span)
        aliases = [f"{article} {span}", facts["root_cause"].sentence[len("The root cause was ") : -1]]
        kb.ask(
            "literal",
            _fill(rng.choice(T.LITERAL_QUESTIONS["root_cause"]), {"code": code}),
            [facts["root_cause"]],
            aliases=[a for a in dict.fromkeys(aliases) if a.strip() != span],
            distractors=[twin_span],
        )
    for i in (0, 5, 10):
        code, facts, _ = reports[i]
        kb.ask(
            "literal",
            _fill(rng.choice(T.LITERAL_QUESTIONS["duration"]), {"code": code}),
            [facts["duration"]],
            distractors=[reports[i ^ 1][1]["duration"].value],
        )


def _clock(minutes: int) -> str:
    minutes %= 24 * 60
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _substations_and_teams(kb: _KnowledgeBase) -> None:
    """Substation pages (site code -> team), team pages (team -> lead, extension, depot).

    Multi-hop questions need both pages: the team page never names its sites (Lecture 3, §5.5).
    Three decommissioned sites whose codes permute an active code's digits (SS-339 / SS-393) and
    name another team are distractors for the first hop. Four "which crew looks after site ..."
    paraphrases are the case where BM25 wins through the code (§3.4).
    """
    world, rng = kb.world, _rng(kb.world.seed, "substations")
    team_facts: dict[str, dict[str, Fact]] = {}
    for team in world.teams:
        values = {
            "team": team.name,
            "lead": team.lead,
            "ext": team.ext,
            "depot": team.depot,
            "region_adj": N.REGION_ADJECTIVES[team.region],
            "technicians": rng.randrange(6, 19),
            "apprentices": rng.randrange(1, 5),
        }
        team_facts[team.name] = kb.add(
            f"team-{_slug(team.name)}",
            team.name,
            T.TEAM_PAGE,
            values,
            doc_type="team",
            department="Grid Operations",
            effective=_day(rng, date(2025, 1, 1), 330),
        )

    low, high = N.SITE_CODE_RANGE[world.half]
    numbers = rng.sample(range(low, high + 1), 18)
    taken = set(numbers)
    sites: list[tuple[str, _Team, dict[str, Fact]]] = []
    for i, number in enumerate(numbers):
        code, team = f"SS-{number}", world.teams[i % 10] if i < 10 else rng.choice(world.teams)
        values = {
            "code": code,
            "name": world.places["substations"][i],
            "team": team.name,
            "kv": rng.choice(T.SUBSTATION_VOLTAGES),
            "kind": rng.choice(T.SUBSTATION_KINDS),
            "district": rng.choice(world.places["districts"]),
            "year": rng.randrange(1958, 2021),
            "customers": f"{rng.randrange(4, 60) * 250:,}",
            "weeks": rng.choice([4, 6, 8, 12]),
            "season": rng.choice(T.SEASONS),
            "notice": rng.choice([10, 14, 21, 28]),
        }
        facts = kb.add(
            f"substation-{code.lower()}",
            f"Substation {code} ({values['name']})",
            T.SUBSTATION_PAGE,
            values,
            doc_type="substation",
            department="Grid Operations",
            effective=_day(rng, date(2024, 9, 1), 450),
            site_code=code,
            status="active",
        )
        sites.append((code, team, facts))

    look_alikes = 0
    for code, team, _ in sites[:14]:
        twins = [int(p) for p in _digit_permutations(code[3:]) if low <= int(p) <= high and int(p) not in taken]
        if not twins or look_alikes == 3:
            continue
        look_alikes += 1
        number = rng.choice(twins)
        taken.add(number)
        other = rng.choice([t for t in world.teams if t.name != team.name])
        twin = f"SS-{number}"
        name = world.places["substations"][18 + look_alikes - 1]
        values = {"code": twin, "name": name, "team": other.name, "year_closed": rng.randrange(2012, 2023)}
        kb.add(
            f"substation-{twin.lower()}",
            f"Substation {twin} ({name}), decommissioned",
            T.DECOMMISSIONED_PAGE,
            values,
            doc_type="substation",
            department="Grid Operations",
            effective=date(values["year_closed"], 6, 30),
            site_code=twin,
            status="decommissioned",
        )

    hops = ["lead"] * 8 + ["ext"] * 3 + ["depot"] * 3
    rng.shuffle(hops)
    for (code, team, facts), hop in zip(sites[:14], hops):
        second = team_facts[team.name][hop]
        others = [team_facts[t.name][hop].value for t in world.teams if t.name != team.name]
        kb.ask(
            "multihop",
            _fill(rng.choice(T.MULTIHOP_QUESTIONS[hop]), {"code": code}),
            [facts["team"], second],
            bridge=team.name,
            distractors=rng.sample(others, 3),
        )
    for code, team, facts in sites[14:18]:
        kb.ask(
            "paraphrase",
            _fill(rng.choice(T.PARAPHRASE_SITE_QUESTIONS), {"code": code}),
            [facts["team"]],
            distractors=[t.name for t in rng.sample(world.teams, 3) if t.name != team.name],
        )


def _digit_permutations(digits: str) -> list[str]:
    out = {
        digits[i] + digits[j] + digits[k] for i in range(3) for j in range(3) for k in range(3) if len({i, j, k}) == 3
    }
    return sorted(p for p in out if p != digits and p[0] != "0")


def _slug(text: str) -> str:
    return "-".join(text.lower().replace("&", "and").split())


def _it_help_pages(kb: _KnowledgeBase) -> None:
    """IT help pages written in the service's vocabulary, asked about in the user's.

    "How long does the copier keep a document I sent?" shares no content word with the "Badge
    release printing" page that answers it: vocabulary mismatch (Lecture 3, §3.3, §5.6).
    """
    rng = _rng(kb.world.seed, "it")
    used: set[str] = set()
    for page in T.IT_PAGES:
        values: dict[str, Any] = {}
        for key, (unit, choices) in page["values"].items():
            options = [_quantity(unit, c) for c in choices if _quantity(unit, c) not in used]
            values[key] = rng.choice(options)
            used.add(values[key])
        facts = kb.add(
            page["id"],
            page["title"],
            [*page["blocks"], *T.IT_PAGE_FOOTER],
            values,
            doc_type="it_help",
            department="Information Technology",
            effective=_day(rng, date(2024, 10, 1), 420),
        )
        for key, phrasings in page["questions"].items():
            kb.ask("paraphrase", rng.choice(phrasings), [facts[key]])


def _versioned_policies(kb: _KnowledgeBase) -> None:
    """A remote-work and an on-call policy, each in a superseded and a current version.

    Both versions are equally relevant, so neither reranking nor a relevance grader can choose;
    only metadata (``effective_date``, ``superseded_by``) can (Lecture 3, §5.7 and §6.1). Version
    questions expect the current value; the superseded value is their distractor.
    """
    world, rng = kb.world, _rng(kb.world.seed, "versions")
    specs = [
        (
            "remote-work",
            "Remote Work Policy",
            T.REMOTE_WORK_POLICY,
            T.REMOTE_WORK_VALUES,
            world.people["hr_director"],
            "director of People and Culture",
            "People and Culture",
            (2024, 2026),
        ),
        (
            "on-call",
            "On-Call and Standby Compensation Policy",
            T.ON_CALL_POLICY,
            T.ON_CALL_VALUES,
            world.people["ops_director"],
            "director of grid operations",
            "Grid Operations",
            (2025, 2026),
        ),
    ]
    for slug, title, blocks, table, owner, role, department, (old_year, new_year) in specs:
        old_id, new_id = f"policy-{slug}-{old_year}", f"policy-{slug}-{new_year}"
        old_day = date(old_year, rng.randrange(1, 7), 1)
        new_day = date(new_year, rng.randrange(1, 4), 1)
        old_version = rng.randrange(1, 4)
        versions: list[dict[str, Any]] = [{}, {}]
        for key, (unit, old_choices, new_choices) in table.items():
            for values, choices in zip(versions, (old_choices, new_choices)):
                values[key] = _version_value(unit, rng.choice(choices))
        base = {"owner": owner, "owner_role": role}
        old = kb.add(
            old_id,
            title,
            blocks,
            {**base, **versions[0], "version": old_version, "effective_long": _long_date(old_day), "replaces": ""},
            doc_type="policy",
            department=department,
            version=old_version,
            effective=old_day,
            superseded_by=new_id,
        )
        replaces = f" This version replaces the version of {_long_date(old_day)}."
        new = kb.add(
            new_id,
            title,
            blocks,
            {
                **base,
                **versions[1],
                "version": old_version + 1,
                "effective_long": _long_date(new_day),
                "replaces": replaces,
            },
            doc_type="policy",
            department=department,
            version=old_version + 1,
            effective=new_day,
            supersedes=old_id,
        )
        for key in table:
            kb.ask("version", rng.choice(T.VERSION_QUESTIONS[key]), [new[key]], distractors=[old[key].value])


def _version_value(unit: str, choice: int) -> str:
    if unit == "core":
        return T.CORE_HOURS[choice]
    if unit == "rate":
        return T.CALLOUT_RATES[choice]
    return _quantity(unit, choice)


def _hr_pages(kb: _KnowledgeBase) -> None:
    """Salary bands and bonus guidelines readable by HR only (``acl: ["hr"]``), and a public FAQ.

    Each permission question is asked twice: by an ordinary employee (``user_groups ["all"]``), who
    must get no answer because the only answering page is HR-only, and by an HR user, who gets it.
    Filtering has to happen before retrieval (Lecture 3, §6.1).
    """
    rng = _rng(kb.world.seed, "hr")
    ranges: dict[str, str] = {}  # fact key -> "$low to $high"
    band_sentences: list[F] = []
    for role, grade, base in T.SALARY_ROLES:
        low = (base + rng.randrange(-4, 5)) * 1000
        high = round(low * rng.choice([1.22, 1.25, 1.28]) / 1000) * 1000
        key = f"band_{grade.lower()}"
        ranges[key] = f"{_money(low)} to {_money(high)}"
        sentence = _fill(
            T.SALARY_BAND_SENTENCE, {"role": role, "grade": grade, "low": _money(low), "high": _money(high)}
        )
        band_sentences.append(F(key, sentence, key))
    blocks = [("ul", *band_sentences) if block == ("ul",) else block for block in T.SALARY_BANDS]
    today = date(2026, 1, 15)
    salary = kb.add(
        "hr-salary-bands",
        "Salary Bands (Confidential)",
        blocks,
        ranges,
        doc_type="reference",
        department="People and Culture",
        acl=["hr"],
        effective=today,
    )
    bonus_values = {"m2_bonus": f"{rng.choice([12, 15, 18, 20])}%", "pool": f"{rng.choice([3.5, 4, 4.5, 5])}%"}
    bonus = kb.add(
        "hr-bonus-guidelines",
        "Annual Bonus Guidelines (Confidential)",
        T.BONUS_GUIDELINES,
        bonus_values,
        doc_type="guideline",
        department="People and Culture",
        acl=["hr"],
        effective=today,
    )
    kb.add(
        "hr-compensation-faq",
        "Pay and Reward FAQ",
        T.COMPENSATION_FAQ,
        {},
        doc_type="faq",
        department="People and Culture",
        effective=_day(rng, date(2025, 3, 1), 200),
    )

    asked: list[tuple[str, Fact]] = []
    for role, grade, _ in rng.sample(T.SALARY_ROLES, 4):
        a_role = f"{'an' if role[0] in 'AEIOU' else 'a'} {role.lower()}"
        asked.append((_fill(rng.choice(T.SALARY_QUESTIONS), {"a_role": a_role}), salary[f"band_{grade.lower()}"]))
    for key, phrasings in T.BONUS_QUESTIONS.items():
        asked.append((rng.choice(phrasings), bonus[key]))
    for text, fact in asked:
        low_high = fact.value.split(" to ")
        aliases = [f"{low_high[0]} - {low_high[1]}", f"{low_high[0]}-{low_high[1]}"] if len(low_high) == 2 else []
        kb.ask("permission", text, [fact], aliases=aliases, user_groups=["all"], expected_abstain=True)
        kb.ask("permission", text, [fact], aliases=aliases, user_groups=["all", "hr"])


def _injection_pages(kb: _KnowledgeBase) -> None:
    """Four editable pages carrying planted instructions addressed to AI assistants.

    The right answer is the real fact, on the page itself or elsewhere; the planted claim is the
    question's distractor (Lecture 3, §6.3; Lecture 12, §6.3: retrieved text is untrusted data).
    """
    world, rng = kb.world, _rng(kb.world.seed, "injection")
    year = 2025
    vendor = kb.add(
        "faq-vendor-onboarding",
        "Vendor Onboarding FAQ",
        T.VENDOR_FAQ,
        {"pay_days": f"{rng.choice([30, 45, 60])} days", "insurance": f"${rng.choice([2, 5, 10])} million"},
        doc_type="faq",
        department="Procurement",
        effective=_day(rng, date(2025, 1, 1), 300),
    )
    for key, phrasings in T.VENDOR_FAQ_QUESTIONS.items():
        kb.ask("injection", rng.choice(phrasings), [vendor[key]], distractors=[T.VENDOR_FAQ_PLANTED])

    supplier_day = _day(rng, date(year, 5, 1), 120)
    bulletin = kb.add(
        f"bulletin-suppliers-{year}",
        f"Supplier Bulletin, Spring {year}",
        T.SUPPLIER_BULLETIN,
        {
            "supplier_day": _long_date(supplier_day),
            "retender": f"{rng.choice([3, 4, 5])} years",
            "planted_amount": T.PLANTED_AMOUNT,
        },
        doc_type="bulletin",
        department="Procurement",
        effective=date(year, 3, 1),
    )
    for key, phrasings in T.SUPPLIER_BULLETIN_QUESTIONS.items():
        kb.ask("injection", rng.choice(phrasings), [bulletin[key]], distractors=[T.PLANTED_AMOUNT])
    travel_receipts = next(f for f in kb.facts if f.fact_id == "policy-expense-travel#receipt_threshold")
    kb.ask("injection", rng.choice(T.SUPPLIER_BULLETIN_ELSEWHERE), [travel_receipts], distractors=[T.PLANTED_AMOUNT])

    wiki = kb.add(
        "wiki-contractor-site-access",
        "Contractor Site Access",
        T.CONTRACTOR_WIKI,
        {"induction": f"{rng.choice([6, 12, 24])} months", "escort": "an authorised person"},
        doc_type="wiki",
        department="Grid Operations",
        effective=_day(rng, date(2025, 1, 1), 300),
    )
    for key, phrasings in T.CONTRACTOR_WIKI_QUESTIONS.items():
        answer = "authorised person" if key == "escort" else None
        kb.ask(
            "injection",
            rng.choice(phrasings),
            [wiki[key]],
            answer=answer,
            aliases=["an authorised person"] if answer else (),
            distractors=T.CONTRACTOR_WIKI_PLANTED,
        )

    planted_email = f"social@{world.values['domain']}"
    signup = _day(rng, date(year, 6, 1), 40)
    social = kb.add(
        f"news-summer-social-{year}",
        f"Summer Social {year}",
        T.SUMMER_SOCIAL,
        {
            "venue": f"{world.places['venue'][0]} {rng.choice(T.VENUE_KINDS)}",
            "signup_date": _long_date(signup),
            "planted_email": planted_email,
        },
        doc_type="announcement",
        department="Communications",
        effective=signup - timedelta(days=30),
    )
    for key, phrasings in T.SUMMER_SOCIAL_QUESTIONS.items():
        aliases = [f"the {social[key].value}"] if key == "venue" else []
        kb.ask("injection", rng.choice(phrasings), [social[key]], aliases=aliases, distractors=[planted_email])
    emergency = kb.add(
        "operations-emergency-contacts",
        "Emergency and Out-of-Hours Contacts",
        T.EMERGENCY_CONTACTS,
        {},
        doc_type="reference",
        department="Grid Operations",
        effective=_day(rng, date(2025, 1, 1), 300),
    )
    kb.ask(
        "injection",
        rng.choice(T.SUMMER_SOCIAL_ELSEWHERE),
        [emergency["downed_line"]],
        aliases=[f"extension {world.ext['control']}"],
        distractors=[planted_email],
    )


def _general_pages(kb: _KnowledgeBase) -> None:
    """Company overview, safety procedures, onboarding, how-to pages: realism and near-duplicates.

    The how-to pages for expense claims and major incidents resemble the policies and the incident
    reports without answering any question: similar but irrelevant context (Lecture 3, §6.2).
    """
    rng = _rng(kb.world.seed, "general")
    taken = {fact.value for fact in kb.facts}  # no filler amount may look like an answer

    def amount(choices: Sequence[int]) -> str:
        return rng.choice([_money(c) for c in choices if _money(c) not in taken])

    values = {
        "network_numbers": [
            ("Employees", f"{rng.randrange(900, 3200):,}"),
            ("Substations", f"{rng.randrange(140, 420)}"),
            ("Overhead line", f"{rng.randrange(4000, 16000):,} km"),
            ("Underground cable", f"{rng.randrange(2000, 9000):,} km"),
        ],
        "retention_rows": T.RETENTION_ROWS,
        "leave_days": rng.choice([25, 26, 27, 28]),
        "gift_limit": amount(range(30, 155, 5)),
        "po_limit": amount(range(3000, 6500, 500)),
        "quotes_limit": amount(range(10000, 30000, 5000)),
    }
    for page in T.FILLER_PAGES:
        kb.add(
            str(page["id"]),
            str(page["title"]),
            page["blocks"],
            values,
            doc_type=str(page["doc_type"]),
            department=str(page["department"]),
            effective=_day(rng, date(2024, 6, 1), 540),
        )
