"""General pages (no questions): overview, safety, onboarding and how-to pages that distract."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from ragline.corpora.orrin import templates as T
from ragline.corpora.orrin.builder import KnowledgeBase
from ragline.corpora.orrin.formats import money
from ragline.corpora.orrin.world import family_rng, random_day


def add_general_pages(kb: KnowledgeBase) -> None:
    """Company overview, safety procedures, onboarding, how-to pages: realism and near-duplicates.

    The how-to pages for expense claims and major incidents resemble the policies and the incident
    reports without answering any question: similar but irrelevant context (Lecture 3, §6.2).
    """
    rng = family_rng(kb.world.seed, "general")
    taken = {fact.value for fact in kb.facts}  # no filler amount may look like an answer

    def amount(choices: Sequence[int]) -> str:
        return rng.choice([money(c) for c in choices if money(c) not in taken])

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
            effective=random_day(rng, date(2024, 6, 1), 540),
        )
