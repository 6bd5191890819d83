"""The built-in index's cache key: what must change it."""

from __future__ import annotations

from ragline.corpora import builtin
from ragline.corpora.orrin import DEFAULT_SEED, build_orrin
from ragline.ingest import chunkers
from ragline.ingest.pipeline import IngestConfig


def test_a_changed_chunker_or_splitter_version_moves_the_builtin_index(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Planted fault checked: a key without ``CHUNKERS_VERSION`` reuses the stale index after a splitter change."""
    corpus = build_orrin(DEFAULT_SEED)
    settings, ingest = builtin.DEFAULT_SETTINGS, builtin.DEFAULT_INGEST
    before = builtin.index_path(corpus, settings, ingest, DEFAULT_SEED)
    assert builtin.index_path(corpus, settings, ingest, DEFAULT_SEED) == before  # stable while nothing changes
    assert builtin.index_path(corpus, settings, IngestConfig("fixed:size=50"), DEFAULT_SEED) != before
    monkeypatch.setattr(chunkers, "CHUNKERS_VERSION", chunkers.CHUNKERS_VERSION + "-changed")
    assert builtin.index_path(corpus, settings, ingest, DEFAULT_SEED) != before
