"""API keys: each maps to a principal (a name and its ACL groups) and, with ``admin``, to indexing rights.

The keys file is JSON and holds only SHA-256 digests of the keys: a key is shown once, when it is made,
and cannot be read back from the file. Keys are 32 random bytes, so a plain digest is enough (there is
nothing to brute-force); lookups compare digests in constant time.

    {"schema": 1, "keys": [{"name": "alice", "sha256": "...", "groups": ["all", "hr"], "admin": false,
                            "created_at": "...", "revoked_at": null}]}
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragline.errors import ConfigError, InputError
from ragline.principals import Principal

KEY_PREFIX = "rlk_"
SCHEMA = 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


@dataclass(frozen=True)
class ApiKey:
    """One entry of the keys file (the key itself is never stored)."""

    name: str
    sha256: str
    groups: tuple[str, ...]
    admin: bool = False
    created_at: str = ""
    revoked_at: str | None = None

    @property
    def principal(self) -> Principal:
        return Principal(self.name, self.groups)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sha256": self.sha256,
            "groups": list(self.groups),
            "admin": self.admin,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }

    def public(self) -> dict[str, Any]:
        """What `keys list` shows: everything but the digest."""
        return {k: v for k, v in self.to_dict().items() if k != "sha256"}


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


class KeyRing:
    """The keys of a keys file, for authenticating requests (reloaded when the file changes)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._mtime: float | None = None
        self._keys: list[ApiKey] = []
        self.reload()

    def reload(self) -> None:
        self._keys = read_keys(self.path)
        self._mtime = _mtime(self.path)

    def authenticate(self, key: str | None) -> ApiKey | None:
        """The live entry whose digest matches ``key``, else None (missing, wrong or revoked)."""
        if not key:
            return None
        if _mtime(self.path) != self._mtime:  # `ragline keys revoke` while serving takes effect at once
            with contextlib.suppress(InputError, ConfigError):  # a broken file: keep the keys last read
                self.reload()
        wanted = digest(key)
        found = None
        for entry in self._keys:
            if hmac.compare_digest(entry.sha256, wanted) and entry.revoked_at is None:
                found = entry
        return found

    def __len__(self) -> int:
        return sum(1 for k in self._keys if k.revoked_at is None)


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def read_keys(path: str | Path) -> list[ApiKey]:
    """The entries of a keys file; a missing file has none."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(
            str(path),
            f"cannot read the keys file: {error}; restore it or make a new one with "
            "`ragline keys add NAME --keys FILE`",
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise InputError(str(path), 'not a keys file: expected {"schema": 1, "keys": [...]}')
    out = []
    for i, item in enumerate(data["keys"]):
        try:
            out.append(
                ApiKey(
                    str(item["name"]),
                    str(item["sha256"]),
                    tuple(item.get("groups") or ()),
                    bool(item.get("admin")),
                    str(item.get("created_at", "")),
                    item.get("revoked_at"),
                )
            )
        except (KeyError, TypeError):
            raise InputError(f"{path}: keys[{i}]", "needs a name and a sha256") from None
    return out


def write_keys(path: str | Path, keys: list[ApiKey]) -> None:
    """Replace the keys file atomically, readable by its owner only."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".keys-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"schema": SCHEMA, "keys": [k.to_dict() for k in keys]}, out, indent=2)
            out.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def add_key(path: str | Path, name: str, groups: list[str], admin: bool = False) -> str:
    """Make a key for ``name`` in ``groups``, store its digest, and return the key (shown once)."""
    if not _NAME.match(name):
        raise ConfigError(f"key name {name!r}: use letters, digits and _ . @ - (at most 64 characters)")
    if not groups:
        raise ConfigError(f"key {name!r} needs --groups (the ACL groups its principal reads), e.g. --groups all")
    keys = read_keys(path)
    if any(k.name == name and k.revoked_at is None for k in keys):
        raise ConfigError(f"{path} already has a live key named {name!r}: revoke it first or pick another name")
    key = new_key()
    now = datetime.now(UTC).isoformat(timespec="seconds")
    keys.append(ApiKey(name, digest(key), tuple(groups), admin, now))
    write_keys(path, keys)
    return key


def revoke_key(path: str | Path, name: str) -> int:
    """Revoke every live key named ``name``; returns how many were revoked."""
    keys = read_keys(path)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    revoked = 0
    updated = []
    for k in keys:
        if k.name == name and k.revoked_at is None:
            k = ApiKey(k.name, k.sha256, k.groups, k.admin, k.created_at, now)
            revoked += 1
        updated.append(k)
    if not revoked:
        live = ", ".join(sorted({k.name for k in keys if k.revoked_at is None})) or "none"
        raise ConfigError(f"no live key named {name!r} in {path}; live keys: {live}")
    write_keys(path, updated)
    return revoked
