"""One contract per role, held by every registered component of that role (``names(role)``, ragline's own).

A component that breaks its role's rules fails here by name, whatever the pipeline around it. Components that
load a model carry the ``models`` mark; those whose model is not on this machine are skipped there, saying so.
The cross-encoder reranker runs here on a scorer of the ``CrossEncoder`` shape with known logits (no model).
Planted faults, checked: ``reordered`` keeping each hit's first-stage rank (not renumbered) fails the
reranker contract (llm-pointwise); ``DenseRetriever.rank`` dropping refused hits after its top k fails "filter
before top k" (dense); ``Chunker.chunk`` without its blank-document guard fails "no empty chunks" (none);
``build`` without its Protocol check lets a component without ``rank`` through.
"""

from __future__ import annotations

import inspect
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from llm_fakes import FakeLLM
from ragline.answer.context import build_context
from ragline.components import ROLES, build, component, names, register, retrieves_itself
from ragline.errors import ConfigError, ModelError
from ragline.index.filters import acl_filter
from ragline.index.store import Index, IndexSettings
from ragline.retrieve.rerank import BaseReranker
from ragline.roles import PROTOCOLS
from ragline.types import Answer, Document, Hit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from embedding_fakes import HashEmbedder  # noqa: E402

from retrieve.test_rerank_cross_order import QueryWordCounter  # noqa: E402

MODELS = {
    "retriever": {"maxsim"},
    "reranker": {"maxsim"},
    "reader": {"span"},
    "compressor": {"cross"},
    "grader": {"cross-encoder"},
    "contextualizer": {"late"},
}
LLM = {"reader": {"llm", "agent"}}  # answered by a model: their contract is the reader tests' (llm_fakes)
# Ranked over a structure the contract's one-line documents do not form (community reports need communities):
# their own tests hold them (tests/retrieve/test_graph_search.py).
STRUCTURE_BOUND = {
    "retriever": {"graph-global"}
}  # answered by a model: their contract is the reader tests' (llm_fakes)
CHEAP = {
    "retriever": {"reranked": "reranked:first=hybrid,reranker=llm-listwise"},
    "reranker": {"cross": "cross:model=query-word-counter"},  # its encoder set below: no model loaded
    "reader": {"cascade": "cascade:readers=extractive+extractive:threshold=0.9"},  # the defaults load models
}


def params(role: str) -> list:
    """``role``'s registered components (ragline's own), those that load a model marked ``models``."""
    out = []
    for name in names(role):
        if not component(role, name).factory.__module__.startswith("ragline."):
            continue  # a test's own component registered in this process
        marks = [pytest.mark.models] if name in MODELS.get(role, ()) else []
        if name in LLM.get(role, ()):
            marks.append(pytest.mark.skip(reason="answered by an LLM: tests/answer and tests/agent hold it"))
        elif name in STRUCTURE_BOUND.get(role, ()):
            marks.append(pytest.mark.skip(reason="needs a structure these documents do not form: its own tests"))
        elif retrieves_itself(component(role, name).factory):  # answer(question, filter), not read()
            marks.append(pytest.mark.skip(reason="retrieves by itself: its own tests (tests/reflect, tests/agent)"))
        out.append(pytest.param(CHEAP.get(role, {}).get(name, name), marks=marks, id=name))
    return out


def built(role: str, spec: str, **dependencies):
    try:
        return build(role, spec, **dependencies)
    except ModelError as error:  # a trained model this machine does not have
        pytest.skip(f"{role} {spec!r} needs a model that is not here: {error}")


class Judge(FakeLLM):
    """Replies by the passage alone (equal passages, equal replies): P(yes) from its length, orders unchanged."""

    def __init__(self) -> None:
        super().__init__(lambda *args: "[1] > [2]")

    def top_logprobs(self, messages, top=10, seed=0):
        self.calls.append(list(messages))
        p = 0.2 + 0.6 * (len(messages[-1]["content"]) % 7) / 7
        return [(" yes", math.log(p)), ("no", math.log(1 - p))]


def vector_index(docs: list[Document]) -> Index:
    index = Index.create(None, IndexSettings(embedder="minilm"))
    if docs:
        vectors = np.stack([HashEmbedder(dim=16).embed_passages([d.text])[0] for d in docs]).astype(np.float32)
        index.add(docs, vectors=vectors)
    index.commit()
    index._embedder = HashEmbedder(dim=16)  # queries embedded without a model
    return index


DOCS = [
    Document(f"d{i:02d}", f"common pay band {'grade ' * (i % 5)}note{i}", metadata={"acl": ["hr" if i < 10 else "all"]})
    for i in range(30)
]


@pytest.fixture(scope="module")
def index() -> Index:
    return vector_index(DOCS)


@pytest.mark.parametrize("spec", params("retriever"))
def test_retriever_contract(index: Index, spec: str) -> None:
    """k respected, scores descending, the filter applied before the top k, an empty query or index gives none."""
    retriever = built("retriever", spec, index=index, llm=Judge())
    ranked = retriever.rank("common pay band", 5)
    assert len(ranked) == 5 and len({doc_id for doc_id, _ in ranked}) == 5
    scores = [score for _, score in ranked]
    assert scores == sorted(scores, reverse=True) and all(math.isfinite(s) for s in scores)
    # The best-matching documents (d00-d09) are hidden: a filter applied after the top k would return fewer.
    allowed = retriever.rank("common pay band grade", 8, acl_filter(["all"]))
    assert len(allowed) == 8 and all(doc_id >= "d10" for doc_id, _ in allowed)
    assert [h.doc_id for h in retriever.search("common", 3)] == [d for d, _ in retriever.rank("common", 3)]
    assert retriever.search("", 5) == [] and retriever.search("  ", 5) == []
    assert retriever.rank("common", 0) == []
    assert built("retriever", spec, index=vector_index([]), llm=Judge()).rank("common pay band", 5) == []


def hits(texts: list[str]) -> list[Hit]:
    return [Hit(f"h{i}", float(10 - i), i + 1, "", text, {"acl": ["all"]}) for i, text in enumerate(texts)]


@pytest.mark.parametrize("spec", params("reranker"))
def test_reranker_contract(spec: str) -> None:
    """The shared base; no hits (or k = 0) asks nothing; ranks 1..k; equal passages keep the first stage's order."""
    llm = Judge()
    reranker = built("reranker", spec, llm=llm)
    if spec.startswith("cross:"):
        reranker._encoder = QueryWordCounter()  # CrossEncoder.predict's shape, known logits
    assert isinstance(reranker, BaseReranker), f"reranker {spec} does not subclass BaseReranker"
    assert reranker.rerank("pay band", [], 5) == [] and reranker.rerank("pay band", hits(["a b"]), 0) == []
    assert llm.calls == []
    given = hits(["the pay band of a grade", "cars need fuel", "a pay band", "grade five pay"])
    out = reranker.rerank("which pay band", given, 3)
    assert [h.rank for h in out] == [1, 2, 3] and len({h.doc_id for h in out}) == 3
    assert {h.doc_id for h in out} <= {h.doc_id for h in given}
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)
    assert len(reranker.rerank("which pay band", given, 10)) == len(given)
    same = hits(["the same passage"] * 4)
    assert [h.doc_id for h in reranker.rerank("which passage", same, 4)] == ["h0", "h1", "h2", "h3"]
    with pytest.raises(ConfigError, match="k"):
        reranker.rerank("which pay band", given, -1)


@pytest.mark.parametrize("name", params("fuser"))
def test_fuser_contract(name: str) -> None:
    """No runs or empty runs: nothing; every listed id scored finitely; one run keeps its order."""
    factory = component("fuser", name).factory
    required = [p for p in inspect.signature(factory).parameters.values() if p.default is p.empty][1:]

    def fuser(runs):  # weights (weighted_sum's one required parameter): equal
        return factory(runs, **{p.name: [1.0] * len(runs) for p in required})

    assert fuser([]) == {} and fuser([{}, {}]) == {}
    runs = [{"a": 3.0, "b": 2.0, "c": 1.0}, {"c": 0.9, "d": 0.5}]
    fused = fuser(runs)
    assert set(fused) == {"a", "b", "c", "d"} and all(math.isfinite(v) for v in fused.values())
    one = fuser([{"a": 3.0, "b": 2.0, "c": 1.0}])
    assert sorted(one, key=lambda d: -one[d]) == ["a", "b", "c"]


PAY = "# Pay\n\nThe pay band is set by grade. Each grade has a band.\n\n## Leave\n\n"
CHUNKED = Document("doc", PAY + "Leave is earned monthly. " * 60)


@pytest.mark.parametrize("spec", params("chunker"))
def test_chunker_contract(spec: str) -> None:
    """Chunks are the document's text at their offsets, within it, never empty; a blank document has none."""
    chunker = built("chunker", spec)
    chunks = chunker.chunk(CHUNKED)
    assert chunks and len({c.id for c in chunks}) == len(chunks)
    for chunk in chunks:
        start, end = chunk.metadata["start"], chunk.metadata["end"]
        assert 0 <= start < end <= len(CHUNKED.text) and chunk.text == CHUNKED.text[start:end]
        assert chunk.text.strip() and chunk.parent == "doc"
    assert chunker.chunk(Document("blank", "  \n\n ")) == []


@pytest.mark.parametrize("spec", params("reader"))
def test_reader_contract(spec: str) -> None:
    """An empty context: an abstention; citations point at the context's sources."""
    reader = built("reader", spec)
    empty = reader.read("What is the pay band of grade five?", build_context([], 500))
    assert isinstance(empty, Answer) and empty.abstained and not empty.citations
    context = build_context(hits(["Grade five has pay band C.", "Cars need fuel."]), 500)
    answer = reader.read("What is the pay band of grade five?", context)
    assert isinstance(answer, Answer) and all(context.source(c.n) is not None for c in answer.citations)
    *pieces, last = reader.stream("What is the pay band of grade five?", context)
    assert isinstance(last, Answer) and all(isinstance(p, str) for p in pieces)


def test_build_refuses_a_component_without_its_roles_methods() -> None:
    @register("retriever", "no-rank-test")
    def no_rank(index):
        """Builds an object that cannot rank (a test component)."""
        return object()

    with pytest.raises(ConfigError, match=r"retriever 'no-rank-test' .* without .*rank.*RetrieverRole"):
        build("retriever", "no-rank-test", index=None)
    assert set(PROTOCOLS) <= set(ROLES)  # every Protocol names a registry role
