"""Metadata filters: the documented grammar, its semantics over columns, and filtering inside search
(before the top k are chosen, never after)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.errors import FilterSyntaxError, RaglineError
from ragline.index import Index, IndexSettings, parse_filter
from ragline.index.filters import And, Column, Compare, Not, Or, evaluate
from ragline.text import get_analyzer
from ragline.types import Document

# -- parsing -----------------------------------------------------------------------------------------------

a1, b2, c3 = Compare("a", "=", (1.0,)), Compare("b", "=", (2.0,)), Compare("c", "=", (3.0,))

VALID = [
    ("a = b", Compare("a", "=", ("b",))),
    ("a=b", Compare("a", "=", ("b",))),
    ("  a   =   b  ", Compare("a", "=", ("b",))),
    ("year >= 2024", Compare("year", ">=", (2024.0,))),
    ("year > 2024", Compare("year", ">", (2024.0,))),
    ("year < 2024", Compare("year", "<", (2024.0,))),
    ("year <= 2024", Compare("year", "<=", (2024.0,))),
    ("x = -1.5", Compare("x", "=", (-1.5,))),
    ("status != draft", Not(Compare("status", "=", ("draft",)))),
    ("acl in [hr, all]", Compare("acl", "in", ("hr", "all"))),
    ("acl in [hr]", Compare("acl", "in", ("hr",))),
    ("acl in[hr,all]", Compare("acl", "in", ("hr", "all"))),
    ("acl not in [hr, all]", Not(Compare("acl", "in", ("hr", "all")))),
    ("acl NOT IN [hr]", Not(Compare("acl", "in", ("hr",)))),
    ("acl in []", Compare("acl", "in", ())),  # no value: no document, as {"acl": []}
    ("year in [2023, 2024]", Compare("year", "in", (2023.0, 2024.0))),
    ("effective_date <= 2025-06-30", Compare("effective_date", "<=", ("2025-06-30",))),
    ('title = "Remote work"', Compare("title", "=", ("Remote work",))),
    ("title = 'Remote work'", Compare("title", "=", ("Remote work",))),
    ('year = "2024"', Compare("year", "=", ("2024",))),  # quoted: text, not a number
    ('"my field" = x', Compare("my field", "=", ("x",))),
    ('title = "say \\"hi\\""', Compare("title", "=", ('say "hi"',))),
    ("title = 'it\\'s'", Compare("title", "=", ("it's",))),
    ('title = "Café \\"Zürich\\" 数据"', Compare("title", "=", ('Café "Zürich" 数据',))),
    ('path = "C:\\\\x"', Compare("path", "=", ("C:\\x",))),
    ('title = "Café"', Compare("title", "=", ("Café",))),
    ("tag = C++", Compare("tag", "=", ("C++",))),
    ("a = 1 and b = 2", And((a1, b2))),
    ("a = 1 AND b = 2 And c = 3", And((a1, b2, c3))),
    ("a = 1 or b = 2 or c = 3", Or((a1, b2, c3))),
    ("a = 1 and b = 2 or c = 3", Or((And((a1, b2)), c3))),  # and binds tighter
    ("a = 1 or b = 2 and c = 3", Or((a1, And((b2, c3))))),
    ("a = 1 and (b = 2 or c = 3)", And((a1, Or((b2, c3))))),
    ("(a = 1)", a1),
    ("((a = 1))", a1),
    ("not a = 1", Not(a1)),
    ("NOT not a = 1", Not(Not(a1))),
    ("not a = 1 and b = 2", And((Not(a1), b2))),  # not binds tightest
    ("not (a = 1 and b = 2)", Not(And((a1, b2)))),
]


@pytest.mark.parametrize(("text", "tree"), VALID, ids=[t for t, _ in VALID])
def test_parse_valid(text: str, tree: Any) -> None:
    assert parse_filter(text) == tree


INVALID = [
    # (expression, position of the caret, words of the reason)
    ("a", 1, "operator"),
    ("a =", 3, "value"),
    ("= b", 0, "field name"),
    ("a = b and", 9, "field name"),
    ("a = b or", 8, "field name"),
    ("a = b and or c = d", 10, "field name"),
    ("(a = b", 6, "')'"),
    ("a = b)", 5, "unexpected ')'"),
    ("a = b c = d", 6, "unexpected 'c'"),
    ("a in hr", 5, "'['"),
    ("a in [hr", 8, "',' or ']'"),
    ("a in [hr,", 9, "value"),
    ("a in [,]", 6, "value"),
    ("a not = b", 6, "'in'"),
    ("a == b", 3, "value"),
    ("a < < b", 4, "value"),
    ("a ! b", 2, "unexpected character '!'"),
    ("a = b and c ! d", 12, "unexpected character '!'"),
    ("a = 'x", 4, "unterminated"),
    ('a = "x', 4, "unterminated"),
    ("()", 1, "field name"),
    ("not", 3, "field name"),
    ("[a] = b", 0, "field name"),
]


@pytest.mark.parametrize(("text", "position", "reason"), INVALID, ids=[t for t, _, _ in INVALID])
def test_parse_invalid(text: str, position: int, reason: str) -> None:
    with pytest.raises(FilterSyntaxError) as info:
        parse_filter(text)
    error = info.value
    assert error.expression == text
    assert error.position == position
    assert reason in str(error)
    # the message shows the expression and a caret under the position
    lines = str(error).splitlines()
    assert lines[1] == f"  {text}" and lines[2] == "  " + " " * position + "^"


@pytest.mark.parametrize("spec", [None, "", "   ", {}])
def test_empty_filters_mean_no_filter(spec: Any) -> None:
    assert parse_filter(spec) is None


@pytest.mark.parametrize("tree", [a1, Not(a1), And((a1, b2)), Or((a1, b2))])
def test_trees_pass_through(tree: Any) -> None:
    assert parse_filter(tree) is tree


DICTS = [
    ({"status": "draft"}, Compare("status", "=", ("draft",))),
    ({"acl": ["hr", "all"]}, Compare("acl", "in", ("hr", "all"))),
    ({"acl": ("hr",)}, Compare("acl", "in", ("hr",))),
    ({"status": "draft", "acl": ["hr"]}, And((Compare("status", "=", ("draft",)), Compare("acl", "in", ("hr",))))),
    ({"year": 2024}, Compare("year", "=", (2024,))),
]


@pytest.mark.parametrize(("spec", "tree"), DICTS)
def test_dict_filters(spec: dict, tree: Any) -> None:
    assert parse_filter(spec) == tree


# -- semantics over columns --------------------------------------------------------------------------------

METADATA = [
    {"acl": ["hr", "all"], "year": 2024, "date": "2025-01-15", "status": "draft", "flag": True, "score": 0.5},
    {"acl": ["eng"], "year": 2023, "date": "2025-06-30", "status": "final", "flag": False, "score": 2.5},
    {"acl": "all", "year": "2024", "date": "2024-12-31", "status": "Draft"},
    {"acl": [], "year": 2025.0, "code": "02139", "version": "1.10"},
    {},
    {"acl": ["hr", 7], "year": None, "status": "archived draft", "code": 7},
]
N = len(METADATA)


def mask(expression: Any) -> list[int]:
    columns: dict[str, Column] = {}

    def column(name: str) -> Column:
        if name not in columns:
            columns[name] = Column([m.get(name) for m in METADATA])
        return columns[name]

    node = parse_filter(expression)
    assert node is not None
    result = evaluate(node, column, N)
    assert result.dtype == bool and result.shape == (N,)
    return np.flatnonzero(result).tolist()


SEMANTICS = [
    # multi-valued ACL lists: any value matches
    ("acl = hr", [0, 5]),
    ("acl = all", [0, 2]),
    ("acl in [eng, all]", [0, 1, 2]),
    ("acl in [nobody]", []),
    ("acl not in [hr, all]", [1, 3, 4]),  # documents without the field (or an empty list) are kept
    ("not acl in [hr, all]", [1, 3, 4]),
    ("acl != all", [1, 3, 4, 5]),
    ("acl = 7", [5]),  # a number in a list
    # missing fields: no comparison holds, != and not keep them
    ("nothere = x", []),
    ("nothere != x", list(range(N))),
    ("nothere not in [x]", list(range(N))),
    ("nothere >= 0", []),
    ("year = 2024", [0, 2]),  # number: numeric 2024 and the text "2024"
    ('year = "2024"', [2]),  # quoted: text only
    ("year >= 2024", [0, 3]),  # ordering: numeric values only ("2024" the text is not ordered)
    ("year > 2023.5", [0, 3]),
    ("year < 2024", [1]),
    ("year <= 2024", [0, 1]),
    ("year in [2023, 2025]", [1, 3]),
    ("year != 2024", [1, 3, 4, 5]),
    ("score < 1", [0]),
    ("score = 2.5", [1]),
    # ISO dates are text, ordered lexicographically
    ("date <= 2025-06-30", [0, 1, 2]),
    ("date < 2025-06-30", [0, 2]),
    ("date > 2025-01-01 and date < 2025-12-31", [0, 1]),
    ("date >= 2026-01-01", []),
    # text equality is exact (case-sensitive, whole value)
    ("status = draft", [0]),
    ("status = Draft", [2]),
    ('status = "archived draft"', [5]),
    ("status in [draft, final]", [0, 1]),
    # booleans are stored as "true" / "false"
    ("flag = true", [0]),
    ("flag = false", [1]),
    ("flag != true", [1, 2, 3, 4, 5]),
    # combinations
    ("acl = hr and year = 2024", [0]),
    ("acl = hr or status = final", [0, 1, 5]),
    ("not (acl = hr or status = final)", [2, 3, 4]),
    ("(acl = eng or acl = all) and not year >= 2024", [1, 2]),
    # a number given as text keeps its text: "02139" and "1.10" are not 2139 and 1.1
    ("code = 7", [5]),
    ("code = 02139", [3]),
    ("version = 1.10", [3]),
]


@pytest.mark.parametrize(("expression", "rows"), SEMANTICS, ids=[e for e, _ in SEMANTICS])
def test_semantics(expression: str, rows: list[int]) -> None:
    assert mask(expression) == rows


DICT_SEMANTICS = [
    ({"acl": "hr"}, [0, 5]),
    ({"acl": ["eng", "all"]}, [0, 1, 2]),
    ({"acl": []}, []),
    ({"status": "draft", "acl": ["hr"]}, [0]),
    ({"year": 2024}, [0, 2]),  # an int, as Python code writes it
    ({"year": 2024.0}, [0, 2]),
    ({"year": [2023, 2025]}, [1, 3]),
    ({"flag": True}, [0]),
    ({"flag": False}, [1]),
    ({"nothere": "x"}, []),
]


@pytest.mark.parametrize(("spec", "rows"), DICT_SEMANTICS, ids=[str(s) for s, _ in DICT_SEMANTICS])
def test_dict_semantics(spec: dict, rows: list[int]) -> None:
    assert mask(spec) == rows


@pytest.mark.parametrize("values", [[], [None, None], [[], []]])
def test_empty_columns(values: list) -> None:
    column = Column(values)
    for op in ("=", "in", "<", "<=", ">", ">="):
        assert column.mask(op, ("x",)).tolist() == [False] * len(values)
        assert column.mask(op, (1.0,)).tolist() == [False] * len(values)
    assert evaluate(parse_filter("f != x"), lambda _: column, len(values)).tolist() == [True] * len(values)


# -- a reference implementation of the documented semantics ------------------------------------------------------


def _number_text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(v)


def _holds(op: str, a: Any, b: Any) -> bool:
    return {"=": a == b, "in": a == b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def reference(node: Any, meta: dict) -> bool:
    if isinstance(node, Not):
        return not reference(node.item, meta)
    if isinstance(node, And):
        return all(reference(i, meta) for i in node.items)
    if isinstance(node, Or):
        return any(reference(i, meta) for i in node.items)
    raw = meta.get(node.field)
    entries = [] if raw is None else list(raw) if isinstance(raw, list) else [raw]
    for value in node.values:
        for entry in entries:
            if isinstance(entry, bool):
                entry = "true" if entry else "false"
            if isinstance(value, float):
                if isinstance(entry, (int, float)):
                    if _holds(node.op, float(entry), value):
                        return True
                elif node.op in ("=", "in") and entry == _number_text(value):
                    return True
            elif isinstance(entry, str) and _holds(node.op, entry, value):
                return True
    return False


TEXTS = ["hr", "eng", "all", "2024", "2025-01-15", "2025-06-30", "draft", "Final", "a b"]
NUMBERS = [2023.0, 2024.0, 2025.0, 0.5, -1.0]
FIELDS = ["acl", "year", "date", "status", "nothere"]

values = st.one_of(st.sampled_from(TEXTS), st.sampled_from(NUMBERS))
comparisons = st.one_of(
    st.builds(
        lambda f, op, v: Compare(f, op, (v,)),
        st.sampled_from(FIELDS),
        st.sampled_from(["=", "<", "<=", ">", ">="]),
        values,
    ),
    st.builds(
        lambda f, vs: Compare(f, "in", tuple(vs)), st.sampled_from(FIELDS), st.lists(values, min_size=1, max_size=3)
    ),
)
trees = st.recursive(
    comparisons,
    lambda inner: st.one_of(
        st.builds(Not, inner),
        st.builds(lambda xs: And(tuple(xs)), st.lists(inner, min_size=2, max_size=3)),
        st.builds(lambda xs: Or(tuple(xs)), st.lists(inner, min_size=2, max_size=3)),
    ),
    max_leaves=6,
)
metadata_values = {
    "acl": st.one_of(st.none(), st.sampled_from(TEXTS), st.lists(st.sampled_from(TEXTS), max_size=3)),
    "year": st.one_of(st.none(), st.sampled_from([2023, 2024, 2025, "2024", 2024.5, True])),
    "date": st.one_of(st.none(), st.sampled_from(["2024-12-31", "2025-01-15", "2025-06-30", "2025-07-01"])),
    "status": st.one_of(st.none(), st.sampled_from(["draft", "Final", "a b", "2024"])),
}
metadata = st.fixed_dictionaries({}, optional=metadata_values).map(
    lambda m: {k: v for k, v in m.items() if v is not None}
)


def render(node: Any) -> str:
    """The expression text of a tree, in the documented syntax."""

    def value(v: str | float) -> str:
        if isinstance(v, float):
            return _number_text(v)
        return f'"{v}"' if " " in v or not _is_text(v) else v

    if isinstance(node, Not):
        return f"not ({render(node.item)})"
    if isinstance(node, (And, Or)):
        joiner = " and " if isinstance(node, And) else " or "
        return joiner.join(f"({render(i)})" for i in node.items)
    if node.op == "in":
        return f"{node.field} in [{', '.join(value(v) for v in node.values)}]"
    return f"{node.field} {node.op} {value(node.values[0])}"


def _is_text(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return True
    return False


@settings(max_examples=200, deadline=None)
@given(tree=trees)
def test_rendered_trees_parse_back(tree: Any) -> None:
    assert parse_filter(render(tree)) == tree


@settings(max_examples=150, deadline=None)
@given(tree=trees, metas=st.lists(metadata, max_size=12))
def test_column_semantics_match_reference(tree: Any, metas: list[dict]) -> None:
    columns = {f: Column([m.get(f) for m in metas]) for f in FIELDS}
    got = evaluate(tree, columns.__getitem__, len(metas))
    assert got.tolist() == [reference(tree, m) for m in metas]


# -- filters inside search -----------------------------------------------------------------------------------

WORDS = ["apple", "banana", "cherry", "date", "elder", "fig"]


def build(batches: list[list[tuple[str, dict]]], deletes: list[int], path: Path | None = None) -> Index:
    """An index of several segments (one per batch), with some rows deleted."""
    index = Index.create(path, IndexSettings(analyzer=get_analyzer("simple"), max_segments=100))
    n = 0
    for batch in batches:
        index.add([Document(f"d{n + i}", text, metadata=meta) for i, (text, meta) in enumerate(batch)])
        n += len(batch)
        index.commit()
    index.delete([f"d{i}" for i in deletes])
    index.commit()
    return index


texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
batches = st.lists(st.lists(st.tuples(texts, metadata), min_size=1, max_size=8), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=batches,
    deletes=st.lists(st.integers(0, 31), max_size=4),
    tree=trees,
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    k=st.integers(1, 6),
)
def test_filtered_search_is_top_k_of_allowed(
    batches: list, deletes: list[int], tree: Any, query: list[str], k: int
) -> None:
    index = build(batches, deletes)
    full = [(index.segments[si].ids[row], score) for si, row, score in index.search_terms(query, k=10_000)]
    allowed = {doc.id for doc in index.documents() if reference(tree, doc.metadata)}
    expected = [(doc_id, score) for doc_id, score in full if doc_id in allowed]
    for spec in (tree, render(tree)):
        got = index.search_ids(" ".join(query), k=k, filter=spec)
        assert all(doc_id in allowed for doc_id, _ in got)
        assert len(got) == min(k, len(expected))
        unfiltered = dict(full)
        for doc_id, score in got:  # the filter does not change scores ...
            assert score == pytest.approx(unfiltered[doc_id], rel=1e-6)
        # ... and the results are the best allowed documents (equal scores may be exchanged)
        assert [s for _, s in got] == pytest.approx([s for _, s in expected[:k]], rel=1e-6)
        cut = expected[k - 1][1] if len(expected) >= k else -math.inf
        assert {d for d, s in expected if s > cut * (1 + 1e-6)} <= {d for d, _ in got}


def test_filter_is_applied_before_top_k() -> None:
    # d0..d2 are the best matches for "apple" but not allowed; d3..d6 are allowed and match less well.
    rows = [("apple apple apple", {"acl": "secret"})] * 3 + [("apple banana cherry date", {"acl": ["all", "hr"]})] * 4
    rows += [("banana", {"acl": "all"})] * 5  # allowed but does not match
    index = build([rows[:6], rows[6:]], deletes=[])
    top = index.search_ids("apple", k=3)
    assert [d for d, _ in top] == ["d0", "d1", "d2"]
    for spec in ("acl = all", "acl in [all]", {"acl": "all"}, "not acl = secret", {"acl": ["all", "nobody"]}):
        got = index.search_ids("apple", k=3, filter=spec)
        assert len(got) == 3, spec
        assert {d for d, _ in got} <= {"d3", "d4", "d5", "d6"}
    assert index.search_ids("apple", k=10, filter="acl = nobody") == []
    hits = index.search("apple", k=3, filter="acl = hr")
    assert [h.rank for h in hits] == [1, 2, 3] and all("hr" in h.metadata["acl"] for h in hits)


def test_filter_skips_deleted_rows_and_spans_segments(tmp_path: Path) -> None:
    rows = [(f"apple {'banana ' * i}", {"group": "a" if i % 2 else "b"}) for i in range(10)]
    for path in (None, tmp_path / "ix"):
        index = build([rows[:4], rows[4:7], rows[7:]], deletes=[1, 5], path=path)
        if path is not None:
            index.close()
            index = Index.open(path)  # metadata read back from disk
        got = {d for d, _ in index.search_ids("apple", k=100, filter="group = a")}
        assert got == {"d3", "d7", "d9"}
        assert {d for d, _ in index.search_ids("apple", k=100, filter="group != a")} == {"d0", "d2", "d4", "d6", "d8"}


def test_filter_errors_surface_from_search() -> None:
    index = build([[("apple", {})]], deletes=[])
    with pytest.raises(FilterSyntaxError):
        index.search("apple", filter="acl in hr")


@pytest.mark.parametrize("spec", [None, "", {}])
def test_no_filter_equals_unfiltered(spec: Any) -> None:
    index = build([[("apple", {"a": 1}), ("apple banana", {})]], deletes=[])
    assert index.search_ids("apple", filter=spec) == index.search_ids("apple")


def test_a_failing_filter_leaves_later_searches_intact() -> None:
    """A search that fails half-way (here: a filter that cannot be evaluated) must not poison later ones."""
    index = build([[("apple pie", {"acl": "x"}), ("apple apple", {})], [("apple", {"acl": "y"})]], deletes=[])
    before = {q: index.search_ids(q, k=10) for q in ("apple", "pie")}
    with pytest.raises((TypeError, RaglineError)):
        index.search_ids("apple", filter={"acl": [["x"]]})  # a list inside the list of values
    assert {q: index.search_ids(q, k=10) for q in ("apple", "pie")} == before
