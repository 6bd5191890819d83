"""The RAPTOR tree: its shape, retrieval over it, permissions on derived text, incremental sync, atomic storage."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from bag_embedder import BagEmbedder

from ragline.components import build, names
from ragline.errors import ConfigError
from ragline.index import Index, IndexSettings
from ragline.principals import Principal
from ragline.structures import base
from ragline.structures.base import build_structure, structure_status
from ragline.structures.raptor import RaptorRetriever
from ragline.structures.raptor_build import build_tree
from ragline.structures.raptor_tree import RaptorParams, load_tree
from ragline.types import Document

TOPICS = {
    "meals": "lunch dinner breakfast allowance restaurant menu",
    "flights": "airline ticket economy airport boarding luggage",
    "servers": "database disk partition cpu memory reboot",
    "hiring": "candidate interview offer recruiter salary onboarding",
}
GROUPS = ("all", "hr", "finance", "ops")


def corpus(rng: random.Random, n: int = 48, acl: bool = True) -> list[Document]:
    docs = []
    names_ = sorted(TOPICS)
    for i in range(n):
        topic = names_[i % len(names_)]
        words = TOPICS[topic].split()
        sentences = [" ".join(rng.sample(words, 4)).capitalize() + f" note{i}." for _ in range(3)]
        groups = [rng.choice(GROUPS)] if acl else ["all"]
        docs.append(Document(f"d{i}", " ".join(sentences), f"{topic} {i}", {"acl": groups, "topic": topic}))
    return docs


def make_index(docs: list[Document], path: Path | None = None) -> Index:
    index = Index.create(path, IndexSettings())
    index.add(docs)
    index.commit()
    index._embedder = BagEmbedder()
    return index


@pytest.fixture(scope="module")
def public_index() -> Index:
    return make_index(corpus(random.Random(1), acl=False))


def test_registered_as_a_retriever() -> None:
    assert "raptor" in names("retriever")


def test_tree_shape(public_index: Index) -> None:
    """One root; no node over max_children children; a summary's sources are its leaves'; quotes are verbatim."""
    tree = build_tree(public_index, RaptorParams(max_children=6))
    assert len(tree.roots) == 1
    levels = tree.levels()
    assert levels[0] == 48 and max(levels) >= 2
    for node in tree.nodes:
        assert len(node.children) <= 6
        if node.level == 0:
            continue
        below = {s for c in node.children for s in tree.nodes[c].sources}
        assert set(node.sources) == below
        for sentence, chunk_id in node.quoted:
            assert chunk_id in node.sources and sentence in public_index.get(chunk_id).text
        assert node.text == " ".join(s for s, _ in node.quoted)
    assert np.allclose(np.linalg.norm(tree.vectors, axis=1), 1.0, atol=1e-5)


def test_clusters_follow_topics(public_index: Index) -> None:
    """First-level clusters are (mostly) of one topic: clustering groups by meaning, not by id.

    Planted fault checked: shuffling the vectors before clustering fails it."""
    tree = build_tree(public_index, RaptorParams(max_children=6))
    pure = []
    for node in tree.nodes:
        if node.level == 1:
            topics = [public_index.get(s).metadata["topic"] for s in node.sources]
            pure.append(max(topics.count(t) for t in set(topics)) / len(topics))
    assert np.mean(pure) > 0.8


@pytest.mark.parametrize("mode", ["collapsed", "traversal"])
def test_retrieval_finds_the_topic(public_index: Index, mode: str) -> None:
    retriever = build("retriever", f"raptor:mode={mode},max_children=6", index=public_index)
    ranked = retriever.rank("airline boarding luggage", 5)
    assert ranked and all(public_index.get(i).metadata["topic"] == "flights" for i, _ in ranked)
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ConfigError, match="reduce"):
        RaptorParams(reduce="pca")
    with pytest.raises(ConfigError, match="unknown parameter"):
        RaptorParams.of({"clusters": 3})
    with pytest.raises(ConfigError, match="mode"):
        RaptorRetriever(Index.create(None, IndexSettings()), mode="down")


# --- permissions on derived text ---------------------------------------------------------------------


class LeakyRaptor(RaptorRetriever):
    """The planted leak: summary nodes are admitted without checking their sources."""

    def allowed_nodes(self, filter):  # type: ignore[no-untyped-def]
        ok = super().allowed_nodes(filter)
        ok[[i for i, n in enumerate(self.tree.nodes) if n.level > 0]] = True
        return ok


def fuzz(retriever_cls: type[RaptorRetriever], pairs: int, seed: int = 7) -> int:
    """Random principals x questions; counts results derived from a chunk the principal may not read."""
    rng = random.Random(seed)
    leaks = 0
    words = " ".join(TOPICS.values()).split()
    done = 0
    for corpus_seed in range(3):
        index = make_index(corpus(random.Random(corpus_seed)))
        acl = {d.id: d.metadata["acl"] for d in index.documents()}
        retrievers = [retriever_cls(index, mode=m, max_children=5) for m in ("collapsed", "traversal")]
        while done < pairs * (corpus_seed + 1) // 3:
            principal = Principal(f"u{done}", tuple(rng.sample(GROUPS, rng.randint(1, 2))))
            retriever = retrievers[done % 2]
            ranked = retriever.rank(" ".join(rng.sample(words, rng.randint(1, 4))), rng.choice((3, 5, 10)),
                                    principal.restriction())  # fmt: skip
            used = [retriever.tree.nodes[i] for i in retriever.last_nodes]
            derived_from = {s for node in used for s in node.sources} | {i for i, _ in ranked}
            leaks += sum(not principal.can_read(acl[s]) for s in derived_from)
            done += 1
    return leaks


@pytest.mark.slow
def test_derived_text_acl_fuzz_finds_no_leak() -> None:
    """5,000 principal/question pairs over three corpora, both modes: nothing read or summarized unreadable."""
    assert fuzz(RaptorRetriever, 5000) == 0


@pytest.mark.slow
def test_fuzz_finds_a_planted_leak() -> None:
    """The mutation check: admitting summaries without their sources' check is found."""
    assert fuzz(LeakyRaptor, 300) > 0


def test_partitions_by_acl(public_index: Index) -> None:
    index = make_index(corpus(random.Random(3)))
    tree = build_tree(index, RaptorParams(max_children=5))
    acl = {d.id: tuple(d.metadata["acl"]) for d in index.documents()}
    for node in tree.nodes:
        assert len({acl[s] for s in node.sources}) == 1  # no summary mixes ACLs
    assert len(tree.roots) == len(set(acl.values()))


# --- stored beside the index, kept fresh -------------------------------------------------------------


def test_sync_redoes_only_what_changed(tmp_path: Path) -> None:
    """Stale after a change; the sync keeps untouched partitions, updates the touched one in place, and the
    new chunk joins a cluster and is retrievable. Planted fault checked: not attaching added leaves to a
    cluster fails (the new chunk is an orphan leaf, in no summary)."""
    docs = corpus(random.Random(4), n=60, acl=False)
    index = make_index(docs[:48], tmp_path / "idx")
    first = build_structure(index, "raptor", {"max_children": 6})
    assert first["updated"]["partitions_built"] == 1
    assert structure_status(index) == [{"structure": "raptor", "built_at": first["built_at"], "stale": False,
                                        "added": 0, "changed": 0, "removed": 0}]  # fmt: skip
    changed = Document("d5", "Airline ticket boarding zebra quokka.", "flights 5", {"acl": ["all"], "topic": "flights"})
    new = Document("d99", "Airline luggage airport boarding platypus.", "f", {"acl": ["all"], "topic": "flights"})
    index.add([changed, new])
    index.delete(["d7"])
    index.commit()
    status = structure_status(index)[0]
    assert status["stale"] and (status["added"], status["changed"], status["removed"]) == (1, 1, 1)
    second = build_structure(index, "raptor", {"max_children": 6})
    summaries = sum(n for level, n in second["levels"].items() if level != "0")
    assert second["updated"]["partitions_updated"] == 1
    assert 0 < second["updated"]["summaries_redone"] < summaries
    assert not structure_status(index)[0]["stale"]
    tree = load_tree(index.path)
    assert tree is not None and {n.id for n in tree.nodes if n.level == 0} == {d.id for d in index.documents()}
    assert len(tree.roots) == 1 and "d99" in tree.nodes[tree.roots[0]].sources
    retriever = RaptorRetriever(index, max_children=6)
    assert retriever.tree.sources == tree.sources  # the stored tree is used, not rebuilt
    assert "d99" in [i for i, _ in retriever.rank("platypus airline luggage", 10)]


def test_a_failed_write_keeps_the_previous_structure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = make_index(corpus(random.Random(5), n=20, acl=False), tmp_path / "idx")
    build_structure(index, "raptor", {})
    before = load_tree(index.path)

    def broken(path: Path, array: np.ndarray) -> None:
        path.write_bytes(b"half")
        raise OSError("disk full")

    monkeypatch.setattr("ragline.structures.raptor_tree.write_array", broken)
    index.add([Document("x1", "Database disk reboot memory.", "s", {"acl": ["all"]})])
    index.commit()
    with pytest.raises(OSError, match="disk full"):
        build_structure(index, "raptor", {})
    after = load_tree(index.path)
    assert after is not None and before is not None and after.sources == before.sources
    assert [p.name for p in (index.path / "structures").iterdir()] == ["raptor"]


def test_builders_by_name() -> None:
    assert "raptor" in base.structure_names()
    with pytest.raises(ConfigError, match="unknown structure"):
        build_structure(Index.create(None, IndexSettings()), "forest", {})


def _facts(messages: list[dict[str, str]]) -> list[str]:
    return [line[2:] for line in messages[-1]["content"].splitlines() if line.startswith("- ")]


def test_llm_summaries_are_checked_counted_scoped_and_never_mix_acls(tmp_path: Path) -> None:
    """summarizer=llm: the model rewrites a cluster's central sentences; a sentence of its reply stays only when
    they state it (with the chunk that does), the cost counts the model's calls (not the reply cache's), and each
    request is built from one ACL partition only.

    Planted faults checked: keeping the reply unchecked fails the invented-sentence assertion; building one tree
    over all chunks (no ACL partitions) fails the last assertion."""
    import re

    from llm_fakes import FakeLLM
    from ragline.models.llm import CachedLLM
    from ragline.models.llm.cache import LLMResponseCache

    index = make_index(corpus(random.Random(6), n=24))
    invented = "The moon is made of cheese."
    fake = FakeLLM(lambda messages, *rest: f"{_facts(messages)[0]} {invented}")
    llm = CachedLLM(fake, LLMResponseCache(tmp_path / "llm.sqlite"))
    tree = build_tree(index, RaptorParams(summarizer="llm", max_children=4), llm=llm)
    summaries = [n for n in tree.nodes if n.level > 0]
    assert summaries and 0 < tree.cost["llm_calls"] == len(fake.calls) <= len(summaries) and tree.cost["tokens"] > 0
    assert (tree.work["llm_summaries_kept"], tree.work["llm_summaries_extractive"]) == (len(summaries), 0)
    for node in summaries:
        assert invented not in node.text and len(node.quoted) == 1 and node.text == node.quoted[0][0]
        sentence, chunk_id = node.quoted[0]
        assert chunk_id in node.sources and sentence in index.get(chunk_id).text
    again = build_tree(index, RaptorParams(summarizer="llm", max_children=4), llm=llm)
    assert again.cost["llm_calls"] == again.cost["tokens"] == 0  # every reply from the cache
    acl = {d.id: tuple(d.metadata["acl"]) for d in index.documents()}
    for messages in fake.calls:
        used = {acl[f"d{n}"] for n in re.findall(r"note(\d+)", messages[-1]["content"])}
        assert len(used) == 1


def test_an_llm_summary_its_sources_do_not_state_is_the_extractive_one(public_index: Index, tmp_path: Path) -> None:
    """A reply with no sentence its evidence states leaves the central sentences (the extractive summary)."""
    from llm_fakes import FakeLLM
    from ragline.models.llm import CachedLLM
    from ragline.models.llm.cache import LLMResponseCache

    fake = FakeLLM(lambda *args: "Everything here is about the weather on the moon.")
    llm = CachedLLM(fake, LLMResponseCache(tmp_path / "llm.sqlite"))
    written = build_tree(public_index, RaptorParams(summarizer="llm", max_children=6), llm=llm)
    extractive = build_tree(public_index, RaptorParams(max_children=6))
    assert fake.calls and [n.quoted for n in written.nodes] == [n.quoted for n in extractive.nodes]
    assert written.work["llm_summaries_extractive"] == sum(n.level > 0 for n in written.nodes)


def test_llm_summaries_report_their_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each level's LLM summaries go through ``progress.track`` one group at a time (a long build is never silent);
    extractive summaries, which take seconds, do not."""
    from llm_fakes import FakeLLM
    from ragline.models.llm import CachedLLM
    from ragline.models.llm.cache import LLMResponseCache

    seen: list[str] = []

    def recording(items, description, *args, shown=True, **kwargs):  # progress.track's contract, recorded
        for item in items:
            if shown:
                seen.append(description)
            yield item

    monkeypatch.setattr("ragline.structures.raptor_build.track", recording)
    index = make_index(corpus(random.Random(6), n=24))
    build_tree(index, RaptorParams(max_children=4))
    assert seen == []
    llm = CachedLLM(FakeLLM(lambda messages, *rest: _facts(messages)[0]), LLMResponseCache(tmp_path / "llm.sqlite"))
    tree = build_tree(index, RaptorParams(summarizer="llm", max_children=4), llm=llm)
    assert len(seen) == sum(1 for n in tree.nodes if n.level > 0)
    assert set(seen) == {f"raptor: LLM summaries of level {n.level}" for n in tree.nodes if n.level > 0}
