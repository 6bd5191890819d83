"""The ``ragline`` command end to end: JSON contracts, sync counts, bad input, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragline.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--output", "json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1, lines
    return json.loads(lines[0])


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "travel.md").write_text("---\nacl: [all]\n---\n# Travel policy\n\nEconomy class for flights under 6 hours.")
    (root / "salary.md").write_text("---\nacl: [hr]\n---\n# Salary bands\n\nBand 4 pays a salary of $84,000 a year.")
    (root / "vpn.txt").write_text("The remote access gateway needs a hardware token.")
    (root / "broken.txt").write_bytes(b"\xff\xfe\x00\x00binary")
    return root


def test_index_then_resync_counts_adds_updates_deletes(capsys, docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    first = run_json(capsys, "index", str(docs), "--index", index, "--embedder", "none")
    assert (first["added"], first["updated"], first["deleted"], first["skipped"]) == (3, 0, 0, 1)
    assert first["documents"] == 3
    (docs / "vpn.txt").write_text("The remote access gateway needs a hardware token and a PIN.")
    (docs / "travel.md").unlink()
    (docs / "new.md").write_text("# Copier\n\nBadge release printing.")
    second = run_json(capsys, "index", str(docs), "--index", index, "--embedder", "none")
    assert (second["added"], second["updated"], second["deleted"], second["unchanged"]) == (1, 1, 1, 1)
    assert second["documents"] == 3
    third = run_json(capsys, "index", str(docs), "--index", index, "--embedder", "none")
    assert (third["added"], third["updated"], third["deleted"], third["unchanged"]) == (0, 0, 0, 3)
    assert third["generation"] == second["generation"]  # nothing changed, nothing committed


def test_a_file_that_turns_bad_keeps_its_indexed_version(capsys, docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    run_json(capsys, "index", str(docs), "--index", index, "--embedder", "none")
    (docs / "vpn.txt").write_bytes(b"\x00\x01 now binary")
    again = run_json(capsys, "index", str(docs), "--index", index, "--embedder", "none")
    assert again["deleted"] == 0 and again["skipped"] == 2
    hits = run_json(capsys, "search", "remote access gateway", "--index", index)["hits"]
    assert hits[0]["doc_id"] == "vpn"


def test_search_filter_applies_before_top_k(capsys, docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    run_json(capsys, "index", str(docs), "--index", index, "--embedder", "none")
    everyone = run_json(capsys, "search", "band salary travel", "--index", index, "--filter", "acl = all")
    assert [h["doc_id"] for h in everyone["hits"]] == ["travel"]
    hr = run_json(capsys, "search", "band salary travel", "--index", index, "--filter", "acl in [hr]", "-k", "1")
    assert [h["doc_id"] for h in hr["hits"]] == ["salary"]
    assert hr["provenance"]["filter"] == "acl in [hr]"


def test_info_reports_stamps(capsys, docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    run_json(capsys, "index", str(docs), "--index", index, "--embedder", "none")
    info = run_json(capsys, "info", "--index", index)
    assert info["documents"] == 3 and info["generation"] == 1 and len(info["segments"]) == 1
    assert info["settings"]["analyzer"]["name"] == "english" and info["ragline_version"]


def test_errors_are_one_line_on_stderr_with_exit_2(capsys, tmp_path: Path) -> None:
    assert main(["search", "x", "--index", str(tmp_path / "missing")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "no ragline index" in captured.err
    assert main(["search", "x", "--index", str(tmp_path / "missing"), "--filter", "a in b"]) == 2


def test_eval_reports_malformed_qrels_with_file_and_line(capsys, tmp_path: Path) -> None:
    root = tmp_path / "set"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text('{"_id": "d1", "text": "alpha"}\n')
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "alpha"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\n")
    assert main(["eval", str(root), "--output", "json"]) == 2
    assert "test.tsv:2" in capsys.readouterr().err


def test_eval_judge_needs_a_reader(capsys, tmp_path: Path) -> None:
    assert main(["eval", str(tmp_path), "--judge", "default"]) == 2
    assert "--judge checks the citations of answers: give a --reader" in capsys.readouterr().err


@pytest.mark.slow
def test_eval_json_contract_on_scifact(bench: Path, tmp_path: Path) -> None:
    """The acceptance contract: one JSON line on stdout; SciFact BM25 within 0.005 of Pyserini's 0.6789."""
    run_file = tmp_path / "scifact.run"
    cmd = [
        sys.executable,
        "-m",
        "ragline",
        "eval",
        str(bench / "scifact"),
        "--retriever",
        "bm25",
        "--k1",
        "0.9",
        "--b",
        "0.4",
        "--variant",
        "lucene",
        "--split",
        "test",
        "--output",
        "json",
        "--save-run",
        str(run_file),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert result["dataset"] == "scifact" and result["queries"] == 300
    assert abs(result["metrics"]["ndcg@10"] - 0.6789) <= 0.005
    assert {"recall@100", "mrr@10", "map@100"} <= result["metrics"].keys()
    provenance = result["provenance"]
    assert provenance["ragline_version"] and len(provenance["dataset_hash"]) == 64
    assert provenance["retriever"]["bm25"] == {"variant": "lucene", "k1": 0.9, "b": 0.4, "delta": 0.5, "epsilon": 0.25}
    # the whole pipeline config, flags applied, and the commit of the checkout that ran it
    assert provenance["config"]["schema"] == 1 and provenance["config"]["retrieve"]["retriever"] == "bm25"
    assert provenance["config"]["index"]["bm25"] == {"variant": "lucene", "k1": 0.9, "b": 0.4}
    assert provenance["config"]["ingest"] == {"chunker": "none", "context": "none"}
    assert len(provenance["commit"]) == 40 and isinstance(provenance["dirty"], bool)
    assert len({line.split()[0] for line in run_file.read_text().splitlines()}) == 300


def test_ask_json_contract_with_the_extractive_reader(capsys, docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    run_json(capsys, "index", str(docs), "--index", index, "--embedder", "none")
    result = run_json(
        capsys, "ask", "How much does band 4 pay a year?", "--index", index, "--reader", "extractive", "--groups", "hr"
    )
    assert set(result) >= {"answer", "abstained", "citations", "provenance"}
    assert not result["abstained"] and "$84,000" in result["answer"]
    assert result["citations"][0]["doc_id"] == "salary" and {"n", "chunk_id", "title", "text"} <= set(
        result["citations"][0]
    )
    # the same question asked by a user outside the group: the salary page is never retrieved
    outside = run_json(
        capsys, "ask", "How much does band 4 pay a year?", "--index", index, "--reader", "extractive", "--groups", "all"
    )
    assert outside["abstained"] and outside["citations"] == []


def test_ask_json_names_the_cascade_stage_that_answered(capsys, docs: Path, tmp_path: Path) -> None:
    """``stage`` in ``ask --output json``: the cascade's stage that answered, null when every stage declined.
    Planted fault: ask's JSON without the ``stage`` key fails here."""
    index = str(tmp_path / "idx")
    run_json(capsys, "index", str(docs), "--index", index, "--embedder", "none")
    spec = "cascade:readers=extractive:threshold=0.99+extractive"
    args = ["--index", index, "--reader", spec]
    result = run_json(capsys, "ask", "How much does band 4 pay a year?", *args, "--groups", "hr")
    assert result["stage"] == "extractive#2" and "$84,000" in result["answer"]
    outside = run_json(capsys, "ask", "How much does band 4 pay a year?", *args, "--groups", "all")
    assert outside["abstained"] and outside["stage"] is None
    plain = run_json(capsys, "ask", "How much does band 4 pay a year?", "--index", index, "--reader", "extractive")
    assert "stage" not in plain  # only a cascade has stages


def test_index_with_a_chunker_syncs_chunks_and_keeps_a_failed_files_chunks(capsys, docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    flags = ["--index", index, "--embedder", "none", "--chunker", "fixed:size=4", "--context", "breadcrumb"]
    first = run_json(capsys, "index", str(docs), *flags)
    assert first["unit"] == "chunks" and first["added"] == first["documents"] > 3
    (docs / "vpn.txt").write_bytes(b"\x00 now binary")
    again = run_json(capsys, "index", str(docs), *flags)
    assert again["deleted"] == 0 and again["documents"] == first["documents"]
    hits = run_json(capsys, "search", "hardware token", "--index", index)["hits"]
    assert hits[0]["doc_id"] == "vpn" and hits[0]["chunk_id"].startswith("vpn#")
    # another chunker on the same index is refused, not silently mixed
    assert main(["index", str(docs), "--index", index, "--embedder", "none", "--chunker", "fixed:size=8"]) == 2


def test_one_query_commands_get_one_blas_thread_unless_the_user_chose() -> None:
    from ragline.cli import one_query_blas

    for argv, given, expected in [
        (["search", "x"], {}, {"OPENBLAS_NUM_THREADS": "1"}),
        (["--version"], {}, {}),
        (["ask", "x", "--reader", "extractive"], {"OPENBLAS_NUM_THREADS": "2"}, {"OPENBLAS_NUM_THREADS": "2"}),
        (["index", "./docs"], {}, {}),  # indexing multiplies large matrices: the default stays
        (["eval", "./data"], {}, {}),
    ]:
        environ = dict(given)
        one_query_blas(argv, environ)
        assert environ == expected, argv
