"""Staged changes: what a sync would change, and the batches a commit analyzes into segments.

``compare_with_index`` sorts incoming documents into added, updated and unchanged by id and content hash.
``build_batches`` cuts a commit's pending documents into runs of at least ``COMMIT_BATCH_CHARS`` characters,
builds a segment of each and (on disk) writes it before the next is analyzed, so one large commit never
holds every chunk's postings at once; the manifest swap alone makes them visible.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragline.errors import ConfigError
from ragline.index.segment import Segment
from ragline.index.storage import write_segment
from ragline.types import Document


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    deleted: int = 0  # ids (chunks, where chunked)
    unchanged: int = 0
    removed_documents: set[str] = field(default_factory=set)  # documents none of whose ids stays
    live_documents: int = 0  # documents before the sync


def count_documents(report: SyncReport, live: Iterable[str], seen: set[str], gone: Iterable[str]) -> None:
    """Set ``report``'s document counts: the live documents, and those whose every id ``gone`` deletes."""
    from ragline.types import document_id_of

    staying = {document_id_of(i) for i in seen}
    report.live_documents = len({document_id_of(i) for i in live})
    report.removed_documents = {document_id_of(i) for i in gone} - staying


def mass_delete(report: SyncReport, withdrawn: Collection[str] = ()) -> int:
    """The documents a sync deletes when that is more than half of the index's documents, or all (else 0).

    ``withdrawn`` documents (their files are there but fail closed: bad metadata, a link out of the
    folder) are not counted: their removal is on purpose, and stopping would keep them searchable.
    """
    deleted, live = len(report.removed_documents - set(withdrawn)), report.live_documents
    return deleted if deleted > 0 and (2 * deleted > live or deleted == live) else 0


def check_deletions(
    report: SyncReport,
    source: Path,
    index: Path | str,
    recorded: list[str],
    withdrawn: set[str],
    override: str = "--allow-mass-delete",
) -> None:
    """Refuse (``ConfigError``) a sync that deletes documents of another source, or most of the index.

    ``recorded`` holds the sources ``ragline index`` recorded for the index: a folder (or BEIR folder)
    other than those that would delete documents is another source, not a new version of this one.
    ``withdrawn`` documents fail closed (bad metadata, links): removing them is never what stops a sync.
    ``override`` names what lets the caller go on (the CLI's flag, the server's request field).
    """

    if not report.removed_documents - withdrawn:
        return
    folders = [s for s in recorded if not Path(s).is_file()]
    resolved = str(source.resolve())
    if folders and resolved not in folders:
        raise ConfigError(
            f"{index} was indexed from {folders[0]}, not {resolved}: syncing it would delete the "
            f"{len(report.removed_documents)} documents {source} lacks. Nothing was written. Index it into "
            f"another --index, or add {override} to make the index mirror it"
        )
    deleted = mass_delete(report, withdrawn)
    if deleted:
        raise ConfigError(
            f"this sync would delete {deleted} of the {report.live_documents} documents in "
            f"{index}: are files of {source} missing (unmounted, moved)? Nothing was written; add "
            f"{override} if the deletions are intended"
        )


# Characters of pending text analyzed into one segment at a time (whole documents, so a little more):
# building a segment's postings takes several times its text, so a commit of more text writes several
# segments. A batch grows past this when the commit would otherwise write more than ``max_segments``
# of them, so that one commit alone never forces a merge (merging costs more memory than building).
COMMIT_BATCH_CHARS = 8 << 20


def text_chars(document: Document) -> int:
    """Characters of text a document brings to analysis (its title, text and index text)."""
    return len(document.text) + len(document.title) + len(document.index_text or "")


def text_batches(documents: list[Document], min_chars: int) -> Iterator[list[Document]]:
    """``documents`` in order, cut into runs each closed once it holds ``min_chars`` characters of text
    (all but the last run hold that many, so there are at most ``ceil(total / min_chars)`` runs)."""
    start, chars = 0, 0
    for i, doc in enumerate(documents):
        chars += text_chars(doc)
        if chars >= min_chars:
            yield documents[start : i + 1]
            start, chars = i + 1, 0
    if start < len(documents):
        yield documents[start:]


def compare_with_index(
    documents: Iterable[Document], live: dict[str, tuple[int, int]], hash_at: Callable[[int, int], str]
) -> tuple[SyncReport, list[Document], list[str], set[str]]:
    """(counts, documents to write, ids already as wanted, ids seen) of ``documents`` against the live ones."""
    report, changed, unchanged, seen = SyncReport(), [], [], set()
    for doc in documents:
        seen.add(doc.id)
        where = live.get(doc.id)
        if where is None:
            report.added += 1
            changed.append(doc)
        elif hash_at(*where) != doc.hash:
            report.updated += 1
            changed.append(doc)
        else:
            report.unchanged += 1
            unchanged.append(doc.id)
    return report, changed, unchanged, seen


def build_batches(index: Any, pending: list[Document], gen: int) -> Iterator[tuple[Segment, dict[str, int] | None]]:
    """Each batch of ``pending`` as a new segment of ``index`` (and its written files, on disk), in order."""
    settings = index.settings
    chars = sum(map(text_chars, pending))
    batch_chars = max(index.commit_batch_chars, -(-chars // max(settings.max_segments, 1)))
    for documents in text_batches(pending, batch_chars):
        vectors = index._vectors_for(documents) if settings.embedder else None
        segment = Segment.build(
            index._segment_name(gen),
            documents,
            settings.analyzer,
            settings.fields,
            vectors=vectors,
            vector_index=settings.vector_index,
        )
        # Written now (then served from its files, so the postings built for this batch leave memory
        # before the next batch is analyzed), named by the manifest only at the swap.
        yield segment, write_segment(index.path, segment) if index.path is not None else None
