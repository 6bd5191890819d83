"""The calculate tool: arithmetic by an AST whitelist, and every refusal the tool must make."""

from __future__ import annotations

import pytest

from ragline.agent.calculator import ToolError, calculate


@pytest.mark.parametrize(
    ("expression", "value"),
    [("1744 - 1705", 39), ("93 + 83", 176), ("(2 + 3) * 4", 20), ("2 ** 10", 1024), ("7 % 3", 1),
     ("-3 + +2", -1), ("10 / 4", 2.5), ("round(2.567, 2)", 2.57), ("max(3, 9, 4)", 9), ("sqrt(16)", 4.0),
     ("2 * pi", 6.283185307179586)],
)  # fmt: skip
def test_arithmetic_is_computed(expression: str, value: float) -> None:
    assert calculate(expression) == pytest.approx(value)


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("__import__('os')", "only the functions"),
        ("__import__('os').system('true')", "only the functions"),
        ("(1).real", "not arithmetic"),
        ("x + 1", "unknown name 'x'"),
        ("open", "unknown name"),
        ("[i for i in range(3)]", "not arithmetic"),
        ("sum(i for i in range(3))", "only the functions"),
        ("9 ** 9 ** 9", "exponent"),
        ("2 ** 5000", "exponent"),
        ("10 ** 200", "larger than"),
        ("'a' * 3", "only numbers"),
        ("True + 1", "only numbers"),
        ("lambda: 1", "not arithmetic"),
        ("1 / 0", "ZeroDivisionError"),
        ("1 +", "not an arithmetic expression"),
        ("max(*[1, 2])", "not arithmetic"),
        ("round(x=1)", "keyword"),
        ("", "empty"),
    ],
)
def test_anything_else_is_refused_with_a_reason(expression: str, says: str) -> None:
    with pytest.raises(ToolError) as refused:
        calculate(expression)
    assert says in str(refused.value)
