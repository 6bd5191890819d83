"""JSON replies: the schema subset ragline constrains models with, the parser of a reply, and its check.

A schema here is plain JSON Schema, in the subset that llama.cpp's grammar compiler and OpenAI's structured
outputs both accept: ``type`` (object, array, string, integer, number, boolean), ``properties`` with
``required`` and ``additionalProperties: false``, ``items``, ``enum``, ``minItems``/``maxItems``,
``minimum``/``maximum`` and ``maxLength``. :func:`check_value` checks a parsed reply against it, so a backend
that ignored the schema (a server without grammar support that let the request through) is caught here
rather than as a ``KeyError`` in a reader.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ragline.errors import ModelError

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


class JSONReplyError(ModelError):
    """A reply that should be JSON of a schema is not: malformed (cut by the token limit) or of another shape."""

    def __init__(self, message: str, reply: str) -> None:
        self.reply = reply
        super().__init__(message)


def parse_reply(reply: str, schema: Mapping[str, Any], model: str = "the model") -> Any:
    """``reply`` parsed as JSON and checked against ``schema``; :class:`JSONReplyError` naming the fault if not."""
    try:
        value = json.loads(reply)
    except ValueError as exc:
        raise JSONReplyError(
            f"{model} replied with malformed JSON ({exc.msg} at character {exc.pos}; cut by the token limit?): "
            f"{reply[:200]!r}",
            reply,
        ) from None
    problem = check_value(value, schema)
    if problem:
        raise JSONReplyError(f"{model} replied with JSON that does not match the schema: {problem}", reply)
    return value


def check_value(value: Any, schema: Mapping[str, Any], where: str = "$") -> str:
    """The first way ``value`` breaks ``schema`` (a path and a reason), or "" when it fits."""
    kind = schema.get("type")
    if kind is not None:
        allowed = _TYPES.get(kind)
        if allowed is None:
            return f"{where}: the schema's type {kind!r} is not one ragline checks"
        if not isinstance(value, allowed) or (kind in ("integer", "number") and isinstance(value, bool)):
            return f"{where}: expected {kind}, got {type(value).__name__}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where}: {value!r} is not one of {schema['enum']!r}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where}: {value} is below the minimum {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where}: {value} is above the maximum {schema['maximum']}"
    if isinstance(value, str) and "maxLength" in schema and len(value) > schema["maxLength"]:
        return f"{where}: a string of {len(value)} characters, longer than {schema['maxLength']}"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            return f"{where}: {len(value)} items, outside {schema.get('minItems', 0)}..{schema.get('maxItems', 'any')}"
        items = schema.get("items")
        for i, item in enumerate(value):
            problem = check_value(item, items, f"{where}[{i}]") if items else ""
            if problem:
                return problem
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in value:
                return f"{where}: the required key {key!r} is missing"
        for key, item in value.items():
            if key in properties:
                problem = check_value(item, properties[key], f"{where}.{key}")
                if problem:
                    return problem
            elif schema.get("additionalProperties") is False:
                return f"{where}: the key {key!r} is not in the schema"
    return ""


def tool_call_reply(reply: Any, url: str) -> str:
    """The first function call of an OpenAI chat completion as ``LLM.chat_tools`` returns it (JSON text of
    ``name``, ``arguments`` as the model wrote them, ``content``); ``ModelError`` when there is no message."""
    try:
        message = reply["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        function = calls[0]["function"] if calls else {}
        name, arguments = function.get("name"), function.get("arguments", "")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ModelError(f"{url} answered without choices[0].message: {json.dumps(reply)[:200]}") from None
    if not isinstance(arguments, str):  # some servers send the arguments as an object
        arguments = json.dumps(arguments, ensure_ascii=False)
    return json.dumps({"name": name, "arguments": arguments, "content": message.get("content") or ""})
