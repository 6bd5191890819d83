"""ACL fuzz (``ragline.eval.acl_fuzz``): every arm finds no leak, and the mutation arm's planted leak is found.

``RAGLINE_ACL_FUZZ_SCALE`` multiplies the number of corpora of each arm. A reranked pipeline joins by adding an
``Arm`` to ``ARMS``. Graph-global is fuzzed in tests/retrieve/test_graph_search.py (on a corpus whose communities
give reports), RAPTOR's summaries in tests/structures/test_raptor.py.
"""

from __future__ import annotations

import os

import pytest

from ragline.eval.acl_fuzz import ARMS, MUTATION, Arm

SCALE = float(os.environ.get("RAGLINE_ACL_FUZZ_SCALE", "1"))


def _no_leak(arm: Arm) -> None:
    pairs, found = arm.run(SCALE)
    assert pairs >= arm.corpora * arm.pairs_per_corpus * min(SCALE, 1)
    assert found == []


FAST = [name for name, arm in ARMS.items() if not arm.models and not name.startswith(("ppr", "graph", "agent"))]
SLOW = [name for name in ARMS if name not in FAST]


@pytest.mark.parametrize("name", FAST)
def test_no_leak(name: str) -> None:
    _no_leak(ARMS[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_no_leak_slow_arms(name: str) -> None:
    _no_leak(ARMS[name])


def test_mutation_filter_after_top_k_is_caught() -> None:
    """The fuzz is only worth its pairs if it sees a leak: here a retriever that filters after the top k."""
    pairs, found = MUTATION.run()
    assert pairs == 100
    assert found, "the fuzz did not notice a retriever that filters after the top k"
    assert any(f.split(": ", 1)[1].startswith(("candidate", "context")) for f in found)
