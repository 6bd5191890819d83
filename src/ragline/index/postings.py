"""Term-major postings of one field of a segment: CSR arrays (``indptr``, ``docs``, ``tfs``) per field.

A query term's postings are one contiguous slice, so scoring is vectorized (or compiled) over it;
building analyzes a batch of documents at once (``FieldPostings.analyze``).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np

from ragline.text import Analyzer
from ragline.text.analyzer import BLOCK_CHARS


class _TermIds(dict):
    """Term -> id, numbering a term it has not seen next (ids in order of first occurrence)."""

    def __missing__(self, term: str) -> int:
        self[term] = term_id = len(self)
        return term_id


class _TokenIds(dict):
    """``_TermIds`` that also lists the tokens numbered since ``take_new`` was last called."""

    def __init__(self) -> None:
        super().__init__()
        self.new: list[str] = []

    def __missing__(self, token: str) -> int:
        self[token] = token_id = len(self)
        self.new.append(token)
        return token_id

    def take_new(self) -> list[str]:
        new, self.new = self.new, []
        return new


# Tokens analyzed before their ids are counted into postings, a batch of documents taken this many
# tokens at a time: their strings (~60 bytes each) are then still in the processor's cache when they
# are numbered (16k tokens: 25% less build time on SciFact than 256k), and they are the transient
# memory of indexing.
ANALYSIS_CHUNK_TOKENS = 1 << 14


@dataclass
class FieldPostings:
    """Term-major postings of one field. ``terms[t]`` owns ``docs/tfs[indptr[t]:indptr[t + 1]]``."""

    terms: list[str]
    indptr: np.ndarray  # int64, len(terms) + 1
    docs: np.ndarray  # int32, row of the document within the segment, ascending per term
    tfs: np.ndarray  # float32 term frequency
    lengths: np.ndarray  # float32, tokens per document (its "dl")

    @classmethod
    def build(cls, term_counts: Iterable[Mapping[str, int]]) -> FieldPostings:
        """Postings of documents given as term -> frequency, one mapping per row, read one at a time.

        Only (term, row, frequency) triples are kept, never a document's tokens, so memory follows the
        size of the postings, not of the text.
        """
        vocab = _TermIds()
        term_id = vocab.__getitem__  # a known term is looked up in C; only a new one runs Python
        # 4 bytes a (term, row) pair; frequencies as float32 from the start (the postings' type)
        term_ids, frequencies, unique, lengths = array("i"), array("f"), array("q"), array("q")
        for counts in term_counts:
            term_ids.extend(map(term_id, counts))
            frequencies.extend(counts.values())
            unique.append(len(counts))
            lengths.append(sum(counts.values()))
        ids = np.frombuffer(term_ids, dtype=np.int32) if term_ids else np.zeros(0, dtype=np.int32)
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(ids, minlength=len(vocab)), out=indptr[1:])
        # A stable sort by term keeps each term's rows ascending (they were appended row by row).
        # Each input is dropped as soon as it is used: these arrays are the peak of indexing large files.
        order = np.argsort(ids, kind="stable")
        del ids, term_ids
        tfs = np.frombuffer(frequencies, dtype=np.float32)[order] if frequencies else np.zeros(0, dtype=np.float32)
        del frequencies
        rows = np.repeat(np.arange(len(unique), dtype=np.int32), np.asarray(unique, dtype=np.int64))
        docs = rows[order]
        del rows, order
        return cls(
            terms=list(vocab),
            indptr=indptr,
            docs=docs,
            tfs=tfs,
            lengths=np.asarray(lengths, dtype=np.float32),
        )

    @classmethod
    def analyze(
        cls, analyzer: Analyzer, texts: Iterable[tuple[str, ...]], block_chars: int = BLOCK_CHARS
    ) -> FieldPostings:
        """Postings of documents given as text parts (one tuple per row, see ``FIELD_PARTS``).

        Equal to ``build(analyzer.term_counts(*parts) for parts in texts)``, computed for many documents
        at once: each distinct token is numbered by a dict look-up in C and stemmed once, and the
        (term, row) pairs are counted by one sort per chunk of ``ANALYSIS_CHUNK_TOKENS`` tokens instead of
        a dict per document.
        """
        vocab = _TermIds()  # terms, numbered in order of first occurrence as ``build`` numbers them
        tokens = vocab if analyzer.keeps_every_token else _TokenIds()
        token_term = array("i")  # token id -> term id (-1: dropped), when tokens are not the terms
        token_id = tokens.__getitem__
        pair_terms: list[np.ndarray] = []
        pair_rows: list[np.ndarray] = []
        pair_counts: list[np.ndarray] = []
        lengths = array("q")
        pending: list[list[str]] = []
        pending_rows = array("q")
        pending_tokens = 0

        def count_pending() -> None:
            ids = np.fromiter(map(token_id, chain.from_iterable(pending)), dtype=np.int64, count=pending_tokens)
            if tokens is not vocab:
                new = tokens.take_new()
                token_term.extend(-1 if term is None else vocab[term] for term in analyzer.terms_of(new))
                ids = np.frombuffer(token_term, dtype=np.int32)[ids]
            piece_rows = np.frombuffer(pending_rows, dtype=np.int64)
            rows = np.repeat(piece_rows, np.fromiter(map(len, pending), dtype=np.int64, count=len(pending)))
            if tokens is not vocab:
                kept = ids >= 0
                ids, rows = ids[kept], rows[kept]
            first = len(lengths)
            lengths.extend(np.bincount(rows - first, minlength=int(piece_rows[-1]) + 1 - first).tolist())
            # one int64 per token: term id above, row below; sorted, equal keys are one posting
            keys = (ids.astype(np.int64) << 32) | rows
            del ids, rows
            keys.sort()
            starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1]))) if keys.size else keys[:0]
            pair_counts.append(np.diff(np.append(starts, keys.size)).astype(np.float32))
            keys = keys[starts]
            pair_terms.append((keys >> 32).astype(np.int32))
            pair_rows.append((keys & 0xFFFFFFFF).astype(np.int32))

        def flush() -> None:
            nonlocal pending_tokens
            count_pending()
            pending.clear()
            del pending_rows[:]
            pending_tokens = 0

        for row, parts in enumerate(texts):
            if sum(map(len, parts)) > block_chars:
                # A large text is counted a block at a time (``term_counts``), so that its tokens never
                # all exist at once; its terms, in order of first occurrence, then number as any others.
                if pending:
                    flush()
                counts = analyzer.term_counts(*parts, block_chars=block_chars)
                ids = np.fromiter(map(vocab.__getitem__, counts), dtype=np.int64, count=len(counts))
                order = np.argsort(ids)
                pair_terms.append(ids[order].astype(np.int32))
                pair_rows.append(np.full(len(counts), row, dtype=np.int32))
                pair_counts.append(np.fromiter(counts.values(), dtype=np.float32, count=len(counts))[order])
                lengths.append(sum(counts.values()))
                continue
            for piece in analyzer.token_lists(*parts, block_chars=block_chars):
                pending.append(piece)
                pending_rows.append(row)
                pending_tokens += len(piece)
            if pending_tokens >= ANALYSIS_CHUNK_TOKENS:
                flush()
        if pending:
            count_pending()
        return cls._from_pairs(list(vocab), pair_terms, pair_rows, pair_counts, lengths)

    @classmethod
    def _from_pairs(cls, terms, pair_terms, pair_rows, pair_counts, lengths) -> FieldPostings:
        """Postings from (term, row, count) chunks, each sorted by term then row, chunks in row order."""
        ids = np.concatenate(pair_terms) if pair_terms else np.zeros(0, dtype=np.int32)
        docs = np.concatenate(pair_rows) if pair_rows else np.zeros(0, dtype=np.int32)
        tfs = np.concatenate(pair_counts) if pair_counts else np.zeros(0, dtype=np.float32)
        if len(pair_terms) > 1:  # a stable sort by term keeps rows ascending (chunks are sorted runs)
            order = np.argsort(ids, kind="stable")
            docs, tfs = docs[order], tfs[order]
            ids = ids[order]
        indptr = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(np.bincount(ids, minlength=len(terms)), out=indptr[1:])
        return cls(terms=terms, indptr=indptr, docs=docs, tfs=tfs, lengths=np.asarray(lengths, dtype=np.float32))

    def live_df(self, live: np.ndarray | None) -> np.ndarray:
        """Document frequency of each term, counting only live rows."""
        if live is None:
            return np.diff(self.indptr)
        owner = np.repeat(np.arange(len(self.terms)), np.diff(self.indptr))
        return np.bincount(owner, weights=live[self.docs], minlength=len(self.terms)).astype(np.int64)

    def save(self, folder: Path, name: str) -> None:
        (folder / f"{name}.terms.json").write_text(json.dumps(self.terms, ensure_ascii=False), "utf-8")
        for part in ("indptr", "docs", "tfs", "lengths"):
            np.save(folder / f"{name}.{part}.npy", getattr(self, part))

    @classmethod
    def load(cls, folder: Path, name: str) -> FieldPostings:
        terms = json.loads((folder / f"{name}.terms.json").read_text("utf-8"))
        parts = {p: np.load(folder / f"{name}.{p}.npy", mmap_mode="r") for p in ("indptr", "docs", "tfs", "lengths")}
        return cls(terms=terms, **parts)


def number_terms(vocab: dict[str, int], terms: list[str]) -> np.ndarray:
    """The ids in ``vocab`` of (distinct) ``terms``, numbering those it lacks next, in order: one
    vocabulary over several segments' terms (collection statistics, merges)."""
    if not vocab:  # the first field read: every term is new, numbered in one pass in C
        vocab.update(zip(terms, range(len(terms))))
        return np.arange(len(terms), dtype=np.int64)
    return np.array([vocab.setdefault(t, len(vocab)) for t in terms], dtype=np.int64)
