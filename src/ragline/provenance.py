"""Provenance: what produced a result, stamped into every JSON result (``provenance``).

``provenance(config, **extra)`` gives the ragline version, the whole pipeline config (``config``), and,
when ragline runs from a git checkout, the commit (``commit``) and whether tracked files differ from it
(``dirty``): a figure can then be traced to the code that made it. An installed package has no checkout
and reports neither.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from ragline import __version__

_CHECKOUT = Path(__file__).resolve().parents[2]  # src/ragline/provenance.py -> the repository root


@lru_cache(maxsize=1)
def source_revision() -> dict[str, Any]:
    """``{"commit": sha, "dirty": bool}`` of the checkout ragline runs from, or ``{}`` outside one."""
    if not (_CHECKOUT / ".git").exists():
        return {}
    import subprocess  # here: a command that prints no provenance (a table) does not import it

    try:
        commit = _git("rev-parse", "HEAD")
        changed = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return {}
    return {"commit": commit, "dirty": bool(changed)}


def _git(*argv: str) -> str:
    import subprocess

    done = subprocess.run(["git", "-C", str(_CHECKOUT), *argv], capture_output=True, text=True, timeout=10, check=True)
    return done.stdout.strip()


def provenance(config: Any = None, **extra: Any) -> dict[str, Any]:
    """The provenance of a result: version, commit (and dirty), the pipeline config, then ``extra``."""
    out: dict[str, Any] = {"ragline_version": __version__, **source_revision()}
    if config is not None:
        out["config"] = config.to_dict() if hasattr(config, "to_dict") else config
    out.update(extra)
    return out
