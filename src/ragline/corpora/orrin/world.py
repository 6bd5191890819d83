"""The names and shared values of one Orrin world, drawn from its seed.

``DEFAULT_SEED`` is the evaluation world (Orrin Grid); any other seed is a training world drawing
from the other half of every name pool (``names``), so no training name occurs in evaluation.
Each document family draws from its own random stream (``family_rng``), so adding to one family
does not move the values of another.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from ragline.corpora.orrin import names as N

DEFAULT_SEED = 329
TRAIN_SEED = 224


def family_rng(seed: int, stream: str) -> random.Random:
    """One independent random stream per document family, so families do not perturb each other."""
    return random.Random(f"orrin:{seed}:{stream}")


def random_day(rng: random.Random, start: date, span_days: int) -> date:
    return start + timedelta(days=rng.randrange(span_days))


@dataclass
class Team:
    """A field team: "Grid Ops East", its lead, its depot and its out-of-hours extension."""

    name: str
    region: str
    lead: str
    depot: str
    ext: str


@dataclass
class World:
    """The names and shared values of one world, drawn once so every family agrees on them."""

    seed: int
    half: str  # "eval" or "train": which half of every name pool
    company: str
    people: dict[str, str]
    places: dict[str, list[str]]
    teams: list[Team]
    ext: dict[str, str]
    values: dict[str, Any]  # fields every template may use

    @classmethod
    def create(cls, seed: int) -> World:
        half = "eval" if seed == DEFAULT_SEED else "train"
        rng = family_rng(seed, "names")
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
            Team(
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
