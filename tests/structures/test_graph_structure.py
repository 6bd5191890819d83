"""The entity graph stored beside an index: manifest, staleness, reuse of extractions, the LLM extractor."""

from __future__ import annotations

import json

from llm_fakes import FakeLLM
from ragline.index import Index
from ragline.index.settings import IndexSettings
from ragline.structures.graph import build_graph, build_structure, graph_for, is_stale, read_manifest, structure_dir
from ragline.types import Document

DOCS = [
    Document("a", "Alder Voss founded the Tessaly Guild in Port Vesna.", "A", {"acl": ["g1"]}),
    Document("b", "The Tessaly Guild hired Cora Mendel. Cora Mendel lives in Port Vesna.", "B", {"acl": ["g1", "g2"]}),
    Document("c", "Dario Fenn met Cora Mendel in Marrow Bay.", "C", {"acl": ["g2"]}),
]


def test_build_writes_a_manifest_and_a_changed_document_makes_it_stale(tmp_path):
    """Planted fault: source digests taken from ids only (not content) leave the changed index 'current'."""
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(DOCS)
    index.commit()
    assert is_stale(index) is None
    build_structure(index)
    manifest = read_manifest(index.path)
    assert manifest is not None and manifest["structure"] == "graph" and set(manifest["sources"]) == {"a", "b", "c"}
    assert {"llm_calls", "tokens", "seconds"} <= set(manifest["cost"])
    assert is_stale(index) is False
    assert graph_for(index).chunk_ids == ["a", "b", "c"]
    assert not list(structure_dir(index.path).parent.glob(".graph-*"))  # no temporary folder left
    index.add([Document("c", "Dario Fenn met Elsa Quint in Marrow Bay.", "C", {"acl": ["g2"]})])
    index.commit()
    assert is_stale(index) is True
    build_structure(index)
    assert is_stale(index) is False


def test_llm_extractor_is_schema_constrained_and_a_rebuild_asks_only_for_changed_chunks(tmp_path, monkeypatch):
    """Planted fault: the previous graph's extractions not reused (every chunk asked again) fails the call count."""
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))

    def reply(messages, *_):
        text = messages[0]["content"]
        names = [n for n in ("Alder Voss", "Tessaly Guild", "Cora Mendel", "Dario Fenn", "Elsa Quint") if n in text]
        rel = [{"source": names[0], "relation": "knows", "target": names[1]}] if len(names) > 1 else []
        return json.dumps({"entities": names, "relations": rel})

    fake = FakeLLM(reply, structured=True)
    first = build_graph(DOCS, extractor="llm", llm=fake)
    assert len(fake.calls) == 3 and fake.schemas and "entities" in fake.schemas[0]["properties"]
    assert any("knows" in labels for labels in first.labels.values())
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache2"))  # the reply cache cannot stand in for reuse
    changed = [*DOCS[:2], Document("c", "Dario Fenn met Elsa Quint in Marrow Bay.", "C", {"acl": ["g2"]})]
    build_graph(changed, extractor="llm", llm=fake, previous=first)
    assert len(fake.calls) == 4
