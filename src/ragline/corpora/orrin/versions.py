"""Version questions: two policies, each in a superseded and a current version."""

from __future__ import annotations

from datetime import date
from typing import Any

from ragline.corpora.orrin import templates as T
from ragline.corpora.orrin.builder import KnowledgeBase
from ragline.corpora.orrin.formats import long_date, quantity
from ragline.corpora.orrin.world import family_rng


def add_versioned_policies(kb: KnowledgeBase) -> None:
    """A remote-work and an on-call policy, each in a superseded and a current version.

    Both versions are equally relevant, so neither reranking nor a relevance grader can choose;
    only metadata (``effective_date``, ``superseded_by``) can (Lecture 3, §5.7 and §6.1). Version
    questions expect the current value; the superseded value is their distractor.
    """
    world, rng = kb.world, family_rng(kb.world.seed, "versions")
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
            {**base, **versions[0], "version": old_version, "effective_long": long_date(old_day), "replaces": ""},
            doc_type="policy",
            department=department,
            version=old_version,
            effective=old_day,
            superseded_by=new_id,
        )
        replaces = f" This version replaces the version of {long_date(old_day)}."
        new = kb.add(
            new_id,
            title,
            blocks,
            {
                **base,
                **versions[1],
                "version": old_version + 1,
                "effective_long": long_date(new_day),
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
    return quantity(unit, choice)
