"""Indexes: BM25 over immutable segments with deletes, filters, and the on-disk collection."""

from ragline.index.bm25 import VARIANTS, BM25Params
from ragline.index.filters import parse_filter
from ragline.index.store import Index, IndexSettings, SyncReport

__all__ = ["VARIANTS", "BM25Params", "Index", "IndexSettings", "SyncReport", "parse_filter"]
