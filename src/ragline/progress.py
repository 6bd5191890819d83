"""Progress on stderr (stdout is kept for results): a bar on a terminal, else a plain line every few seconds.

A log file or a CI console gets ``embedding 5183 passages (bge-small): 1200/5183 (23%), 41.2/s, ETA 1m37s``
every ``PLAIN_EVERY`` seconds, and a last line when it is done, so that a long run is never silent;
a run shorter than that prints nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

T = TypeVar("T")
stderr = Console(stderr=True, soft_wrap=True)  # never wrap a path:line in an error

PLAIN_EVERY = 5.0  # seconds between plain progress lines


def track(
    items: Iterable[T],
    description: str,
    total: int | None = None,
    *,
    stream: TextIO | None = None,
    clock: Callable[[], float] = time.monotonic,
    every: float = PLAIN_EVERY,
    shown: bool = True,
) -> Iterator[T]:
    """Iterate ``items`` with a progress bar on stderr, or plain lines when stderr is not a terminal.

    ``stream`` writes the plain lines there instead (stderr at the time of the call by default);
    ``clock`` (seconds) and ``every`` set when they are written; ``shown=False`` iterates silently (work that is
    quick in this configuration: no LLM, no progress asked for).
    """
    if not shown:
        yield from items
        return
    if stream is None and stderr.is_terminal:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=stderr, transient=True) as progress:
            yield from progress.track(items, total=total, description=description)
        return
    yield from plain_progress(items, description, total, stream or stderr.file, clock, every)


def plain_progress(
    items: Iterable[T],
    description: str,
    total: int | None,
    stream: TextIO,
    clock: Callable[[], float] = time.monotonic,
    every: float = PLAIN_EVERY,
) -> Iterator[T]:
    """Iterate ``items``, writing a progress line to ``stream`` whenever ``every`` seconds have passed
    since the last one, and a closing line if any was written."""
    start = last = clock()
    done = 0
    for item in items:
        yield item
        done += 1
        now = clock()
        if now - last >= every:
            stream.write(progress_line(description, done, total, now - start) + "\n")
            stream.flush()
            last = now
    if last != start:
        elapsed = clock() - start
        stream.write(f"{description}: {done} done in {format_duration(elapsed)}{_rate(done, elapsed)}\n")
        stream.flush()


def progress_line(description: str, done: int, total: int | None, elapsed: float) -> str:
    """``description: done/total (percent), rate/s, ETA time`` (without a total: ``done done, rate/s``)."""
    rate = done / elapsed if elapsed > 0 else 0.0
    if not total:
        return f"{description}: {done} done{_rate(done, elapsed)}"
    eta = f", ETA {format_duration((total - done) / rate)}" if rate > 0 and done < total else ""
    return f"{description}: {done}/{total} ({100 * done // total}%){_rate(done, elapsed)}{eta}"


def _rate(done: int, elapsed: float) -> str:
    return f", {done / elapsed:.1f}/s" if elapsed > 0 else ""


def format_duration(seconds: float) -> str:
    """``45s``, ``3m05s``, ``2h07m``."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
