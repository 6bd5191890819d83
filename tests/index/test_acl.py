"""Access control through filters: a caller's groups are a filter tree joined to the caller's own filter,
so no group name and no filter text can widen what the groups allow; filter depth is bounded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ragline.cli import main
from ragline.errors import ConfigError, FilterSyntaxError
from ragline.index import Index, IndexSettings, parse_filter
from ragline.index.filters import (
    MAX_NESTING,
    MAX_TREE_DEPTH,
    And,
    Column,
    Compare,
    Not,
    Or,
    acl_filter,
    evaluate,
    filter_text,
    restrict,
)
from ragline.text import get_analyzer
from ragline.types import Document

# -- the two reproductions, through the command line ---------------------------------------------------------

SECRET = "E-4471"


@pytest.fixture
def acl_index(tmp_path: Path) -> str:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "salary.md").write_text(
        f"---\nacl: [hr]\n---\n# Executive salary\n\nThe approval code for the executive salary is {SECRET}."
    )
    (root / "bonus.md").write_text("---\nacl: [hr]\n---\n# Bonus\n\nThe executive bonus approval needs the board.")
    (root / "travel.md").write_text("---\nacl: [all]\n---\n# Travel\n\nThe approval code for travel is the trip id.")
    (root / "domain.md").write_text('---\nacl: ["Domain Users"]\n---\n# Printers\n\nThe approval code for printers.')
    (root / "oneil.md").write_text("---\nacl: ['o\"neil', 'a,b']\n---\n# Desk\n\nThe approval code for a desk.")
    index = str(tmp_path / "idx")
    assert main(["index", str(root), "--index", index, "--embedder", "none", "--output", "json"]) == 0
    return index


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict | None]:
    capsys.readouterr()
    code = main([*argv, "--output", "json"])
    out = capsys.readouterr().out.strip()
    return code, json.loads(out) if code == 0 else None


QUESTION = "What is the approval code for the executive salary?"


def search_ids(capsys: pytest.CaptureFixture[str], index: str, *flags: str) -> list[str]:
    code, payload = run(capsys, "search", QUESTION, "--index", index, *flags)
    assert code == 0 and payload is not None
    return [h["doc_id"] for h in payload["hits"]]


def ask(capsys: pytest.CaptureFixture[str], index: str, *flags: str) -> tuple[int, dict | None]:
    return run(capsys, "ask", QUESTION, "--index", index, "--reader", "extractive", *flags)


def test_everything_is_found_without_groups(capsys, acl_index: str) -> None:
    # the fixture is right: without a restriction the hr documents are the best matches
    assert search_ids(capsys, acl_index)[:1] == ["salary"]


def test_a_group_name_cannot_splice_in_another_group(capsys, acl_index: str) -> None:
    hostile = "all] or acl in [hr"
    assert search_ids(capsys, acl_index, "--groups", hostile) == []  # a group of that name holds nothing
    code, payload = ask(capsys, acl_index, "--groups", hostile)
    assert code == 0 and payload is not None
    assert payload["citations"] == [] and SECRET not in json.dumps(payload)
    assert payload["provenance"]["filter"] == 'acl in ["all] or acl in [hr"]'


def test_a_user_filter_cannot_break_out_of_the_groups(capsys, acl_index: str) -> None:
    breakout = "acl = hr) or (acl = hr"
    code, _ = ask(capsys, acl_index, "--filter", breakout, "--groups", "all")
    assert code == 2  # not a filter: an error, not a wider view
    assert search_ids(capsys, acl_index, "--filter", "acl = hr", "--groups", "all") == []
    assert search_ids(capsys, acl_index, "--filter", "acl = hr or acl = all", "--groups", "all") == ["travel"]
    code, payload = ask(capsys, acl_index, "--filter", "(acl = hr) or (acl = hr)", "--groups", "all")
    assert code == 0 and payload is not None and SECRET not in json.dumps(payload)
    assert {c["doc_id"] for c in payload["citations"]} <= {"travel"}


def test_group_names_are_values(capsys, acl_index: str) -> None:
    assert search_ids(capsys, acl_index, "--groups", "Domain Users") == ["domain"]
    assert search_ids(capsys, acl_index, "--groups", 'o"neil') == ["oneil"]
    assert search_ids(capsys, acl_index, "--group", "a,b") == ["oneil"]  # --group keeps its commas
    assert search_ids(capsys, acl_index, "--groups", "a,b") == []  # --groups splits: groups a and b
    both = search_ids(capsys, acl_index, "--groups", " all , Domain Users,", "--group", "hr")
    assert set(both) == {"travel", "domain", "salary", "bonus"}


def test_groups_that_name_no_group_see_nothing(capsys, acl_index: str) -> None:
    assert search_ids(capsys, acl_index, "--groups", "") == []
    assert search_ids(capsys, acl_index, "--groups", " , ") == []


# -- acl_filter and restrict ---------------------------------------------------------------------------------


def mask(node: Any, metas: list[dict]) -> list[int]:
    columns = {f: Column([m.get(f) for m in metas]) for f in {"acl", "year"}}
    return np.flatnonzero(evaluate(node, lambda f: columns.get(f) or Column([None] * len(metas)), len(metas))).tolist()


STORED = [{"acl": [2024]}, {"acl": "2024"}, {"acl": ["02024"]}, {"acl": [10]}, {"acl": ["1_0"]}, {"acl": [0.5]}, {}]


@pytest.mark.parametrize(
    ("groups", "visible"),
    [
        (["2024"], [0, 1]),  # the text of a number also matches the number (YAML reads acl: [2024] as one)
        (["02024"], [2]),  # any other spelling only the same text
        (["1_0"], [4]),  # float("1_0") is 10, but the group is the text "1_0"
        (["10"], [3]),
        (["2024.0"], []),
        (["0.5"], [5]),
        (["nan", "inf"], []),
        ([], []),
    ],
)
def test_group_names_match_stored_values_by_text(groups: list[str], visible: list[int]) -> None:
    assert mask(acl_filter(groups), STORED) == visible


def test_acl_filter_takes_a_list_of_names() -> None:
    with pytest.raises(ConfigError, match="list of names"):
        acl_filter("hr")  # would be the groups "h" and "r"
    with pytest.raises(ConfigError, match="text"):
        acl_filter([2024])  # type: ignore[list-item]


def test_restrict_joins_trees() -> None:
    r = acl_filter(["hr"])
    assert restrict(None, None) is None
    assert restrict("a = 1", None) == parse_filter("a = 1")
    assert restrict(None, r) == r and restrict("", r) == r
    assert restrict("a = 1 or b = 2", r) == And((parse_filter("a = 1 or b = 2"), r))


# -- the property: whatever the names and the filter, nothing outside the groups ------------------------------

HOSTILE = [
    "all] or acl in [hr", "hr", "all", "Domain Users", 'o"neil', "o'neil", "a,b", "[", "]", "(", ")", "or", "not",
    "and", "in", "acl", "acl = hr", '"', "\\", "\\n", "", " ", "2024", "02024", "Zürich 数据", "\n", "x) or (acl = hr",
]  # fmt: skip
group_names = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=8))
stored_acl = st.one_of(
    st.none(),
    st.sampled_from([*HOSTILE, 2024, 7]),
    st.lists(st.one_of(st.sampled_from([*HOSTILE, 2024]), st.text(max_size=4)), max_size=3),
)
FILTER_TOKENS = [
    "acl", "year", "=", "!=", "<", ">=", "in", "not", "and", "or", "(", ")", "[", "]", ",", "hr", "all", "2024",
    '"hr"', "'all] or acl in [hr'", '"Domain Users"',
]  # fmt: skip
token_soup = st.lists(st.sampled_from(FILTER_TOKENS), max_size=12).map(" ".join)
leaf = st.builds(
    lambda field, values: Compare(field, "in", tuple(values)),
    st.sampled_from(["acl", "year"]),
    st.lists(st.one_of(group_names, st.sampled_from([2024.0, 7.0])), max_size=3),
)
trees = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.builds(Not, inner),
        st.builds(lambda xs: And(tuple(xs)), st.lists(inner, max_size=3)),
        st.builds(lambda xs: Or(tuple(xs)), st.lists(inner, max_size=3)),
    ),
    max_leaves=6,
)
user_filters = st.one_of(st.none(), token_soup, trees.map(filter_text))


def readable(acl: Any, groups: list[str]) -> bool:
    """The reference: a document is visible when one of its acl values, as text, is one of the groups."""
    values = acl if isinstance(acl, list) else [] if acl is None else [acl]
    texts = {str(int(v)) if isinstance(v, (int, float)) and float(v).is_integer() else str(v) for v in values}
    return bool(texts & set(groups))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    acls=st.lists(stored_acl, max_size=10),
    groups=st.lists(group_names, max_size=4),
    user=user_filters,
)
@example(acls=[[""]], groups=["\x00"], user=None)  # numpy's str compare drops trailing NULs: "\x00" == ""
@example(acls=[], groups=["hr\x00"], user=None)  # ... and "hr\x00" == "hr": the hr document read
@example(acls=[], groups=["all] or acl in [hr"], user=None)
@example(acls=[], groups=["all"], user="acl = hr) or (acl = hr")
@example(acls=[], groups=["all"], user="(acl = hr) or (acl = hr)")
def test_no_document_outside_the_groups_is_ever_returned(acls: list, groups: list[str], user: str | None) -> None:
    index = Index.create(None, IndexSettings(analyzer=get_analyzer("simple")))
    acls = [["hr"], ["all"], None, *acls]  # an hr-only, a public and an unlabelled document, always
    docs = [Document(f"d{i}", "apple", metadata={} if acl is None else {"acl": acl}) for i, acl in enumerate(acls)]
    index.add(docs)
    index.commit()
    try:
        combined = restrict(user, acl_filter(groups))
    except FilterSyntaxError:
        return  # text that is no filter is an error, never a wider view
    got = {doc_id for doc_id, _ in index.search_ids("apple", k=100, filter=combined)}
    allowed = {d.id for d in docs if readable(d.metadata.get("acl"), groups)}
    assert got <= allowed
    if user is None:
        assert got == allowed  # and every name, whatever it holds, finds the documents of that exact name
    # the text reported for the combined filter parses back to the same tree
    assert parse_filter(filter_text(combined)) == combined


# -- documents without an acl ---------------------------------------------------------------------------------


def test_default_acl_is_a_stamped_setting() -> None:
    settings_ = IndexSettings(default_acl=("all",))
    assert settings_.to_dict()["default_acl"] == ["all"]
    assert IndexSettings.from_dict(settings_.to_dict()) == settings_
    old = IndexSettings().to_dict()
    del old["default_acl"]  # manifests written before the setting existed
    assert IndexSettings.from_dict(old).default_acl is None


@pytest.mark.parametrize("path", [None, "ix"])
def test_default_acl_is_given_to_documents_without_one(tmp_path: Path, path: str | None) -> None:
    where = tmp_path / path if path else None
    plain, own = Document("plain", "apple"), Document("own", "apple", metadata={"acl": ["hr"]})
    null, empty = Document("null", "apple", metadata={"acl": None}), Document("empty", "apple", metadata={"acl": []})
    index = Index.create(where, IndexSettings(analyzer=get_analyzer("simple"), default_acl=("all", "Domain Users")))
    index.add([plain, own, null, empty])
    index.commit()
    if where is not None:
        index.close()
        index = Index.open(where)
    assert plain.metadata == {}  # the caller's document is not changed
    stamped = ["all", "Domain Users"]
    acls = {d.id: d.metadata["acl"] for d in index.documents()}
    assert acls == {"plain": stamped, "own": ["hr"], "null": stamped, "empty": []}  # an empty list is an acl
    assert {d for d, _ in index.search_ids("apple", filter=acl_filter(["Domain Users"]))} == {"plain", "null"}
    assert [d for d, _ in index.search_ids("apple", filter=acl_filter(["hr"]))] == ["own"]
    again = index.sync([Document("plain", "apple"), own, null, empty])
    assert (again.added, again.updated, again.unchanged) == (0, 0, 4)  # the stamp is no change of the source


def test_without_default_acl_documents_without_one_are_hidden_from_groups() -> None:
    index = Index.create(None, IndexSettings(analyzer=get_analyzer("simple")))
    index.add([Document("plain", "apple"), Document("own", "apple", metadata={"acl": ["all"]})])
    index.commit()
    assert [d for d, _ in index.search_ids("apple", filter=acl_filter(["all"]))] == ["own"]
    assert {d for d, _ in index.search_ids("apple")} == {"plain", "own"}  # no groups: no restriction


# -- depth ------------------------------------------------------------------------------------------------------


def test_400_nested_parentheses_are_a_syntax_error_at_the_deep_one() -> None:
    text = "(" * 400 + "a = 1" + ")" * 400
    with pytest.raises(FilterSyntaxError, match="nest more than 64") as info:
        parse_filter(text)
    assert info.value.position == MAX_NESTING  # the first parenthesis past the bound


def test_3000_chained_nots_are_a_syntax_error() -> None:
    text = "not " * 3000 + "a = 1"
    with pytest.raises(FilterSyntaxError) as info:
        parse_filter(text)
    assert info.value.position == 4 * MAX_NESTING and text[info.value.position :].startswith("not")
    index = Index.create(None, IndexSettings(analyzer=get_analyzer("simple")))
    index.add([Document("a", "apple", metadata={"a": 1})])
    index.commit()
    with pytest.raises(FilterSyntaxError):
        index.search("apple", filter=text)


def test_the_deepest_text_filter_still_works_with_a_restriction() -> None:
    # each parenthesis level may add an Or and an And: the deepest tree text can give, plus the restriction
    deep = "a = 1"
    for _ in range(MAX_NESTING - 1):
        deep = f"c = 2 or a = 1 and ({deep})"
    combined = restrict(f"({deep})", acl_filter(["hr"]))
    index = Index.create(None, IndexSettings(analyzer=get_analyzer("simple")))
    index.add([Document("x", "apple", metadata={"a": 1, "acl": "hr"}), Document("y", "apple", metadata={"a": 1})])
    index.commit()
    assert [d for d, _ in index.search_ids("apple", filter=combined)] == ["x"]
    assert parse_filter(filter_text(combined)) == combined


def test_deep_trees_built_in_python_are_rejected() -> None:
    tree: Any = Compare("a", "=", ("1",))
    for _ in range(3000):
        tree = Not(tree)
    with pytest.raises(ConfigError, match=f"more than {MAX_TREE_DEPTH}"):
        parse_filter(tree)
    with pytest.raises(ConfigError):
        evaluate(tree, lambda f: Column([]), 0)
    index = Index.create(None, IndexSettings(analyzer=get_analyzer("simple")))
    index.add([Document("a", "apple")])
    index.commit()
    with pytest.raises(ConfigError):
        index.search("apple", filter=tree)
    shared: Any = Compare("a", "=", ("1",))
    for _ in range(MAX_TREE_DEPTH - 1):
        shared = And((shared, shared))  # 2**199 paths, 199 levels: measured once per node
    parse_filter(shared)
    with pytest.raises(ConfigError):
        parse_filter(Or((shared, Not(shared))))
    with pytest.raises(ConfigError, match="none of Compare"):
        parse_filter(And(("a = 1",)))  # type: ignore[arg-type]


def test_empty_and_or_are_true_and_false() -> None:
    metas = [{"acl": "hr"}, {}]
    assert mask(And(()), metas) == [0, 1] and mask(Or(()), metas) == []
    assert mask(parse_filter(filter_text(Or(()))), metas) == []
    assert mask(parse_filter(filter_text(And(()))), metas) == [0, 1]
