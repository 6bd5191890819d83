"""A module imported on first use: commands that never touch a heavy library do not pay to load it."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


class _Missing(ModuleType):
    """Stands in for an optional module that is not installed: any use says which extra installs it."""

    def __init__(self, name: str, install: str) -> None:
        super().__init__(name)
        self._install = install

    def __getattr__(self, attribute: str) -> object:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise ModuleNotFoundError(f"No module named {self.__name__!r}: {self._install}", name=self.__name__)


def lazy_module(name: str, install: str | None = None) -> ModuleType:
    """``name``, registered in ``sys.modules`` now and executed at its first attribute access.

    The recipe of the ``importlib`` documentation (``importlib.util.LazyLoader``): a missing module still
    fails here, at import time, not at first use; unless ``install`` says how to get it (an optional
    dependency), when the failure waits for the first use and names that.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if (spec is None or spec.loader is None) and install is not None:
        return _Missing(name, install)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
