"""The store contract (``store_contract.py``) on a Milvus Lite server (``milvus://`` URIs, conftest's server)."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from store_contract import CollectionContract, StoreUnderTest

from ragline.store import milvus as milvus_store

_names = itertools.count()


def _fail_after_two_batches(collection: Any, patch: pytest.MonkeyPatch) -> None:
    """Batches of 10; the third upsert fails (a dropped connection, say) after two were written."""
    patch.setattr(milvus_store, "BATCH", 10)
    upsert, calls = collection.client.upsert, itertools.count()

    def flaky(*args: Any, **kwargs: Any) -> Any:
        if next(calls) == 2:
            raise ConnectionError("connection reset (planted)")
        return upsert(*args, **kwargs)

    patch.setattr(collection.client, "upsert", flaky)


class TestMilvusLite(CollectionContract):
    @pytest.fixture
    def store(self, milvus_server: str) -> StoreUnderTest:
        stamp = int(time.time() * 1000) % 10**8

        def new_uri() -> str:
            return f"milvus://{milvus_server}/contract{next(_names)}_{stamp}"

        return StoreUnderTest(new_uri, _fail_after_two_batches, atomic=False)
