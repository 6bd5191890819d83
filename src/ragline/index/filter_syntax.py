"""The filter language: expression trees, parsing, rendering and the access-control restriction.

Grammar (keywords are case-insensitive)::

    expr       := term ("or" term)*
    term       := factor ("and" factor)*
    factor     := "not" factor | "(" expr ")" | comparison
    comparison := FIELD op VALUE | FIELD "in" "[" VALUE ("," VALUE)* "]" | FIELD "not" "in" "[" ... "]"
    op         := "=" | "!=" | "<" | "<=" | ">" | ">="

Examples: ``acl in [hr, all]``, ``year >= 2024 and not status = draft``, ``title = "Remote work"``.
``field in []`` matches no document (as the mapping ``{field: []}`` does). Parentheses and ``not``
nest at most ``MAX_NESTING`` (64) levels, and a tree built in Python at most ``MAX_TREE_DEPTH`` (200):
deeper filters are rejected with an error, never a ``RecursionError``.

Semantics, chosen so that ACL lists work: a field may hold one value or a list; a comparison holds
when **any** value satisfies it. A document without the field satisfies no comparison, so
``field != v`` is ``not field = v`` and keeps documents without the field. A VALUE that parses as a
number is compared numerically with numeric values (and, for ``=`` and ``in``, textually with
text values); quote it ("2024") to compare text only. Ordering comparisons on text are lexicographic, which is right for
ISO dates (``effective_date <= 2025-06-30``).

Evaluation over a segment's metadata columns is ``ragline.index.filters``.

Access control is a tree, never text: ``acl_filter(groups)`` is the restriction of a caller in
``groups`` (group names are values, whatever characters they hold), and ``restrict(user_filter,
restriction)`` joins it to the caller's own filter as ``And(user_filter, restriction)``, so no user
filter can widen what the restriction allows.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Union

from ragline.errors import ConfigError, FilterSyntaxError

# --- the expression tree -------------------------------------------------------------------------


@dataclass(frozen=True)
class Compare:
    field: str
    op: str  # one of = != < <= > >= in
    values: tuple[str | float, ...]


@dataclass(frozen=True)
class And:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    item: Node


Node = Union[Compare, And, Or, Not]

MAX_NESTING = 64  # parentheses and "not" in a filter text
# Trees are walked (hashed, compared, evaluated) recursively, about two frames a level; a parsed text
# at MAX_NESTING is at most ~2 * 64 levels deep, plus one for an ACL restriction.
MAX_TREE_DEPTH = 200

# --- parsing ---------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    | (?P<op><=|>=|!=|=|<|>)
    | (?P<punct>[\[\](),])
    | (?P<word>[^\s\[\](),=<>!"']+)
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not", "in"}


_SPACE = re.compile(r"\s*")


def _lex(text: str) -> list[tuple[str, str, int]]:
    tokens, pos = [], 0
    while pos < len(text):
        if _SPACE.match(text, pos).end() == len(text):  # type: ignore[union-attr]
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # the character, not the space before
            reason = "unterminated string" if text[pos] in "\"'" else f"unexpected character {text[pos]!r}"
            raise FilterSyntaxError(text, pos, reason)
        kind = m.lastgroup or ""
        value = m.group(kind)
        start = m.start(kind)
        if kind == "word" and value.lower() in _KEYWORDS:
            kind, value = "kw", value.lower()
        tokens.append((kind, value, start))
        pos = m.end()
    return tokens


_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPED = {"n": "\n", "t": "\t"}


def _literal(kind: str, raw: str) -> str | float:
    if kind == "str":
        # A backslash escapes the next character (\n and \t are a newline and a tab); other text is kept
        # as is, non-ASCII included.
        return _ESCAPE.sub(lambda m: _ESCAPED.get(m.group(1), m.group(1)), raw[1:-1])
    try:
        return Number(raw)
    except ValueError:
        return raw


class Number(float):
    """A number as written in a filter: compared as a number, and as its own text ("02139", "1.10")."""

    text: str

    def __new__(cls, raw: str) -> Number:
        if raw.lower() in ("nan", "inf", "-inf", "infinity", "+inf"):
            raise ValueError(raw)  # words, not numbers, in a filter
        number = super().__new__(cls, raw)
        number.text = raw
        return number

    # Filters are cache keys: "02139" and "2139" must stay different keys although equal as floats.
    def __eq__(self, other: object) -> bool:
        return self.text == other.text if isinstance(other, Number) else float(self) == other

    def __hash__(self) -> int:
        return float.__hash__(self)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.tokens, self.i = text, _lex(text), 0
        self.nesting = 0

    def fail(self, reason: str, pos: int | None = None) -> FilterSyntaxError:
        if pos is None:
            pos = self.tokens[self.i][2] if self.i < len(self.tokens) else len(self.text)
        return FilterSyntaxError(self.text, pos, reason)

    def nest(self, opener: tuple[str, str, int]) -> None:
        # The parser recurses once per level: bound it before Python's stack is the limit.
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise self.fail(f"parentheses and 'not' nest more than {MAX_NESTING} levels here", opener[2])

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, kind: str, value: str | None = None) -> tuple[str, str, int] | None:
        tok = self.peek()
        if tok and tok[0] == kind and (value is None or tok[1] == value):
            self.i += 1
            return tok
        return None

    def parse(self) -> Node:
        if not self.tokens:
            raise self.fail("empty filter")
        node = self.expr()
        if self.peek():
            raise self.fail(f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return node

    def expr(self) -> Node:
        items = [self.term()]
        while self.take("kw", "or"):
            items.append(self.term())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def term(self) -> Node:
        items = [self.factor()]
        while self.take("kw", "and"):
            items.append(self.factor())
        return items[0] if len(items) == 1 else And(tuple(items))

    def factor(self) -> Node:
        if opener := self.take("kw", "not"):
            self.nest(opener)
            node: Node = Not(self.factor())
        elif opener := self.take("punct", "("):
            self.nest(opener)
            node = self.expr()
            if not self.take("punct", ")"):
                raise self.fail("expected ')'")
        else:
            return self.comparison()
        self.nesting -= 1
        return node

    def comparison(self) -> Node:
        field = self.take("word") or self.take("str")
        if not field:
            raise self.fail("expected a field name")
        name = str(_literal(field[0], field[1])) if field[0] == "str" else field[1]
        negate = bool(self.take("kw", "not"))
        if self.take("kw", "in"):
            node: Node = Compare(name, "in", self.value_list())
            return Not(node) if negate else node
        if negate:
            raise self.fail("expected 'in' after 'not'")
        op = self.take("op")
        if not op:
            raise self.fail(f"expected an operator (=, !=, <, <=, >, >=, in) after {name!r}")
        value = self.value()
        if op[1] == "!=":
            return Not(Compare(name, "=", (value,)))
        return Compare(name, op[1], (value,))

    def value(self) -> str | float:
        tok = self.take("word") or self.take("str") or self.take("kw")
        if not tok:
            raise self.fail("expected a value")
        return _literal(tok[0], tok[1])

    def value_list(self) -> tuple[str | float, ...]:
        if not self.take("punct", "["):
            raise self.fail("expected '[' to start a list")
        if self.take("punct", "]"):
            return ()  # matches nothing, like {field: []}
        values = [self.value()]
        while self.take("punct", ","):
            values.append(self.value())
        if not self.take("punct", "]"):
            raise self.fail("expected ',' or ']'")
        return tuple(values)


FilterLike = Union[str, Mapping[str, Any], Node, None]


def acl_filter(groups: Sequence[str]) -> Node:
    """The restriction of a caller in ``groups``: documents whose ``acl`` holds one of the groups.

    Each name is a value, never filter text: brackets, quotes, commas and words like ``or`` are
    part of the name. No groups (an empty list) allows no document. A name that is the plain text of
    a number ("2024", "7") also matches that number, since YAML front matter reads ``acl: [2024]``
    as one; any other name ("02024", "1_000", "2024.0") matches only the same text.
    """
    if isinstance(groups, str):
        raise ConfigError(f"ACL groups are a list of names, not the text {groups!r}: pass [{groups!r}]")
    values: list[str | float] = []
    for group in groups:
        if not isinstance(group, str):
            raise ConfigError(f"ACL group {group!r} is a {type(group).__name__}; group names are text")
        values.append(_canonical_number(group) or group)
    return Compare("acl", "in", tuple(values))


def _canonical_number(text: str) -> float | None:
    # A plain float matches stored numbers and, for "in", the text number_text gives it: exactly
    # `text` when `text` is how that number is written, so the match stays one of names.
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) and number_text(number) == text else None


def restrict(user: FilterLike, restriction: Node | None) -> Node | None:
    """``user``'s filter joined to a caller's ``restriction`` (e.g. ``acl_filter``): both must hold.

    ``restriction=None`` means none (the caller gave no groups), not "nothing visible".
    """
    node = parse_filter(user)
    if restriction is None:
        return node
    return restriction if node is None else And((node, restriction))


def filter_text(spec: FilterLike) -> str | None:
    """A filter as text for reports: a string as given, a tree in the syntax it parses back from."""
    if spec is None or isinstance(spec, str):
        return spec
    node = parse_filter(spec)
    return None if node is None else _render(node)


def _render(node: Node) -> str:
    # Parentheses only where the grammar needs them, so that the text of a parsed filter nests no deeper
    # than the filter did: "and" binds tighter than "or", and a nested And in an And (Or in an Or) is
    # kept apart so that the text parses back to the same tree, not a flattened one.
    if isinstance(node, Compare):
        plain = re.fullmatch(r"[A-Za-z_][\w.\-]*", node.field) and node.field.lower() not in _KEYWORDS
        field = node.field if plain else _quote(node.field)
        values = ", ".join(_render_value(v) for v in node.values)
        return f"{field} in [{values}]" if node.op == "in" else f"{field} {node.op} {values}"
    if isinstance(node, Not):
        inner = _render(node.item)
        return f"not ({inner})" if isinstance(node.item, (And, Or)) else f"not {inner}"
    if not node.items:
        return _EMPTY[type(node)]
    joiner = " and " if isinstance(node, And) else " or "
    bracketed = (And, Or) if isinstance(node, And) else (Or,)
    return joiner.join(f"({_render(i)})" if isinstance(i, bracketed) else _render(i) for i in node.items)


_EMPTY = {And: "not a in []", Or: "a in []"}  # an empty And holds for every document, an empty Or for none


def _render_value(value: str | float) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Number):
        return value.text
    if isinstance(value, (int, float)):
        return number_text(float(value))
    return _quote(value)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@lru_cache(maxsize=1024)
def _parse_text(text: str) -> Node:
    # A service sees the same few filters (a user's ACL groups) over and over; parse each once.
    return _Parser(text).parse()


def parse_filter(spec: FilterLike) -> Node | None:
    """A filter tree from an expression string, a ``{field: value or [values]}`` mapping, or a tree."""
    if spec is None:
        return None
    if isinstance(spec, (Compare, And, Or, Not)):
        check_tree(spec)
        return spec
    if isinstance(spec, str):
        return _parse_text(spec) if spec.strip() else None
    items: list[Node] = []
    for field, value in spec.items():
        if isinstance(value, Sequence) and not isinstance(value, str):
            items.append(Compare(field, "in", tuple(value)))
        else:
            items.append(Compare(field, "=", (value,)))
    return items[0] if len(items) == 1 else And(tuple(items)) if items else None


def check_tree(node: Node) -> None:
    """Raise ``ConfigError`` unless ``node`` is a tree of filter nodes at most ``MAX_TREE_DEPTH`` deep.

    Iterative, so that a tree too deep for the recursive walks is reported, not overflowed.
    """
    heights: dict[int, int] = {}  # by id: a subtree shared by several parents is measured once
    stack: list[tuple[Any, bool]] = [(node, False)]
    while stack:
        item, children_done = stack.pop()
        if id(item) in heights:
            continue
        if isinstance(item, Compare):
            heights[id(item)] = 1
            continue
        if isinstance(item, Not):
            children: tuple[Any, ...] = (item.item,)
        elif isinstance(item, (And, Or)):
            children = item.items
        else:
            raise ConfigError(f"a filter tree holds {item!r:.80}, which is none of Compare, And, Or, Not")
        if not children_done:
            stack.append((item, True))
            stack.extend((child, False) for child in children if id(child) not in heights)
            continue
        height = heights[id(item)] = 1 + max((heights[id(c)] for c in children), default=0)
        if height > MAX_TREE_DEPTH:
            raise ConfigError(
                f"a filter tree nests more than {MAX_TREE_DEPTH} levels; write the condition flatter "
                "(an 'in' list or one And/Or of many items instead of nested pairs)"
            )


def number_text(value: float) -> str:
    """A number as the filter language writes it: 2024, not 2024.0."""
    return str(int(value)) if value.is_integer() else repr(value)
