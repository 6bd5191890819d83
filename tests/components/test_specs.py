"""Spec strings: values kept intact (paths, URLs), unambiguous lists, errors that name the key, round trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.errors import ConfigError
from ragline.specs import format_spec, parse_spec


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("llm:model=openai:http://127.0.0.1:9/v1?model=x", ("llm", {"model": "openai:http://127.0.0.1:9/v1?model=x"})),
        ("llm:model=local:/m/b.gguf,max_tokens=64", ("llm", {"model": "local:/m/b.gguf", "max_tokens": 64})),
        ("hybrid:weights=0.5/0.5", ("hybrid", {"weights": [0.5, 0.5]})),
        ("hybrid:legs=[bm25:k1=1.2,b=0.3; dense]", ("hybrid", {"legs": ["bm25:k1=1.2,b=0.3", "dense"]})),
        ("x:names=[a, b]", ("x", {"names": ["a", "b"]})),
        ('x:text="a,b=c"', ("x", {"text": "a,b=c"})),
        ("x:code='007'", ("x", {"code": "007"})),
        ("x:n=nan", ("x", {"n": "nan"})),
        ("fixed:size=100,overlap=30", ("fixed", {"size": 100, "overlap": 30})),
    ],
)
def test_values_are_kept_intact(spec: str, expected: tuple) -> None:
    assert parse_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("x:a", "'a' is not key=value"),
        ("x:a=1,a=2", "key 'a' is given twice"),
        ("x:a=[1,2", "'\\[' without '\\]'"),
        ('x:a="open', "unterminated quote"),
        ("", "empty spec"),
        (":a=1", "no component name"),
    ],
)
def test_bad_specs_are_config_errors_naming_the_problem(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_spec(spec)


_values = st.recursive(
    st.one_of(
        st.integers(-(10**6), 10**6),
        st.floats(allow_nan=False, allow_infinity=False, width=32),
        st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12),
    ),
    lambda inner: st.lists(inner, min_size=1, max_size=3),
    max_leaves=6,
)


@given(st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), _values, max_size=4))
def test_format_spec_round_trips(params: dict) -> None:
    name, parsed = parse_spec(format_spec("comp", params))
    assert name == "comp"
    assert parsed == _normalize(params)


def _normalize(value):  # what a spec can say: lists of one string stay lists, numbers stay numbers
    if isinstance(value, dict):
        return {k: _normalize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    return value
