"""A module imported on first use: commands that never touch a heavy library do not pay to load it."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """``name``, registered in ``sys.modules`` now and executed at its first attribute access.

    The recipe of the ``importlib`` documentation (``importlib.util.LazyLoader``): a missing module still
    fails here, at import time, not at first use.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
