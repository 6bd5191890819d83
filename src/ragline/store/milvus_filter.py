"""Filters (``ragline.index.filters``) compiled to Milvus boolean expressions, with the same semantics.

Metadata is stored in Milvus in a form the expressions can question exactly as ``filters.Column`` does
(``encode_metadata``): per field, the numbers and the texts it holds (a list is its elements; booleans
are the texts "true"/"false"), and the least and greatest of each, in a JSON field ``meta``::

    meta = {"n": {field: [numbers]}, "s": {field: [texts]},
            "nlo": {field: min}, "nhi": {field: max}, "slo": {field: min}, "shi": {field: max}}

A comparison holds when any element satisfies it: ``=``/``in`` is ``json_contains_any``; ``f < v`` holds
when the least element is below v (``>``: the greatest above). Text values of ``acl`` also live in an
ARRAY field, so ACL restrictions compile to ``array_contains_any(acl, [...])``. Every comparison is
guarded by ``exists``: Milvus compares a missing key as unknown, which ``not`` would keep unknown,
whereas here a document without the field satisfies no comparison and so satisfies its negation.
A filter this module cannot express (a field name Milvus cannot quote) raises ``ConfigError``.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

from ragline.errors import ConfigError
from ragline.index.filters import And, Compare, FilterLike, Not, Number, Or, number_text, parse_filter

ACL_FIELD = "acl"
TRUE, FALSE = "not (id in [])", "id in []"  # Milvus has no boolean literals
_FIELD_NAME = re.compile(r"[^\"\\\x00-\x1f]{1,256}")  # a JSON key Milvus parses inside meta["..."]
_LARGEST = sys.float_info.max


def _values(value: Any) -> tuple[list[float], list[str]]:
    """The numbers and texts a metadata value holds, as ``filters.Column`` reads them."""
    numbers, texts = [], []
    for v in value if isinstance(value, (list, tuple)) else () if value is None else (value,):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            number = float(v)
            if math.isnan(number):
                continue  # NaN satisfies no comparison
            numbers.append(max(-_LARGEST, min(_LARGEST, number)))  # JSON has no infinity; order is kept
        else:
            texts.append(str(v).lower() if isinstance(v, bool) else str(v))
    return numbers, texts


def encode_metadata(metadata: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``meta`` (see the module docstring) and the ``acl`` array (its text values) of one document."""
    meta: dict[str, dict[str, Any]] = {key: {} for key in ("n", "s", "nlo", "nhi", "slo", "shi")}
    acl: list[str] = []
    for field, value in metadata.items():
        numbers, texts = _values(value)
        if numbers:
            meta["n"][field], meta["nlo"][field], meta["nhi"][field] = numbers, min(numbers), max(numbers)
        if texts:
            meta["s"][field], meta["slo"][field], meta["shi"][field] = texts, min(texts), max(texts)
            if field == ACL_FIELD:
                acl = texts
    return meta, acl


def to_milvus_expr(spec: FilterLike) -> str | None:
    """The Milvus expression of a filter (None for no filter)."""
    node = parse_filter(spec)
    return None if node is None else _compile(node)


def _compile(node: Any) -> str:
    if isinstance(node, Compare):
        return _compare(node)
    if isinstance(node, Not):
        return f"not ({_compile(node.item)})"
    if not node.items:
        return TRUE if isinstance(node, And) else FALSE
    joiner = " and " if isinstance(node, And) else " or "
    assert isinstance(node, (And, Or))
    return joiner.join(f"({_compile(item)})" for item in node.items)


def _key(group: str, field: str) -> str:
    return f'meta["{group}"][{_literal(field)}]'


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(float(value))


def _compare(node: Compare) -> str:
    if not _FIELD_NAME.fullmatch(node.field):
        raise ConfigError(
            f"filter field {node.field!r} cannot be expressed for Milvus (quotes, backslashes and control "
            "characters are not allowed in field names there); rename the metadata field"
        )
    numbers: list[float] = []
    texts: list[str] = []
    parts: list[str] = []
    for value in node.values:
        if isinstance(value, bool):
            value = str(value).lower()
        elif isinstance(value, int):
            value = float(value)
        if isinstance(value, float):
            if math.isnan(value):
                continue
            if node.op in ("=", "in"):
                numbers.append(value)
                texts.append(value.text if isinstance(value, Number) else number_text(value))
            else:
                parts.append(_ordered("n", node.field, node.op, float(value)))
        elif isinstance(value, str):
            if node.op in ("=", "in"):
                texts.append(value)
            else:
                parts.append(_ordered("s", node.field, node.op, value))
        else:
            raise ConfigError(f"filter value {value!r} for {node.field!r} is neither text nor a number")
    if numbers:
        key = _key("n", node.field)
        parts.append(f"(exists {key} and json_contains_any({key}, [{', '.join(map(_literal, numbers))}]))")
    if texts:
        listed = ", ".join(_literal(t) for t in dict.fromkeys(texts))
        if node.field == ACL_FIELD:
            parts.append(f"array_contains_any({ACL_FIELD}, [{listed}])")
        else:
            key = _key("s", node.field)
            parts.append(f"(exists {key} and json_contains_any({key}, [{listed}]))")
    return " or ".join(parts) if parts else FALSE


def _ordered(kind: str, field: str, op: str, value: float | str) -> str:
    # Any element < v (or <=) exactly when the least one is; any element > v (or >=) when the greatest is.
    key = _key(f"{kind}lo" if op in ("<", "<=") else f"{kind}hi", field)
    return f"(exists {key} and {key} {op} {_literal(value)})"
