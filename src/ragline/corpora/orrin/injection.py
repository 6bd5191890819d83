"""Injection questions: editable pages carrying planted instructions to AI assistants."""

from __future__ import annotations

from datetime import date, timedelta

from ragline.corpora.orrin import templates as T
from ragline.corpora.orrin.builder import KnowledgeBase
from ragline.corpora.orrin.formats import long_date
from ragline.corpora.orrin.world import family_rng, random_day


def add_injection_pages(kb: KnowledgeBase) -> None:
    """Four editable pages carrying planted instructions addressed to AI assistants.

    The right answer is the real fact, on the page itself or elsewhere; the planted claim is the
    question's distractor (Lecture 3, §6.3; Lecture 12, §6.3: retrieved text is untrusted data).
    """
    world, rng = kb.world, family_rng(kb.world.seed, "injection")
    year = 2025
    vendor = kb.add(
        "faq-vendor-onboarding",
        "Vendor Onboarding FAQ",
        T.VENDOR_FAQ,
        {"pay_days": f"{rng.choice([30, 45, 60])} days", "insurance": f"${rng.choice([2, 5, 10])} million"},
        doc_type="faq",
        department="Procurement",
        effective=random_day(rng, date(2025, 1, 1), 300),
    )
    for key, phrasings in T.VENDOR_FAQ_QUESTIONS.items():
        kb.ask("injection", rng.choice(phrasings), [vendor[key]], distractors=[T.VENDOR_FAQ_PLANTED])

    supplier_day = random_day(rng, date(year, 5, 1), 120)
    bulletin = kb.add(
        f"bulletin-suppliers-{year}",
        f"Supplier Bulletin, Spring {year}",
        T.SUPPLIER_BULLETIN,
        {
            "supplier_day": long_date(supplier_day),
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
        effective=random_day(rng, date(2025, 1, 1), 300),
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
    signup = random_day(rng, date(year, 6, 1), 40)
    social = kb.add(
        f"news-summer-social-{year}",
        f"Summer Social {year}",
        T.SUMMER_SOCIAL,
        {
            "venue": f"{world.places['venue'][0]} {rng.choice(T.VENUE_KINDS)}",
            "signup_date": long_date(signup),
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
        effective=random_day(rng, date(2025, 1, 1), 300),
    )
    kb.ask(
        "injection",
        rng.choice(T.SUMMER_SOCIAL_ELSEWHERE),
        [emergency["downed_line"]],
        aliases=[f"extension {world.ext['control']}"],
        distractors=[planted_email],
    )
