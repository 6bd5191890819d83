"""The entity graph stored beside an index: manifest, staleness, reuse of extractions, the LLM extractor."""

from __future__ import annotations

import json

import pytest

from llm_fakes import FakeLLM
from ragline.errors import ConfigError
from ragline.index import Index
from ragline.index.settings import IndexSettings
from ragline.structures.base import read_manifest, structure_dir
from ragline.structures.graph import NAME, build_graph, build_structure, graph_for, is_stale
from ragline.text.sentences import split_sentences
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
    manifest = read_manifest(index.path, NAME)
    assert manifest is not None and manifest["structure"] == "graph" and set(manifest["sources"]) == {"a", "b", "c"}
    assert {"llm_calls", "tokens", "seconds"} <= set(manifest["cost"])
    assert is_stale(index) is False
    assert graph_for(index).chunk_ids == ["a", "b", "c"]
    assert not list(structure_dir(index.path, NAME).parent.glob(".graph*"))  # no temporary folder left
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
    assert first.rebuilt["llm_calls"] == 3 and first.rebuilt["tokens"] > 0  # the cost table's counts
    # the same chunks again from scratch: every reply from the cache, and no model call counted
    cached = build_graph(DOCS, extractor="llm", llm=fake)
    assert len(fake.calls) == 3 and cached.rebuilt["llm_calls"] == cached.rebuilt["tokens"] == 0
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache2"))  # the reply cache cannot stand in for reuse
    changed = [*DOCS[:2], Document("c", "Dario Fenn met Elsa Quint in Marrow Bay.", "C", {"acl": ["g2"]})]
    again = build_graph(changed, extractor="llm", llm=fake, previous=first)
    assert len(fake.calls) == 4 and again.rebuilt["llm_calls"] == 1


def test_a_reply_cut_by_the_token_limit_falls_back_to_the_rules_extractor_for_that_chunk(tmp_path, monkeypatch):
    """A 0.5B model listing every noun runs out of tokens mid-JSON: that chunk is read by the rules extractor and
    counted, the others by the model. Planted fault checked: the JSONReplyError not caught stops the build."""
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))

    def reply(messages, *_):
        text = messages[0]["content"]
        if "Dario Fenn" in text:
            return '{"entities": ["Dario Fenn", "Cora Mendel", "Marrow'  # cut by max_tokens
        names = [n for n in ("Alder Voss", "Tessaly Guild", "Cora Mendel") if n in text]
        return json.dumps({"entities": names, "relations": []})

    graph = build_graph(DOCS, extractor="llm", llm=FakeLLM(reply, structured=True))
    assert graph.rebuilt["llm_calls"] == 3 and graph.rebuilt["fallbacks"] == 1
    assert "dario fenn" in graph.keys  # the rules extractor read chunk c


TWO_PARTS = [
    Document("a", "Alder Voss founded the Tessaly Guild in Port Vesna. Alder Voss sold the Tessaly Guild.", "A"),
    Document("b", "The Tessaly Guild hired Cora Mendel. Cora Mendel lives in Port Vesna.", "B"),
    Document("d", "Ilsa Brandt sailed from Kerrow Sound to Fallow Reach. Ilsa Brandt mapped Kerrow Sound.", "D"),
    Document("e", "Fallow Reach traded with Kerrow Sound. Oren Hale charted Fallow Reach.", "E"),
]


def _by_members(graph):
    return {
        tuple(sorted(graph.keys[e] for e in block)): level
        for level, blocks in enumerate(graph.communities)
        for block in blocks
    }


def test_a_changed_document_rebuilds_its_component_and_report_and_keeps_the_others(tmp_path):
    """Only the component a changed document touches is partitioned again and only its reports are rebuilt;
    the other component's reports are the previous ones, the result equals a build from scratch, and the
    stored graph is current afterwards.
    Planted fault: `previous` ignored in `communities()` (every component partitioned again) fails the
    `components_partitioned == 1` assert; ignored in `reports()` fails `reports_built`."""
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(TWO_PARTS)
    index.commit()
    first = build_structure(index)
    assert first.rebuilt["components"] == 2 and first.rebuilt["components_partitioned"] == 2
    guild = [r for r in first.reports if "a" in r.sources or "b" in r.sources]
    sound = [r for r in first.reports if "d" in r.sources or "e" in r.sources]
    assert guild and sound and not {r.id for r in guild} & {r.id for r in sound}

    index.add([Document("e", "Fallow Reach traded with Kerrow Sound. Nell Orry charted Fallow Reach.", "E")])
    index.commit()
    assert is_stale(index) is True
    second = build_structure(index)
    assert is_stale(index) is False
    assert second.rebuilt["components_partitioned"] == 1
    assert second.rebuilt["reports_built"] == len({(r.level, r.community) for r in second.reports if "e" in r.sources})
    after = {r.id: r for r in second.reports}
    for report in guild:  # untouched: same id, same text, same sources
        assert after[report.id] == report
    changed = [r for r in second.reports if "e" in r.sources]
    assert changed and any("Nell Orry" in r.text for r in changed)
    assert not any("Oren Hale" in r.text for r in second.reports)
    assert read_manifest(index.path, NAME)["cost"]["components_partitioned"] == 1

    fresh = build_graph(index.documents())
    assert _by_members(fresh) == _by_members(second)
    assert sorted((r.id, r.text, r.sources) for r in fresh.reports) == sorted(
        (r.id, r.text, r.sources) for r in second.reports
    )


def test_llm_reports_are_asked_per_acl_and_keep_only_what_their_sources_state(tmp_path, monkeypatch):
    """reporter=llm: one request per report, each shown the facts of one ACL only; a written sentence with a term
    no fact has is dropped, the others cite the chunk of the fact sharing the most terms (planted faults: without
    the check (``written.attribute``) the invented sentence stays; facts grouped across ACLs fail the one-ACL check)."""
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))
    acl_of = {d.text[a:b]: tuple(d.metadata["acl"]) for d in DOCS for a, b in split_sentences(d.text)}

    def reply(messages, *_):
        facts = [line[2:] for line in messages[1]["content"].splitlines() if line.startswith("- ")]
        return f"{facts[0]} Zebras secretly own the guild. {facts[0]}"

    fake = FakeLLM(reply)
    graph = build_graph(DOCS, reporter="llm", llm=fake)
    assert graph.rebuilt["report_llm_calls"] == len(fake.calls) > 0  # a request asked twice is answered by the cache
    assert (graph.rebuilt["llm_reports_kept"], graph.rebuilt["llm_reports_extractive"]) == (len(graph.reports), 0)
    for call in fake.calls:
        facts = [line[2:] for line in call[1]["content"].splitlines() if line.startswith("- ")]
        assert len({acl_of[f] for f in facts}) == 1
    texts = {d.id: d.text for d in DOCS}
    for report in graph.reports:
        assert report.sentences and not any("Zebras" in s for s in report.sentences)
        assert len(set(report.sentences)) == len(report.sentences)  # the repeated fact is kept once
        assert all(s in texts[c] for s, c in zip(report.sentences, report.sources))
    assert {r.id for r in graph.reports} == {r.id for r in build_graph(DOCS).reports}
    with pytest.raises(ConfigError, match="reporter"):
        build_graph(DOCS, reporter="abstractive")


def test_llm_work_on_a_graph_reports_its_progress(tmp_path, monkeypatch):
    """Building a graph with the LLM takes about an hour on two cores (BENCHMARKS.md): its extraction and report
    loops go through ``progress.track`` (a bar, or a line every few seconds), each item as it is done; the rules
    extractor and extractive reports, which take seconds, do not."""
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))
    seen: list[tuple[str, int]] = []

    def recording(items, description, *args, shown=True, **kwargs):  # progress.track's contract, recorded
        for done, item in enumerate(items, start=1):
            if shown:
                seen.append((description, done))
            yield item

    monkeypatch.setattr("ragline.structures.graph.track", recording)
    monkeypatch.setattr("ragline.structures.communities.track", recording)
    build_graph(DOCS)
    assert seen == []

    def reply(messages, *_):
        if "schema" in str(messages).lower() or "entities" in messages[0]["content"].lower():
            names = [n for n in ("Alder Voss", "Tessaly Guild", "Cora Mendel") if n in messages[0]["content"]]
            return json.dumps({"entities": names, "relations": []})
        return "A fact."

    build_graph(DOCS, extractor="llm", reporter="llm", llm=FakeLLM(reply, structured=True))
    described = {description for description, _ in seen}
    assert described == {"graph: entities by the LLM", "graph: community reports by the LLM"}
    assert [done for d, done in seen if d == "graph: entities by the LLM"] == list(range(1, len(DOCS) + 1))
