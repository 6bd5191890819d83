"""Store URIs: ``milvus://[user:password@]HOST:PORT/COLLECTION`` and ``milvus+tls://`` (TLS)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from ragline.errors import ConfigError

SCHEMES = ("milvus", "milvus+tls")
_COLLECTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}")  # Milvus's rule for collection names


@dataclass(frozen=True)
class StoreURI:
    host: str
    port: int
    collection: str
    tls: bool = False
    user: str | None = None
    password: str | None = field(default=None, repr=False)

    @property
    def server(self) -> str:
        """The address pymilvus connects to (https with TLS)."""
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def token(self) -> str:
        """pymilvus's ``user:password`` token ('' without credentials)."""
        return f"{self.user}:{self.password or ''}" if self.user else ""

    def __str__(self) -> str:  # never prints the password
        who = f"{self.user}@" if self.user else ""
        return f"{'milvus+tls' if self.tls else 'milvus'}://{who}{self.host}:{self.port}/{self.collection}"


def store_scheme(uri: str | None) -> str:
    """The registered store a URI names: its scheme (lower case), ``file`` for a path or None."""
    if uri is None or "://" not in uri:
        return "file"
    return uri.split("://", 1)[0].lower()


def is_milvus_uri(text: str) -> bool:
    return text.split("://", 1)[0].lower() in SCHEMES and "://" in text


def parse_store_uri(text: str) -> StoreURI:
    """Parse a Milvus URI; every malformed part is named in the error."""
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    example = "milvus://HOST:PORT/COLLECTION (or milvus://user:password@HOST:PORT/COLLECTION, milvus+tls://...)"
    if scheme not in SCHEMES:
        raise ConfigError(f"store URI {text!r} has scheme {parts.scheme!r}; write {example}")
    if not parts.hostname:
        raise ConfigError(f"store URI {redacted_uri(text)!r} names no host; write {example}")
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"store URI {redacted_uri(text)!r} has a port that is not a number in 1-65535") from None
    if port is None:
        raise ConfigError(f"store URI {redacted_uri(text)!r} names no port (Milvus listens on 19530 by default)")
    name = parts.path.strip("/")
    if not _COLLECTION_NAME.fullmatch(name):
        raise ConfigError(
            f"store URI {redacted_uri(text)!r}: collection name {name!r} must be letters, digits and _ "
            "(starting with a letter or _), e.g. milvus://127.0.0.1:19530/docs"
        )
    if parts.query or parts.fragment:
        raise ConfigError(f"store URI {redacted_uri(text)!r} takes no ?query or #fragment")
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else None
    return StoreURI(parts.hostname, port, name, scheme == "milvus+tls", user, password)


def redacted_uri(text: str) -> str:
    """``text`` with the password (if any) replaced, for error messages and reports (any scheme)."""
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", text)
