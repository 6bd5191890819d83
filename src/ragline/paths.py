"""Where ragline keeps what it can rebuild: embeddings, joined model files, built-in indexes."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$RAGLINE_CACHE``, else ``~/.cache/ragline``."""
    return Path(os.environ.get("RAGLINE_CACHE") or Path.home() / ".cache" / "ragline").expanduser()
