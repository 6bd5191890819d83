"""Permission questions: HR-only salary and bonus pages, asked by an employee and by HR."""

from __future__ import annotations

from datetime import date

from ragline.corpora.base import Fact
from ragline.corpora.orrin import templates as T
from ragline.corpora.orrin.builder import KnowledgeBase
from ragline.corpora.orrin.formats import fill, money
from ragline.corpora.orrin.templates import F
from ragline.corpora.orrin.world import family_rng, random_day


def add_hr_pages(kb: KnowledgeBase) -> None:
    """Salary bands and bonus guidelines readable by HR only (``acl: ["hr"]``), and a public FAQ.

    Each permission question is asked twice: by an ordinary employee (``user_groups ["all"]``), who
    must get no answer because the only answering page is HR-only, and by an HR user, who gets it.
    Filtering has to happen before retrieval (Lecture 3, §6.1).
    """
    rng = family_rng(kb.world.seed, "hr")
    ranges: dict[str, str] = {}  # fact key -> "$low to $high"
    band_sentences: list[F] = []
    for role, grade, base in T.SALARY_ROLES:
        low = (base + rng.randrange(-4, 5)) * 1000
        high = round(low * rng.choice([1.22, 1.25, 1.28]) / 1000) * 1000
        key = f"band_{grade.lower()}"
        ranges[key] = f"{money(low)} to {money(high)}"
        sentence = fill(T.SALARY_BAND_SENTENCE, {"role": role, "grade": grade, "low": money(low), "high": money(high)})
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
        effective=random_day(rng, date(2025, 3, 1), 200),
    )

    asked: list[tuple[str, Fact]] = []
    for role, grade, _ in rng.sample(T.SALARY_ROLES, 4):
        a_role = f"{'an' if role[0] in 'AEIOU' else 'a'} {role.lower()}"
        asked.append((fill(rng.choice(T.SALARY_QUESTIONS), {"a_role": a_role}), salary[f"band_{grade.lower()}"]))
    for key, phrasings in T.BONUS_QUESTIONS.items():
        asked.append((rng.choice(phrasings), bonus[key]))
    for text, fact in asked:
        low_high = fact.value.split(" to ")
        aliases = [f"{low_high[0]} - {low_high[1]}", f"{low_high[0]}-{low_high[1]}"] if len(low_high) == 2 else []
        kb.ask("permission", text, [fact], aliases=aliases, user_groups=["all"], expected_abstain=True)
        kb.ask("permission", text, [fact], aliases=aliases, user_groups=["all", "hr"])
