"""The Orrin training world chunked as the agent tests read it: built once per module that asks for it."""

from __future__ import annotations

import pytest

from ragline.corpora.orrin import TRAIN_SEED, build_orrin
from ragline.index import Index
from ragline.ingest.pipeline import IngestConfig, chunk_documents


@pytest.fixture(scope="module")
def world():
    corpus = build_orrin(TRAIN_SEED)
    index = Index.create(None)
    chunks, _ = chunk_documents(corpus.documents, IngestConfig("fixed:size=100,overlap=30", "breadcrumb"))
    index.add(chunks)
    index.commit()
    return corpus, index
