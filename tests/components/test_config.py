"""Pipeline configs: shipped pipelines load and round-trip, every registered component survives a config round
trip, bad configs name the key, and `ragline eval/search/ask --config` run with the config in their provenance."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from llm_fakes import FakeLLM
from ragline.answer.pipeline import RAGPipeline
from ragline.cli import main
from ragline.components import ROLES, build, names
from ragline.config import PipelineConfig, dumps_toml, load_config, pipeline_names
from ragline.errors import ConfigError
from ragline.index import Index, IndexSettings
from ragline.provenance import source_revision
from ragline.retrieve.fusion import fuse
from ragline.types import Document

ROOT = Path(__file__).resolve().parents[2]


def small_index() -> Index:
    index = Index.create(None, IndexSettings())
    index.add([Document(f"d{i}#0", f"the meal limit is {10 * i} dollars", f"Policy {i}",
                        {"doc_id": f"d{i}", "start": 0, "end": 27, "acl": ["all"]}) for i in range(1, 6)])  # fmt: skip
    index.commit()
    return index


def test_the_shipped_pipelines_load_by_name_and_from_the_repository_folder() -> None:
    assert {"default", "extractive", "bm25"} <= set(pipeline_names())
    for name in pipeline_names():
        by_name = load_config(name)
        from_file = load_config(ROOT / "pipelines" / f"{name}.toml")
        assert by_name == from_file and by_name.name == name


@pytest.mark.parametrize("name", ["default", "extractive", "bm25"])
def test_configs_round_trip_through_dicts_toml_yaml_and_json(name: str, tmp_path: Path) -> None:
    config = load_config(name)
    assert PipelineConfig.from_dict(config.to_dict()) == config
    assert PipelineConfig.from_dict(tomllib.loads(config.to_toml())) == config
    (tmp_path / "c.json").write_text(json.dumps(config.to_dict()))
    assert load_config(tmp_path / "c.json") == config
    import yaml

    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config.to_dict()))
    assert load_config(tmp_path / "c.yaml") == config


@pytest.mark.parametrize(
    ("name", "text"),
    [("c.yaml", "retrieve:\n  retriever: bm25\n  retriever: dense\n"), ("c.json", '{"name": "a", "name": "b"}')],
)
def test_a_config_key_given_twice_is_refused(tmp_path: Path, name: str, text: str) -> None:
    """Planted fault: plain ``yaml.safe_load``/``json.loads`` keep the last value without a word."""
    (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError, match="twice") as raised:
        load_config(tmp_path / name)
    assert name in str(raised.value)


# Parameters a component needs, or that are worth carrying through the round trip.
_PARAMETERS = {
    ("fuser", "weighted_sum"): {"weights": [0.3, 0.7]},
    ("fuser", "rrf"): {"k": 10},
    ("retriever", "bm25"): {"k1": 1.1, "b": 0.3},
    ("retriever", "hybrid"): {"legs": ["bm25:k1=1.2", "dense"], "fuser": "rrf", "k": 30},
    ("chunker", "fixed"): {"size": 50, "overlap": 10},
    ("reader", "llm"): {"max_tokens": 32},
    # a model named by folder or hub id is loaded at the first query, so the round trip needs none
    ("reranker", "cross"): {"model": "cross-encoder/ms-marco-MiniLM-L-6-v2", "max_length": 128},
    ("grader", "cross-encoder"): {"model": "cross-encoder/ms-marco-MiniLM-L-6-v2"},
    ("compressor", "cross"): {"model": "cross-encoder/ms-marco-MiniLM-L-6-v2"},
    ("retriever", "reranked"): {"first": "bm25", "reranker": "cross:model=cross-encoder/ms-marco-MiniLM-L-6-v2"},
}


def _example_specs() -> dict[str, dict[str, dict[str, object]]]:
    """A spec table per registered component, keyed by role and name."""
    return {role: {n: {"name": n, **_PARAMETERS.get((role, n), {})} for n in names(role)} for role in ROLES}


def test_every_registered_component_survives_a_config_round_trip(tmp_path: Path) -> None:
    # Each component is built from its table directly and from the same table after a TOML round trip
    # inside a PipelineConfig; both must have the same config(), so a config file is all it takes.
    index = small_index()
    deps = {"index": index, "llm": FakeLLM(["ok [1]"])}
    thesaurus = tmp_path / "synonyms.txt"
    thesaurus.write_text("meal, food, dinner\nlimit, cap\n")
    _PARAMETERS[("query_transform", "synonyms")] = {"file": str(thesaurus)}
    built = 0
    for role, tables in _example_specs().items():
        if role in ("store", "probe", "experiment"):  # opened by URI, run by a command: no pipeline config part
            continue
        for name, table in tables.items():
            loaded = tomllib.loads(dumps_toml({"schema": 1, "components": {role: table}}))["components"][role]
            if role == "fuser":  # fusers are functions of runs: the same fusion from both tables
                runs = [{"a": 2.0, "b": 1.0}, {"b": 3.0, "c": 0.5}]
                params = {k: v for k, v in table.items() if k != "name"}
                again = {k: v for k, v in loaded.items() if k != "name"}
                assert fuse(name, runs, **params) == fuse(loaded["name"], runs, **again), name
            else:
                direct, again = build(role, table, **deps), build(role, loaded, **deps)
                assert direct.config() == again.config(), (role, name)
            built += 1
    assert built >= 14  # 3 retrievers, 5 fusers, 2 readers, 5 chunkers, 4 contextualizers, 3 expanders


def test_bad_configs_are_config_errors_that_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown key.*retreive"):
        PipelineConfig.from_dict({"retreive": {}})
    with pytest.raises(ConfigError, match=r"\[retrieve\]: unknown key\(s\) top_k"):
        PipelineConfig.from_dict({"retrieve": {"top_k": 3}})
    with pytest.raises(ConfigError, match="schema 9"):
        PipelineConfig.from_dict({"schema": 9})
    with pytest.raises(ConfigError, match="k must be a whole number"):
        PipelineConfig.from_dict({"retrieve": {"k": 0}})
    (tmp_path / "bad.toml").write_text("[retrieve\nk = 1")
    with pytest.raises(ConfigError, match="cannot parse"):
        load_config(tmp_path / "bad.toml")
    with pytest.raises(ConfigError, match="no pipeline config 'nope'"):
        load_config("nope")


def test_a_config_builds_every_stage_of_the_pipeline() -> None:
    index = small_index()
    stages = {"retrieve": {"retriever": "bm25:k1=1.2", "k": 3}, "expand": {"expander": "chunk"}}
    config = PipelineConfig.from_dict({**stages, "read": {"reader": "extractive"}})
    pipeline = RAGPipeline.from_config(config, index)
    assert pipeline.config()["retriever"]["bm25"]["k1"] == 1.2 and pipeline.config()["expander"]["name"] == "chunk"
    assert len(pipeline.retrieve("meal limit", "acl = all")) == 3
    answer, context = pipeline.answer("What is the meal limit?", "acl = all")
    assert len(context) == 3
    retrieval_only = RAGPipeline.from_config(config.with_overrides(read={"reader": "none"}), index)
    assert retrieval_only.reader is None and retrieval_only.rank("meal limit", 2)
    with pytest.raises(ConfigError, match="no reader"):
        retrieval_only.answer("What is the meal limit?")


def _beir(root: Path, with_questions: bool) -> Path:
    root.mkdir()
    docs = [{"_id": f"d{i}", "title": f"Policy {i}", "text": f"The meal limit in region {i} is {20 + i} dollars."}
            for i in range(6)]  # fmt: skip
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "meal limit region 3"}) + "\n")
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\n")
    if with_questions:
        q = {"id": "q1", "question": "What is the meal limit in region 3?", "answers": ["23 dollars"],
             "supporting_ids": ["d3"], "type": "lookup"}  # fmt: skip
        (root / "questions.jsonl").write_text(json.dumps(q) + "\n")
    return root


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--output", "json"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_eval_with_a_config_scores_retrieval_or_grades_answers(capsys, tmp_path: Path) -> None:
    plain = _beir(tmp_path / "plain", with_questions=False)
    result = _json(capsys, "eval", str(plain), "--config", "bm25")
    assert result["metrics"]["hit@10"] == 1.0
    config = result["provenance"]["config"]
    assert PipelineConfig.from_dict(config) == load_config("bm25")
    # the commit where ragline runs from a checkout; an installed wheel has none to report
    assert result["provenance"].get("commit") == source_revision().get("commit")
    assert len(result["provenance"].get("commit", "")) in ((40,) if source_revision() else (0,))
    qa = _beir(tmp_path / "qa", with_questions=True)
    graded = _json(capsys, "eval", str(qa), "--config", "bm25", "--types", "lookup")
    assert graded["summary"]["by_type"]["lookup"]["n"] == 1 and "correct" in graded["summary"]["by_type"]["lookup"]
    assert graded["provenance"]["config"]["read"]["reader"] == "extractive"
    retrieval = _json(capsys, "eval", str(qa))  # no --config, no --reader: retrieval, as before
    assert "metrics" in retrieval and retrieval["provenance"]["config"]["read"]["reader"] == "none"


def test_search_and_ask_take_a_config(capsys, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "meals.md").write_text("# Meals\n\nThe daily meal limit is 70 dollars per person.\n")
    (docs / "travel.md").write_text("# Travel\n\nBook trains two weeks ahead.\n")
    index = str(tmp_path / "idx")
    assert main(["index", str(docs), "--index", index, "--config", "bm25", "--output", "json"]) == 0
    capsys.readouterr()
    found = _json(capsys, "search", "meal limit", "--index", index, "--config", "bm25")
    assert found["hits"][0]["doc_id"] == "meals" and found["provenance"]["config"]["name"] == "bm25"
    answered = _json(capsys, "ask", "What is the daily meal limit?", "--index", index, "--config", "bm25")
    assert "70" in answered["answer"] and answered["provenance"]["config"]["retrieve"]["retriever"] == "bm25"
    # the index was built with the bm25 config's settings: whole documents, no embedder
    info = _json(capsys, "info", "--index", index)
    assert info["settings"]["chunker"] == "none" and info["settings"]["embedder"] is None
