"""The component registry: names by role, specs built with their parameters, clear errors, new components."""

from __future__ import annotations

import pytest

from ragline.components import ROLES, build, component, names, register, spec_of
from ragline.errors import ConfigError
from ragline.index import Index, IndexSettings
from ragline.retrieve.base import Ranked, Retriever
from ragline.retrieve.registry import build_retriever
from ragline.types import Document


def small_index() -> Index:
    index = Index.create(None, IndexSettings())
    index.add([Document(f"d{i}", f"alpha beta {'gamma ' * i}") for i in range(5)])
    index.commit()
    return index


def test_the_built_in_components_are_registered() -> None:
    assert {"bm25", "dense", "hybrid"} <= set(names("retriever"))
    assert set(names("fuser")) == {"rrf", "min_max", "z_score", "weighted_sum", "sum", "comb_mnz"}
    assert all(component("retriever", n).summary for n in names("retriever"))


def test_unknown_names_and_parameters_say_what_is_accepted() -> None:
    index = small_index()
    with pytest.raises(ConfigError, match="unknown retriever 'sparse'; choose one of: .*bm25"):
        build_retriever("sparse", index)
    with pytest.raises(ConfigError, match=r"unknown parameter\(s\) colour; it takes: .*k1"):
        build_retriever("bm25:colour=red", index)
    with pytest.raises(ConfigError, match="unknown component role"):
        names("retrievers")
    with pytest.raises(ConfigError, match="has no 'name'"):
        spec_of({"k1": 1.2})


def test_a_spec_and_a_table_build_the_same_component() -> None:
    index = small_index()
    a = build("retriever", "bm25:k1=1.5,b=0.3", index=index)
    b = build("retriever", {"name": "bm25", "k1": 1.5, "b": 0.3}, index=index)
    assert a.config() == b.config() and a.rank("gamma", 5) == b.rank("gamma", 5)


def test_a_new_retriever_is_one_registration_and_joins_hybrid_legs() -> None:
    @register("retriever", "reverse-id-test")
    class ReverseId(Retriever):
        """Ranks documents by id, last first (a test component)."""

        name = "reverse-id-test"

        def rank(self, query: str, k: int = 10, filter=None) -> Ranked:
            ids = sorted((d.id for d in self.index.documents()), reverse=True)
            return [(doc_id, float(len(ids) - i)) for i, doc_id in enumerate(ids)][:k]

    index = small_index()
    assert "reverse-id-test" in names("retriever")
    assert [h.doc_id for h in build_retriever("reverse-id-test", index).search("x", 2)] == ["d4", "d3"]
    hybrid = build_retriever("hybrid:legs=[bm25; reverse-id-test],fuser=rrf", index)
    assert {leg["name"] for leg in hybrid.config()["legs"]} == {"bm25", "reverse-id-test"}
    assert hybrid.rank("gamma", 3)


def test_registering_a_name_twice_is_refused() -> None:
    with pytest.raises(ConfigError, match="registered twice"):
        register("retriever", "bm25")(lambda index: None)
    with pytest.raises(ConfigError, match="unknown component role"):
        register("nope", "x")


def test_every_role_names_a_package_or_module_that_imports() -> None:
    for role in ROLES:
        names(role)  # imports the role's modules; raises if one is missing


def test_one_named_component_imports_only_its_own_module() -> None:
    """A BM25 search must not pay for importing every retriever, reranker and LLM client module."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from ragline.components import component, names\n"
        "component('retriever', 'bm25'); component('fuser', 'rrf')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('ragline.retrieve.'))\n"
        "print(','.join(loaded))\n"
        "assert 'maxsim' in names('reranker')  # a listing still finds every component\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(out.strip().split(","))
    assert "ragline.retrieve.sparse" in loaded and "ragline.retrieve.fusion" in loaded
    assert not loaded & {"ragline.retrieve.rerank_llm", "ragline.retrieve.late", "ragline.retrieve.store"}
