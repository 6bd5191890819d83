"""Principals: who is asking, and the ACL restriction that follows from it.

A principal is a user name and the ACL groups it belongs to. The CLI takes one from a principals
file (``--principals FILE --as USER``) or, as the quick form, from ``--groups``; the server takes one
from the API key of the request. Every retriever then searches with ``principal.restriction()``
applied inside retrieval (``restrict(user_filter, principal.restriction())``): a document is visible
when its ``acl`` holds one of the principal's groups.

The principals file is TOML, YAML or JSON mapping users to groups::

    [users]
    alice = ["all", "hr"]
    bob = ["all"]
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragline.errors import ConfigError, InputError
from ragline.index.filters import Node, acl_filter


@dataclass(frozen=True)
class Principal:
    """A user and its ACL groups; ``groups=None`` means unrestricted (a trusted, local caller)."""

    name: str
    groups: tuple[str, ...] | None

    def restriction(self) -> Node | None:
        """The filter tree every retrieval of this principal is combined with (None: no restriction)."""
        return None if self.groups is None else acl_filter(self.groups)

    def can_read(self, acl: Any) -> bool:
        """Whether a document with metadata ``acl`` is visible to this principal (the same rule as the filter)."""
        if self.groups is None:
            return True
        values = acl if isinstance(acl, (list, tuple)) else () if acl is None else (acl,)
        return any(str(v) in self.groups for v in values)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "groups": None if self.groups is None else list(self.groups)}


ANYONE = Principal("local", None)


def principal_from_groups(groups: Sequence[str], name: str = "groups") -> Principal:
    return Principal(name, tuple(groups))


def load_principals(path: str | Path) -> dict[str, Principal]:
    """Users -> principals from a TOML, YAML or JSON file with a ``users`` table (see the module)."""
    path = Path(path)
    try:
        data = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise InputError(str(path), f"cannot read the principals file: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise InputError(str(path), "the principals file is not UTF-8 text") from None
    try:
        if path.suffix.lower() in (".yaml", ".yml"):  # a user given twice is refused, not the last one kept
            from ragline.ingest.files import bounded_yaml

            parsed = bounded_yaml(data, str(path), "the principals file", "fix it before it is used", first_line=1)
        elif path.suffix.lower() == ".json":
            from ragline.ingest.files import unique_keys

            parsed = json.loads(data, object_pairs_hook=unique_keys)
        else:
            parsed = tomllib.loads(data)  # TOML refuses a repeated key itself
    except InputError:
        raise
    except Exception as error:  # TOML, YAML and JSON each have their own error types
        raise InputError(str(path), f"cannot parse the principals file: {error}") from None
    users = parsed.get("users") if isinstance(parsed, Mapping) else None
    if not isinstance(users, Mapping):
        raise InputError(str(path), 'expected a "users" table mapping each user to a list of groups')
    out = {}
    for name, groups in users.items():
        if not isinstance(groups, list) or not all(isinstance(g, str) and g for g in groups):
            raise InputError(f"{path}: users.{name}", f"must be a list of group names, got {groups!r:.80}")
        out[str(name)] = Principal(str(name), tuple(groups))
    return out


def resolve_principal(principals_file: str | Path | None, user: str | None, groups: Sequence[str] | None) -> Principal:
    """The principal of a command: ``--as USER`` (from ``--principals FILE``), or ``--groups``, or anyone.

    Giving both a user and groups is an error: the groups of a user come from the file alone. A principals
    file without a user is an error too (fail closed): it names no one to restrict the command to.
    """
    if principals_file is not None and user is None:
        raise ConfigError(
            f"--principals {principals_file} names users but not which one runs this command: add --as USER"
        )
    if user is not None and groups is not None:
        raise ConfigError("give --as USER or --groups, not both: a user's groups come from the principals file")
    if user is not None:
        if principals_file is None:
            raise ConfigError("--as USER needs --principals FILE (users and their groups)")
        known = load_principals(principals_file)
        if user not in known:
            raise ConfigError(f"user {user!r} is not in {principals_file}; users there: {', '.join(sorted(known))}")
        return known[user]
    if groups is not None:
        return principal_from_groups(groups)
    return ANYONE
