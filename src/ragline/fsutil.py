"""Durable writes: fsync a written file, and the directory whose entry a rename changed."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import IO


def fsync_file(handle: IO[bytes] | IO[str]) -> None:
    """Flush ``handle`` and fsync it: its bytes are on disk before a name points at them."""
    handle.flush()
    os.fsync(handle.fileno())


def fsync_directory(directory: str | os.PathLike[str] | Path) -> None:
    """Make a rename or a new entry in ``directory`` durable.

    Best effort: a directory cannot be opened for fsync on every platform (Windows).
    """
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
