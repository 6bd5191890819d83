"""Section questions: six expense policies that share their section names and sentences."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from ragline.corpora.base import Fact
from ragline.corpora.orrin import templates as T
from ragline.corpora.orrin.builder import KnowledgeBase
from ragline.corpora.orrin.formats import fill, money, quantity
from ragline.corpora.orrin.world import family_rng, random_day


def add_expense_policies(kb: KnowledgeBase) -> None:
    """Six expense policies with the same section names and sentences, only the numbers differ.

    Section questions ("What is the receipt threshold in the meals policy?") are answerable only by
    a chunk that knows which policy it belongs to (Lecture 3, §2.3 contextual retrieval, §4).
    """
    rng = family_rng(kb.world.seed, "expense")
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
            "limit": quantity(unit, limit),
            "receipt": money(receipts[i]),
            "deadline": f"{deadlines[i]} days",
            "approval": money(approvals[i]),
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
            effective=random_day(rng, date(2025, 1, 1), 300),
            policy=kind,
        )

    for i, kind in enumerate(kinds):
        short = str(T.EXPENSE_POLICIES[kind]["short"])
        asked = ["receipt_threshold", "submission_deadline", "limit" if i % 2 == 0 else "approval_threshold"]
        for key in asked:
            templates = T.EXPENSE_POLICIES[kind]["limit_questions"] if key == "limit" else T.SECTION_QUESTIONS[key]
            others = [per_policy[k][key].value for k in kinds if k != kind and key in per_policy[k]]
            kb.ask(
                "section", fill(rng.choice(templates), {"short": short}), [per_policy[kind][key]], distractors=others
            )
