"""The wheel, built once for every test of this folder that needs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .wheel import build_wheel


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("dist"))
