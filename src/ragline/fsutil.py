"""Durable writes (fsync a written file, and the directory whose entry a rename changed), and a file's stat
signature."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import IO, Any


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


def stat_signature(path: str | os.PathLike[str] | Path) -> list[int]:
    """Size, mtime, ctime and inode (ns): any write or replacement of the file changes at least one.

    ctime cannot be set back by a user-space tool, so an edit that restores the size and mtime still
    shows; an edit within the file system's timestamp tick after a check can hide (callers apply git's
    "racy" rule: nothing modified in the last seconds is trusted by its signature).
    """
    stat = os.stat(path)
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


def save_memo(path: Path, data: Any) -> None:
    """Write a cache memo as JSON beside ``path`` and rename it over ``path``, best effort.

    Readers see the old memo or the new one, never a part; it is not fsynced, and a memo that cannot be
    written (a read-only cache) or is lost to a concurrent writer only costs recomputing what it held.
    """
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)
