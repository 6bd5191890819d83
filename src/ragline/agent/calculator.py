"""A safe arithmetic evaluator for the agent's ``calculate`` tool: an AST whitelist, never ``eval``.

Accepted: numbers, ``+ - * / // % **``, unary ``+``/``-``, parentheses, a few functions (``abs``,
``round``, ``min``, ``max``, ``sqrt``, ``log``, ``exp``, ``floor``, ``ceil``) and constants (``pi``,
``e``). Everything else is refused with a ``ToolError`` that says what was found: names, attribute
access, calls of anything not whitelisted (``__import__('os')``), comprehensions, strings, subscripts.
Exponents and results are bounded, so ``9 ** 9 ** 9`` is refused instead of eating the machine.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from ragline.errors import RaglineError


class ToolError(RaglineError):
    """A tool call the agent cannot run: the observation it gets back instead of a result."""


MAX_EXPONENT = 1000  # |b| in a ** b
MAX_MAGNITUDE = 1e100  # any intermediate value
MAX_LENGTH = 500  # characters of an expression

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "log": math.log,
    "exp": math.exp,
    "floor": math.floor,
    "ceil": math.ceil,
}
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}


def calculate(expression: str) -> int | float:
    """The value of an arithmetic ``expression``; ``ToolError`` for anything outside the whitelist."""
    if not isinstance(expression, str) or not expression.strip():
        raise ToolError("calculate: empty expression; give arithmetic such as (1744 - 1705) * 2")
    if len(expression) > MAX_LENGTH:
        raise ToolError(f"calculate: expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as error:
        raise ToolError(f"calculate: not an arithmetic expression ({error.msg})") from None
    try:
        return _value(tree.body)
    except ToolError:
        raise
    except (ArithmeticError, ValueError, TypeError) as error:  # 1/0, sqrt(-1), round(1, 2, 3)
        raise ToolError(f"calculate: {type(error).__name__}: {error}") from None


def _value(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ToolError(f"calculate: only numbers are allowed, not {type(node.value).__name__} {node.value!r}")
        return _bounded(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ToolError(f"calculate: exponent {right} is larger than {MAX_EXPONENT}")
        if isinstance(node.op, ast.Pow) and abs(left) > 1 and abs(right) * math.log10(abs(left)) > 100:
            raise ToolError(f"calculate: {left} ** {right} is larger than {MAX_MAGNITUDE:g}")
        return _bounded(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _bounded(_UNARY[type(node.op)](_value(node.operand)))
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        raise ToolError(f"calculate: unknown name {node.id!r}; constants are {', '.join(CONSTANTS)}")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise ToolError(f"calculate: only the functions {', '.join(FUNCTIONS)} may be called")
        if node.keywords:
            raise ToolError("calculate: keyword arguments are not allowed")
        return _bounded(FUNCTIONS[node.func.id](*(_value(arg) for arg in node.args)))
    raise ToolError(f"calculate: {type(node).__name__} is not arithmetic (numbers, + - * / ** %, parentheses)")


def _bounded(value: Any) -> int | float:
    if isinstance(value, complex) or not isinstance(value, (int, float)):
        raise ToolError(f"calculate: the result {value!r} is not a real number")
    if abs(value) > MAX_MAGNITUDE or value != value:
        raise ToolError(f"calculate: a value is out of range (larger than {MAX_MAGNITUDE:g} or not a number)")
    return value
