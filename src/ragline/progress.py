"""Progress bars on stderr (stdout is kept for results), quiet when stderr is not a terminal."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

T = TypeVar("T")
stderr = Console(stderr=True, soft_wrap=True)  # never wrap a path:line in an error


def track(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Iterate ``items`` with a progress bar on stderr."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=stderr, transient=True, disable=not stderr.is_terminal) as progress:
        yield from progress.track(items, total=total, description=description)
