"""The store contract (``store_contract.py``) on the embedded index, opened as ``file://`` URIs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from store_contract import CollectionContract, StoreUnderTest


def _fail_at_publish(collection: Any, patch: pytest.MonkeyPatch) -> None:
    """The segments are written, then the manifest swap fails: the previous commit must stay whole."""

    def publish(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full (planted)")

    patch.setattr(collection.index, "_publish", publish)


class TestEmbeddedIndex(CollectionContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> StoreUnderTest:
        names = iter(range(100))
        return StoreUnderTest(lambda: f"file://{tmp_path / f'index{next(names)}'}", _fail_at_publish, atomic=True)
