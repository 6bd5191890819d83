"""Component specs: ``NAME[:key=value,key=value...]``, the one syntax for every registered component.

Values are kept as written, except that numbers become numbers and two list forms become lists:

- ``weights=0.5/0.5``: numbers joined by ``/`` (and only numbers: ``model=a/b.gguf`` stays a path);
- ``legs=[bm25; dense]`` or ``legs=[bm25:k1=1.2,b=0.3; dense]``: items in brackets separated by ``;``
  (by ``,`` when no ``;`` is present), each item parsed as a value, so an item may be a spec itself.

A value may be quoted (``"..."`` or ``'...'``, ``\\`` escaping a quote) to keep commas, brackets or a number as text:
``llm:model="openai:http://127.0.0.1:9/v1?model=x"``; a URL needs no quotes unless it holds a comma.
Examples: ``hybrid:fuser=rrf,k=60``, ``fixed:size=200,overlap=50``, ``hybrid:weights=0.7/0.3``.
"""

from __future__ import annotations

import re
from typing import Any

from ragline.errors import ConfigError

_OPEN, _CLOSE = "[", "]"
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def parse_spec(spec: str, what: str = "spec") -> tuple[str, dict[str, Any]]:
    """``"hybrid:fuser=rrf,k=60"`` -> ``("hybrid", {"fuser": "rrf", "k": 60})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"{what}: empty spec; expected NAME[:key=value,...]")
    name, _, rest = spec.strip().partition(":")
    if not name.strip():
        raise ConfigError(f"{what} {spec!r}: no component name before ':'")
    params: dict[str, Any] = {}
    for part in _split(rest, ",", spec, what):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ConfigError(f"{what} {spec!r}: {part.strip()!r} is not key=value")
        if key in params:
            raise ConfigError(f"{what} {spec!r}: key {key!r} is given twice")
        params[key] = parse_value(value.strip(), f"{what} {spec!r}, key {key!r}")
    return name.strip(), params


def parse_value(text: str, where: str = "value") -> Any:
    """One spec value: a quoted string, a bracketed list, a ``/`` list of numbers, a number, or text."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return _ESCAPE.sub(r"\1", text[1:-1])
    if text.startswith(_OPEN):
        if not text.endswith(_CLOSE):
            raise ConfigError(f"{where}: list {text!r} has no closing ']'")
        body = text[1:-1]
        separator = ";" if any(body[i] == ";" for i in _outside(body, text, where)) else ","
        return [parse_value(item.strip(), where) for item in _split(body, separator, text, where)]
    if "/" in text:
        items = text.split("/")
        numbers = [_number(item.strip()) for item in items]
        if all(n is not None for n in numbers):
            return numbers
        return text  # a path or a URL, kept whole
    number = _number(text)
    return text if number is None else number


def format_value(value: Any) -> str:
    """The spec text of a value (the inverse of ``parse_value`` for what it produces)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        if len(value) > 1 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return "/".join(repr(v) for v in value)
        return "[" + "; ".join(format_value(v) for v in value) + "]"
    text = str(value)
    if not text or any(c in text for c in ",;[]\"'") or text != text.strip() or parse_value(text) != text:
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    return text


def format_spec(name: str, params: dict[str, Any]) -> str:
    """``("hybrid", {"k": 60})`` -> ``"hybrid:k=60"``; ``parse_spec(format_spec(n, p)) == (n, p)``."""
    if not params:
        return name
    return name + ":" + ",".join(f"{key}={format_value(value)}" for key, value in params.items())


def _number(text: str) -> int | float | None:
    for cast in (int, float):
        try:
            value = cast(text)
        except ValueError:
            continue
        # "nan", "inf" and "1e400" are words or accidents here, not settings.
        return value if cast is int or value == value and abs(value) != float("inf") else None
    return None


def _outside(text: str, spec: str, what: str) -> list[int]:
    """Positions of the characters of ``text`` outside brackets and quotes (a backslash escapes in quotes)."""
    positions, depth, quote, escaped = [], 0, "", False
    for i, c in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == _OPEN:
            depth += 1
        elif c == _CLOSE:
            depth -= 1
            if depth < 0:
                raise ConfigError(f"{what} {spec!r}: ']' without '['")
        elif depth == 0:
            positions.append(i)
    if quote:
        raise ConfigError(f"{what} {spec!r}: unterminated quote")
    if depth:
        raise ConfigError(f"{what} {spec!r}: '[' without ']'")
    return positions


def _split(text: str, separator: str, spec: str, what: str) -> list[str]:
    """``text`` split at ``separator`` outside brackets and quotes; blank parts dropped."""
    cuts = [i for i in _outside(text, spec, what) if text[i] == separator]
    bounds = zip([-1, *cuts], [*cuts, len(text)])
    return [part for start, end in bounds if (part := text[start + 1 : end]).strip()]
