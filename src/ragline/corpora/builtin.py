"""The built-in Orrin Grid index: built on first use, cached, shared by ``make demo`` and ``ragline ask``.

The cache key holds the corpus fingerprint and the index settings, so a changed generator or
configuration builds a new index instead of silently reusing a stale one. The index is built in a
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
from ragline.ingest.pipeline import IngestConfig, chunk_documents
from ragline.paths import cache_root
from ragline.progress import stderr

DEFAULT_SETTINGS = IndexSettings(embedder="minilm", vector_index="flat")
# The default pipeline's chunking (pipelines/default.toml): the best configuration of the chunking
# experiment on the Orrin Grid *training* world (BENCHMARKS.md): 100-word chunks overlapping by 30.
DEFAULT_INGEST = IngestConfig(load_config("default").ingest.chunker, load_config("default").ingest.context)


def orrin_index(
    settings: IndexSettings = DEFAULT_SETTINGS, ingest: IngestConfig = DEFAULT_INGEST, seed: int = DEFAULT_SEED
) -> tuple[Index, OrrinCorpus]:
    """The Orrin Grid corpus and an index of its chunks (built once, then opened)."""
    corpus = build_orrin(seed)
    config = {"format": FORMAT, "settings": settings.to_dict(), "ingest": ingest.to_dict()}
    key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:10]
    path = cache_root() / "indexes" / f"orrin-{seed}-{corpus.fingerprint()[:12]}-{key}"
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
