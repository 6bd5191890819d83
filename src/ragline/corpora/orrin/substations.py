"""Multi-hop and site paraphrase questions: substation pages, team pages and decommissioned look-alikes."""

from __future__ import annotations

from datetime import date

from ragline.corpora.base import Fact
from ragline.corpora.orrin import names as N
from ragline.corpora.orrin import templates as T
from ragline.corpora.orrin.builder import KnowledgeBase
from ragline.corpora.orrin.formats import fill
from ragline.corpora.orrin.world import Team, family_rng, random_day


def add_substations_and_teams(kb: KnowledgeBase) -> None:
    """Substation pages (site code -> team), team pages (team -> lead, extension, depot).

    Multi-hop questions need both pages: the team page never names its sites (Lecture 3, §5.5).
    Three decommissioned sites whose codes permute an active code's digits (SS-339 / SS-393) and
    name another team are distractors for the first hop. Four "which crew looks after site ..."
    paraphrases are the case where BM25 wins through the code (§3.4).
    """
    world, rng = kb.world, family_rng(kb.world.seed, "substations")
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
            effective=random_day(rng, date(2025, 1, 1), 330),
        )

    low, high = N.SITE_CODE_RANGE[world.half]
    numbers = rng.sample(range(low, high + 1), 18)
    taken = set(numbers)
    sites: list[tuple[str, Team, dict[str, Fact]]] = []
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
            effective=random_day(rng, date(2024, 9, 1), 450),
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
            fill(rng.choice(T.MULTIHOP_QUESTIONS[hop]), {"code": code}),
            [facts["team"], second],
            bridge=team.name,
            distractors=rng.sample(others, 3),
        )
    for code, team, facts in sites[14:18]:
        kb.ask(
            "paraphrase",
            fill(rng.choice(T.PARAPHRASE_SITE_QUESTIONS), {"code": code}),
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
