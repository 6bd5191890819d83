"""Paraphrase questions: IT help pages in the service's vocabulary, asked in the user's."""

from __future__ import annotations

from datetime import date
from typing import Any

from ragline.corpora.orrin import templates as T
from ragline.corpora.orrin.builder import KnowledgeBase
from ragline.corpora.orrin.formats import quantity
from ragline.corpora.orrin.world import family_rng, random_day


def add_it_help_pages(kb: KnowledgeBase) -> None:
    """IT help pages written in the service's vocabulary, asked about in the user's.

    "How long does the copier keep a document I sent?" shares no content word with the "Badge
    release printing" page that answers it: vocabulary mismatch (Lecture 3, §3.3, §5.6).
    """
    rng = family_rng(kb.world.seed, "it")
    used: set[str] = set()
    for page in T.IT_PAGES:
        values: dict[str, Any] = {}
        for key, (unit, choices) in page["values"].items():
            options = [quantity(unit, c) for c in choices if quantity(unit, c) not in used]
            values[key] = rng.choice(options)
            used.add(values[key])
        facts = kb.add(
            page["id"],
            page["title"],
            [*page["blocks"], *T.IT_PAGE_FOOTER],
            values,
            doc_type="it_help",
            department="Information Technology",
            effective=random_day(rng, date(2024, 10, 1), 420),
        )
        for key, phrasings in page["questions"].items():
            kb.ask("paraphrase", rng.choice(phrasings), [facts[key]])
