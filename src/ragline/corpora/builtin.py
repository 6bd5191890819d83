"""The built-in Orrin Grid index: built on first use, cached, shared by ``make demo`` and ``ragline ask``.

The cache key holds the corpus fingerprint, the index settings and the chunkers' version (which
includes the sentence splitter's), so a changed generator, configuration or splitter builds a new
index instead of silently reusing a stale one. The index is built in a
temporary folder and renamed into place, so two processes starting at once never see half an index.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from ragline.config import load_config
from ragline.corpora.orrin import DEFAULT_SEED, OrrinCorpus, build_orrin
from ragline.index import Index, IndexSettings
from ragline.index.store import FORMAT
from ragline.ingest import chunkers
from ragline.ingest.pipeline import IngestConfig, chunk_documents
from ragline.paths import cache_root
from ragline.progress import stderr

DEFAULT_SETTINGS = IndexSettings(embedder="minilm", vector_index="flat")
# The default pipeline's chunking (pipelines/default.toml), chosen with the chunking experiment on the
# Orrin Grid *training* world (BENCHMARKS.md).
DEFAULT_INGEST = IngestConfig(load_config("default").ingest.chunker, load_config("default").ingest.context)


def index_path(corpus: OrrinCorpus, settings: IndexSettings, ingest: IngestConfig, seed: int) -> Path:
    """Where the built-in index of this corpus, settings and chunking lives in the cache."""
    config = {
        "format": FORMAT,
        "settings": settings.to_dict(),
        "ingest": ingest.to_dict(),
        "chunkers": chunkers.CHUNKERS_VERSION,
    }
    key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:10]
    return cache_root() / "indexes" / f"orrin-{seed}-{corpus.fingerprint()[:12]}-{key}"


def orrin_index(
    settings: IndexSettings = DEFAULT_SETTINGS, ingest: IngestConfig = DEFAULT_INGEST, seed: int = DEFAULT_SEED
) -> tuple[Index, OrrinCorpus]:
    """The Orrin Grid corpus and an index of its chunks (built once, then opened)."""
    corpus = build_orrin(seed)
    path = index_path(corpus, settings, ingest, seed)
    if not (path / "manifest.json").is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".building-", dir=path.parent))
        try:
            with stderr.status(f"building the Orrin Grid index ({len(corpus.documents)} documents)"):
                index = Index.create(tmp / "index", settings)
                chunks, vectors = chunk_documents(corpus.documents, ingest, None)
                index.add(chunks, vectors)
                index.commit()
                index.close()
            with contextlib.suppress(OSError):  # another process finished first: use its index
                (tmp / "index").rename(path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return Index.open(path), corpus
