"""The files of an index directory: the manifest, the writer lock, delete sets, loading a commit, GC.

Layout of an index directory::

    manifest.json               the last completed commit (replaced atomically)
    write.lock                  held (flock) by the one writer
    segments/<name>/...         immutable segments (see segment.py)
    deletes/<name>.<gen>.npy    rows of a segment deleted as of commit <gen>

A commit writes new files first and swaps ``manifest.json`` last (write temp, fsync, rename), so a
crash at any point leaves the previous commit intact; then it removes the files the new manifest does
not name. A reader that finds files of the commit it was loading removed (the manifest moved on)
loads the newer commit.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragline import __version__
from ragline.errors import (
    CorruptIndexError,
    IndexDirectoryError,
    IndexLockedError,
    IndexMismatchError,
    IndexNotFoundError,
    IndexPathIsFileError,
)
from ragline.fsutil import fsync_directory, fsync_file
from ragline.index.segment import Segment
from ragline.index.settings import IndexSettings

FORMAT = 3  # 2: the english analyzer indexes CJK text (its stamp changed); 3: chunks store their parent
MANIFEST = "manifest.json"
LOAD_ATTEMPTS = 20  # commits a reader follows while loading before it gives up (each one is a writer's commit)

Commit = tuple[dict[str, Any], list[Segment], list[np.ndarray]]  # manifest, segments, deleted rows per segment


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_manifest(settings: IndexSettings) -> dict[str, Any]:
    """The manifest of an index with no commit yet (generation 0, no segments)."""
    return {
        "format": FORMAT,
        "ragline_version": __version__,
        "generation": 0,
        "created_at": now(),
        "committed_at": None,
        "settings": settings.to_dict(),
        "segments": [],
    }


def check_directory(path: Path) -> None:
    """``IndexPathIsFileError`` when ``path`` exists but is not a directory (an index is a directory)."""
    if path.exists() and not path.is_dir():
        raise IndexPathIsFileError(str(path))


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of the index at ``path`` (it is replaced atomically, so one read sees one commit)."""
    check_directory(path)
    if not (path / MANIFEST).is_file():
        raise IndexNotFoundError(str(path))
    try:
        manifest = json.loads((path / MANIFEST).read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CorruptIndexError(f"{path / MANIFEST} is not valid JSON ({error}); restore it from a backup") from None
    if not isinstance(manifest, dict):
        raise CorruptIndexError(f"{path / MANIFEST} is not an index manifest (a JSON object); restore it from a backup")
    found = manifest.get("format")
    if found != FORMAT:
        # An index of another format is refused, never read with today's analyzer or layout.
        rebuild = f"delete {path} and rebuild it with `ragline index SOURCE --index {path}`"
        if isinstance(found, int) and not isinstance(found, bool) and found < FORMAT:
            problem, advice = f"was built by an older ragline (format {found}", rebuild
        elif isinstance(found, int) and not isinstance(found, bool):
            problem, advice = f"was built by a newer ragline (format {found}", f"upgrade ragline, or {rebuild}"
        else:
            problem, advice = f"has no valid format number ({found!r}", rebuild
        raise IndexMismatchError(f"index {path} {problem}; this ragline reads format {FORMAT}): {advice}")
    return manifest


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """Replace the manifest at ``path`` atomically: a temporary file, fsynced, renamed over it."""
    tmp = path / f"{MANIFEST}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=1)
        fsync_file(fh)
    os.replace(tmp, path / MANIFEST)
    fsync_directory(path)


def folder_bytes(folder: Path) -> int:
    """Bytes of the files under ``folder``; a file a writer removes meanwhile counts as gone."""
    total = 0
    for root, _, files in os.walk(folder):  # os.walk skips a folder removed before it is listed
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                total += os.stat(os.path.join(root, name)).st_size
    return total


class WriterLock:
    """The one writer's lock on an index directory (flock: released by the kernel if the process dies)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock, or raise ``IndexLockedError`` naming the holder."""
        fd = os.open(self.path / "write.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown process"
            os.close(fd)
            raise IndexLockedError(str(self.path), holder) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} since {now()}".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def load_commit(path: Path, manifest: dict[str, Any], settings: IndexSettings, loaded: dict[str, Segment]) -> Commit:
    """The segments and delete sets of ``manifest``'s commit, or of a newer one if a writer moved on.

    A writer removes the files of older commits only after it has swapped in a newer manifest. So a
    named file that is missing or short while ``manifest.json`` still says the same is corruption; when
    the manifest changed meanwhile, a commit removed it, and the newer commit is loaded instead.
    Segments never change, so those in ``loaded`` (by name; it collects the ones loaded here) are reused.
    """
    for _ in range(LOAD_ATTEMPTS):
        try:
            return (manifest, *_load_segments(path, manifest, settings, loaded))
        except CorruptIndexError:
            newer = read_manifest(path)
            if newer == manifest:
                raise
            if newer["settings"] != manifest["settings"]:
                raise IndexMismatchError(
                    f"index {path} was replaced by one with other settings while it was being opened; open it again"
                ) from None
            manifest = newer
    raise IndexDirectoryError(
        f"index {path} got {LOAD_ATTEMPTS} new commits while one was being loaded; "
        "open it again when the writer commits less often"
    )


def _load_segments(
    path: Path, manifest: dict[str, Any], settings: IndexSettings, loaded: dict[str, Segment]
) -> tuple[list[Segment], list[np.ndarray]]:
    segments, deleted = [], []
    for entry in manifest["segments"]:
        segment = loaded.get(entry["name"])
        if segment is None:
            segment = loaded[entry["name"]] = Segment.load(
                path / "segments" / entry["name"], settings.fields, entry["files"], settings.vector_index
            )
        dead = np.zeros(len(segment), dtype=bool)
        if entry.get("deletes"):
            file = path / "deletes" / entry["deletes"]
            try:
                dead[np.load(file)] = True
            except FileNotFoundError:
                raise CorruptIndexError(
                    f"delete set {file} named by the manifest is missing; restore the index from a backup"
                ) from None
        segments.append(segment)
        deleted.append(dead)
    return segments, deleted


def write_segment(path: Path, segment: Segment) -> dict[str, int]:
    """Write ``segment`` into the index at ``path`` (fsynced); returns file name -> size for the manifest.

    It is written under a temporary name and renamed, so a half-written folder is never taken for a
    segment. No manifest names it yet: it is part of no commit, and the next commit's garbage
    collection removes it if the commit that was to name it never swaps its manifest in. From then on
    the segment serves its postings and text from the files (what it built in memory can go).
    """
    tmp = path / "segments" / f"{segment.name}.tmp"
    files = segment.write(tmp)
    tmp.rename(path / "segments" / segment.name)
    fsync_directory(path / "segments")
    segment.serve_from(path / "segments" / segment.name)
    return files


def write_segments(
    path: Path | None,
    old: list[dict[str, Any]],
    segments: list[Segment],
    deleted: list[np.ndarray],
    gen: int,
    written: Mapping[str, dict[str, int]] | None = None,
) -> list[dict[str, Any]]:
    """The manifest's entries for commit ``gen`` of ``segments``, given the ``old`` commit's entries.

    Under ``path`` (None: in memory) the segments new to this commit and the changed delete sets are
    written first (fsynced), so the manifest that names them can be swapped in after. ``written``
    (name -> files) are new segments already written by ``write_segment`` earlier in this commit.
    """
    entries, by_name, written = [], {e["name"]: e for e in old}, written or {}
    for seg, dead in zip(segments, deleted):
        entry = dict(by_name.get(seg.name) or {"name": seg.name})
        n_dead = int(dead.sum())
        if path is not None:
            if seg.name in written:
                entry["files"] = dict(written[seg.name])
            elif seg.name not in by_name:
                entry["files"] = write_segment(path, seg)
            if n_dead and n_dead != by_name.get(seg.name, {}).get("n_deleted", 0):
                entry["deletes"] = f"{seg.name}.{gen:06d}.npy"
                (path / "deletes").mkdir(exist_ok=True)
                with open(path / "deletes" / entry["deletes"], "wb") as fh:
                    np.save(fh, np.flatnonzero(dead).astype(np.int32))
                    fsync_file(fh)
            elif not n_dead:
                entry.pop("deletes", None)
        entry["rows"], entry["n_deleted"] = len(seg), n_dead
        entries.append(entry)
    return entries


def collect_garbage(path: Path, manifest: dict[str, Any]) -> None:
    """Remove segment folders and delete sets that ``manifest`` does not name."""
    names = {e["name"] for e in manifest["segments"]}
    deletes = {e.get("deletes") for e in manifest["segments"]}
    for folder in (path / "segments").glob("*") if (path / "segments").exists() else []:
        if folder.name not in names:
            shutil.rmtree(folder, ignore_errors=True)
    for file in (path / "deletes").glob("*") if (path / "deletes").exists() else []:
        if file.name not in deletes:
            file.unlink(missing_ok=True)


def index_info(index: Any) -> dict[str, Any]:
    """What ``Index.info`` reports: documents, deletes, segments, size on disk, generation and stamps."""
    manifest = index.manifest
    return {
        "path": str(index.path) if index.path else None,
        "documents": len(index),
        "deleted": int(sum(d.sum() for d in index.deleted)),
        "segments": [
            {"name": s.name, "rows": len(s), "deleted": int(d.sum())} for s, d in zip(index.segments, index.deleted)
        ],
        "size_bytes": folder_bytes(index.path) if index.path else 0,
        "generation": index.generation,
        "format": manifest["format"],
        "ragline_version": manifest["ragline_version"],
        "created_at": manifest["created_at"],
        "committed_at": manifest["committed_at"],
        "settings": manifest["settings"],
    }
