"""``lazy_module``: an optional module that is missing fails at first use, naming how to install it."""

from __future__ import annotations

import pytest

from ragline.lazy import lazy_module


def test_a_missing_optional_module_fails_at_first_use_with_the_install_hint() -> None:
    """Planted fault: `install=` ignored (the import-time error of a required module) fails this test."""
    module = lazy_module("ragline_no_such_module", install="pip install 'ragline[dense]'")
    with pytest.raises(ModuleNotFoundError, match=r"ragline_no_such_module.*ragline\[dense\]"):
        module.IndexFlatIP  # noqa: B018
    with pytest.raises(ModuleNotFoundError):
        lazy_module("ragline_no_such_module")
