"""Literal questions: pairs of incident reports whose error codes share their digits."""

from __future__ import annotations

from datetime import date, timedelta

from ragline.corpora.base import Fact
from ragline.corpora.orrin import names as N
from ragline.corpora.orrin import templates as T
from ragline.corpora.orrin.builder import KnowledgeBase
from ragline.corpora.orrin.formats import fill, long_date
from ragline.corpora.orrin.world import family_rng, random_day


def add_incident_reports(kb: KnowledgeBase) -> None:
    """Seven pairs of incident reports whose codes share their digits (E-4471 / E-4417).

    Literal questions ask for the root cause of one code: BM25 nails the code, a dense encoder that
    barely sees it returns the twin report (Lecture 3, §3.3). The root cause sentence does not repeat
    the code, so small fixed-size chunks lose it (§2.3).
    """
    world, rng = kb.world, family_rng(kb.world.seed, "incidents")
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
        first_day = random_day(rng, date(2025, 1, 6), 300)
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
                "date_long": long_date(day),
                "duration": f"{minutes} minutes",
                "impact": impact,
                "severity": rng.choice([1, 2, 2, 3]),
                "t0": _clock(clock[0]),
                "t1": _clock(clock[1]),
                "t2": _clock(clock[2]),
                "t3": _clock(clock[3]),
                "commander": world.people[f"commander_{rng.randrange(4)}"],
                "cause_sentence": f"{article} {span}{fill(tail, {'host': hosts[i]})}".strip(),
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
            fill(rng.choice(T.LITERAL_QUESTIONS["root_cause"]), {"code": code}),
            [facts["root_cause"]],
            aliases=[a for a in dict.fromkeys(aliases) if a.strip() != span],
            distractors=[twin_span],
        )
    for i in (0, 5, 10):
        code, facts, _ = reports[i]
        kb.ask(
            "literal",
            fill(rng.choice(T.LITERAL_QUESTIONS["duration"]), {"code": code}),
            [facts["duration"]],
            distractors=[reports[i ^ 1][1]["duration"].value],
        )


def _clock(minutes: int) -> str:
    minutes %= 24 * 60
    return f"{minutes // 60:02d}:{minutes % 60:02d}"
