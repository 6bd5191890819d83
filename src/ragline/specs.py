"""Component specs: ``NAME[:key=value,key=value...]``, the one syntax for retrievers, chunkers and models.

Values that read as numbers become numbers; ``a/b`` becomes a list. Examples:
``hybrid:fuser=rrf,k=60``, ``fixed:size=200,overlap=50``, ``hybrid:weights=0.7/0.3``.
"""

from __future__ import annotations

from typing import Any

from ragline.errors import ConfigError


def parse_spec(spec: str, what: str = "spec") -> tuple[str, dict[str, Any]]:
    """``"hybrid:fuser=rrf,k=60"`` -> ``("hybrid", {"fuser": "rrf", "k": 60})``."""
    name, _, rest = spec.strip().partition(":")
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"{what} {spec!r}: {part!r} is not key=value")
        params[key.strip()] = _value(value.strip())
    return name.strip(), params


def _value(text: str) -> Any:
    if "/" in text:
        return [_value(v) for v in text.split("/")]
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text
