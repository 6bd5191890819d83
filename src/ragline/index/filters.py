"""Metadata filters: one syntax for the Python API, the CLI's ``--filter`` and every retriever.

The language (grammar, semantics, ``acl_filter`` and ``restrict``) is ``filter_syntax.py``; this module
evaluates a parsed filter to a boolean mask over a segment's documents (``Column`` per metadata field).
Retrievers apply that mask while scoring, before the top k are chosen, never to the results afterwards.
Every public name of both is importable from here.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragline.index.filter_syntax import (
    MAX_NESTING,
    MAX_TREE_DEPTH,
    And,
    Compare,
    FilterLike,
    Node,
    Not,
    Number,
    Or,
    acl_filter,
    check_tree,
    filter_text,
    number_text,
    parse_filter,
    restrict,
)

__all__ = [
    "MAX_NESTING",
    "MAX_TREE_DEPTH",
    "And",
    "Column",
    "Compare",
    "FilterLike",
    "Node",
    "Not",
    "Number",
    "Or",
    "acl_filter",
    "check_tree",
    "evaluate",
    "filter_text",
    "parse_filter",
    "restrict",
]


class Column:
    """One metadata field of a segment, flattened for vectorized comparisons.

    Each (document, value) pair is an entry; text values are dictionary-encoded, so a comparison
    runs once per distinct value and then as an array lookup over the entries.
    """

    def __init__(self, values_per_doc: Sequence[Any]) -> None:
        num_doc, num_val, str_doc, str_val = [], [], [], []
        for doc, value in enumerate(values_per_doc):
            for v in value if isinstance(value, (list, tuple)) else () if value is None else (value,):
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    num_doc.append(doc)
                    num_val.append(float(v))
                else:
                    str_doc.append(doc)
                    str_val.append(str(v).lower() if isinstance(v, bool) else str(v))
        self.n_docs = len(values_per_doc)
        self.num_doc = np.asarray(num_doc, dtype=np.int64)
        self.num_val = np.asarray(num_val, dtype=np.float64)
        self.str_doc = np.asarray(str_doc, dtype=np.int64)
        # object, not numpy's fixed-width str: that drops trailing NULs, so "hr\x00" would equal "hr"
        uniques, codes = np.unique(np.asarray(str_val, dtype=object), return_inverse=True)
        self.str_uniques, self.str_codes = uniques, codes.reshape(-1)

    def mask(self, op: str, values: tuple[str | float, ...]) -> np.ndarray:
        out = np.zeros(self.n_docs, dtype=bool)
        for value in values:
            if isinstance(value, bool):  # from a dict filter: stored booleans are the texts "true" / "false"
                value = str(value).lower()
            elif isinstance(value, int):  # from a dict filter: an int is a number like any other
                value = float(value)
            if isinstance(value, float):
                out[self.num_doc[_apply(op, self.num_val, value)]] = True
                if op not in ("=", "in"):
                    continue  # "all" >= 2024 is no question to answer: order numbers numerically only
                text = value.text if isinstance(value, Number) else number_text(value)
            else:
                text = value
            if self.str_uniques.size:
                good = _apply(op, self.str_uniques, text)
                out[self.str_doc[good[self.str_codes]]] = True
        return out


_TEXT_OPS = {
    "=": operator.eq,
    "in": operator.eq,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _apply(op: str, array: np.ndarray, value: Any) -> np.ndarray:
    if array.dtype == object:  # the distinct texts, compared in Python: a numpy str scalar drops trailing NULs
        compare = _TEXT_OPS[op]
        return np.fromiter((compare(text, value) for text in array), dtype=bool, count=len(array))
    if op in ("=", "in"):
        return array == value
    return {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}[op](array, value)


def evaluate(node: Node, column: Any, n_docs: int) -> np.ndarray:
    """Boolean mask of the documents that satisfy ``node``; ``column(name)`` returns a ``Column``."""
    check_tree(node)
    return _evaluate(node, column, n_docs)


def _evaluate(node: Node, column: Any, n_docs: int) -> np.ndarray:
    if isinstance(node, Compare):
        return column(node.field).mask(node.op, node.values)
    if isinstance(node, Not):
        return ~_evaluate(node.item, column, n_docs)
    masks = [_evaluate(item, column, n_docs) for item in node.items]
    if not masks:  # the empty conjunction holds, the empty disjunction does not
        return np.full(n_docs, isinstance(node, And), dtype=bool)
    reduce = np.logical_and.reduce if isinstance(node, And) else np.logical_or.reduce
    return reduce(masks)
