"""How Orrin documents write values: money, quantities, long dates, and template filling.

Shared by the builder and every document family, so a value is written one way everywhere (an
answer and its aliases are derived from that one form).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

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


def money(amount: int) -> str:
    return f"${amount:,}"


def quantity(unit: str, amount: int) -> str:
    if unit == "money":
        return money(amount)
    if unit == "GB":
        return f"{amount:,} GB"
    return f"{amount} {unit}"


def long_date(day: date) -> str:
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


def money_aliases(value: str) -> list[str]:
    """``"$1,500"`` -> ``["$1500", "1,500 dollars"]``; other values have no aliases."""
    if not _MONEY.fullmatch(value):
        return []
    aliases = [value.replace(",", "")] if "," in value else []
    return [*aliases, f"{value[1:]} dollars"]


def fill(template: str, values: dict[str, Any]) -> str:
    return template.format_map(values)
