"""Work measured without a clock: the Python and C function calls a computation makes.

A count is the same on a loaded CI machine and on a laptop, so a budget on it can guard against an
accidental blow-up (a quadratic loop, a repeated rebuild) where a wall-clock threshold would be flaky.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def calls_made(compute: Callable[[], Any]) -> int:
    """How many function calls ``compute()`` makes (``sys.setprofile``'s call and c_call events)."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        compute()
    finally:
        sys.setprofile(previous)
    return count
