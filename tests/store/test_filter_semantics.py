"""Milvus expressions compiled from filters select exactly the documents the embedded index selects."""

from __future__ import annotations

import json
import random

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from ragline.errors import ConfigError
from ragline.index.filters import And, Column, Compare, Not, Or, acl_filter, evaluate
from ragline.index.store import IndexSettings
from ragline.store import open_store
from ragline.store.milvus_filter import to_milvus_expr
from ragline.types import Document

FIELDS = ("year", "status", "acl", "tags")
scalar = st.one_of(
    st.integers(-3, 2030).map(float) | st.sampled_from([2024, 2024.5, 7, 0]),
    st.sampled_from(["2024", "draft", "final", "hr", "all", "7", "02024", "a b", 'qu"ote', "true"]),
    st.booleans(),
)
compare = st.builds(
    lambda field, op, values: Compare(field, op, tuple(values) if op == "in" else (values[0],)),
    st.sampled_from(FIELDS),
    st.sampled_from(["=", "<", "<=", ">", ">=", "in"]),
    st.lists(scalar, min_size=1, max_size=3),
)
tree = st.recursive(
    compare,
    lambda inner: st.one_of(
        st.builds(Not, inner),
        st.builds(lambda items: And(tuple(items)), st.lists(inner, max_size=3)),
        st.builds(lambda items: Or(tuple(items)), st.lists(inner, max_size=3)),
    ),
    max_leaves=6,
)
N_DOCS = 60


@pytest.fixture(scope="module")
def corpus(milvus_server):
    rng = random.Random(15)
    scalars = [2024, 2024.0, 2024.5, 7, 0, -3, 2030, "2024", "draft", "final", "hr", "all", "7", "02024", "a b",
               'qu"ote', "true", True, False]  # fmt: skip

    def one_value():
        return rng.choice(scalars) if rng.random() < 0.5 else rng.sample(scalars, rng.randint(0, 3))

    documents = [
        Document(f"d{i}", f"text {i}", "", {f: one_value() for f in FIELDS if rng.random() < 0.6})
        for i in range(N_DOCS)
    ]
    documents.append(Document("empty", "no metadata", "", {}))
    collection = open_store(f"milvus://{milvus_server}/filters", IndexSettings(vector_index="flat"))
    collection.sync(documents)
    collection.commit()
    yield documents, collection
    collection.client.drop_collection("filters")
    collection.close()


def embedded_matches(documents, node):
    columns = {}

    def column(name):
        if name not in columns:
            columns[name] = Column([d.metadata.get(name) for d in documents])
        return columns[name]

    mask = evaluate(node, column, len(documents))
    return {d.id for d, keep in zip(documents, mask) if keep}


def milvus_matches(collection, node):
    rows = collection.client.query(collection.name, filter=to_milvus_expr(node), output_fields=["id"], limit=16384)
    return {row["id"] for row in rows}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(node=tree)
def test_same_documents_as_the_embedded_index(corpus, node):
    documents, collection = corpus
    assert milvus_matches(collection, node) == embedded_matches(documents, node), to_milvus_expr(node)


@pytest.mark.parametrize(
    "text",
    [
        "year >= 2024",
        "not year < 2024",  # documents without year pass
        "acl in [hr, all]",
        "status != draft",
        "year = 2024",  # numbers match the text "2024" too
        'year = "2024"',  # quoted: text only
        "tags in []",
        "status < m",
    ],
)
def test_written_filters(corpus, text):
    documents, collection = corpus
    from ragline.index.filters import parse_filter

    node = parse_filter(text)
    assert milvus_matches(collection, node) == embedded_matches(documents, node)


def test_acl_restriction_compiles_to_array_contains_any():
    assert "array_contains_any(acl, " in to_milvus_expr(acl_filter(["hr", "a,b"]))
    assert json.dumps("a,b") in to_milvus_expr(acl_filter(["hr", "a,b"]))


def test_a_field_milvus_cannot_quote_is_an_error_not_dropped():
    with pytest.raises(ConfigError, match="cannot be expressed for Milvus"):
        to_milvus_expr(Compare('we"ird', "=", ("x",)))
