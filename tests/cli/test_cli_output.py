"""What a new user sees from the ``ragline`` command: user text printed as written, which index answered,
stamped settings reused, chunks by default, and the small contracts (k, empty queries, snippets, sources)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main
from ragline.cli.common import snippet
from ragline.text import get_analyzer


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # rich reads COLUMNS: wide enough that table cells are not folded in the middle of the strings checked
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.delenv("RAGLINE_INDEX", raising=False)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--output", "json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1, lines
    return json.loads(lines[0])


def run_text(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 0) -> tuple[str, str]:
    assert main(list(argv)) == code
    captured = capsys.readouterr()
    return captured.out, captured.err


@pytest.fixture
def markup_docs(tmp_path: Path) -> Path:
    """Documents whose text, title and path look like rich markup."""
    root = tmp_path / "docs"
    (root / "foo[").mkdir(parents=True)
    (root / "foo[" / "bar].txt").write_text("Quoting in the forum: close a quote block with [/quote] always.")
    (root / "styles.md").write_text("# Alarm [red] tags\n\nThe [red]alarm[/red] tag colours a forum post red.")
    return root


def test_markup_in_documents_paths_and_queries_is_printed_as_written(capsys, markup_docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    out, _ = run_text(capsys, "index", str(markup_docs), "--index", index, "--embedder", "none")
    assert "2 added" in out and "0 skipped" in out  # the folder foo[ with bar].txt is indexed, not a crash
    out, _ = run_text(capsys, "search", "close a quote block", "--index", index)
    assert "[/quote]" in out and "foo[/bar]#0" in out
    out, _ = run_text(capsys, "search", "alarm tag", "--index", index)
    assert "[red]alarm[/red]" in out and "Alarm [red] tags" in out  # balanced markup is not swallowed
    out, _ = run_text(capsys, "search", "[/x] quote", "--index", index)
    assert "results for '[/x] quote'" in out
    out, _ = run_text(capsys, "ask", "How do you close a quote block?", "--index", index, "--reader", "extractive")
    assert "[/quote]" in out and "(foo[/bar]#0)" in out


def test_errors_keep_brackets_and_the_filter_caret_points_at_the_fault(capsys, markup_docs: Path, tmp_path: Path):
    index = str(tmp_path / "idx")
    run_json(capsys, "index", str(markup_docs), "--index", index, "--embedder", "none")
    expression = "acl in [red] and [/x]"
    _, err = run_text(capsys, "search", "quote", "--index", index, "--filter", expression, code=2)
    lines = err.splitlines()
    shown = next(line for line in lines if expression in line)
    caret = lines[lines.index(shown) + 1]
    column = caret.index("^") - shown.index(expression)
    assert expression[column] == "["  # the parser stops at "[/x]", after "and "
    _, err = run_text(capsys, "search", "quote", "--index", str(tmp_path / "no[/such]"), code=2)
    assert "no ragline index at " + str(tmp_path / "no[/such]") in err


def test_ask_uses_the_local_index_and_says_which_index_answered(capsys, markup_docs: Path, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_json(capsys, "index", str(markup_docs), "--embedder", "none")  # writes ./ragline-index
    result = run_json(capsys, "ask", "How do you close a quote block?", "--reader", "extractive")
    assert result["provenance"]["index"] == "ragline-index" and result["provenance"]["builtin"] is False
    sources = result["sources"]
    assert sources and sources[0]["doc_id"] == "foo[/bar]" and sources[0]["chunk_id"] == "foo[/bar]#0"
    assert {"n", "title", "score", "retriever", "text"} <= set(sources[0]) and "[/quote]" in sources[0]["text"]
    _, err = run_text(capsys, "ask", "How do you close a quote block?", "--reader", "extractive")
    assert "answered from ragline-index" in err


def test_resync_reuses_the_stamped_settings_and_names_a_contradiction(capsys, markup_docs: Path, tmp_path: Path):
    index = str(tmp_path / "idx")
    flags = ["--index", index, "--embedder", "none", "--chunker", "fixed:size=4", "--context", "breadcrumb"]
    first = run_json(capsys, "index", str(markup_docs), *flags)
    again = run_json(capsys, "index", str(markup_docs), "--index", index)  # no flags: the stamp is reused
    assert (again["added"], again["deleted"], again["unchanged"]) == (0, 0, first["added"])
    assert (again["chunker"], again["context"]) == ("fixed:size=4", "breadcrumb")
    _, err = run_text(capsys, "index", str(markup_docs), "--index", index, "--chunker", "fixed:size=8", code=2)
    assert "chunker 'fixed:size=4', not 'fixed:size=8' (--chunker)" in err
    assert "{" not in err and "another --index" in err
    _, err = run_text(capsys, "index", str(markup_docs), "--index", index, "--embedder", "minilm", code=2)
    assert "embedder 'none', not 'minilm' (--embedder)" in err


def test_index_chunks_by_default_and_none_keeps_whole_documents(capsys, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "long.txt").write_text(" ".join(f"word{i}" for i in range(250)))
    chunked = run_json(capsys, "index", str(root), "--index", str(tmp_path / "a"), "--embedder", "none")
    assert chunked["unit"] == "chunks" and chunked["chunks"] == chunked["documents"] > 1
    assert (chunked["chunker"], chunked["context"]) == ("sentence-pack:tokens=128,overlap=1", "none")
    info = run_json(capsys, "info", "--index", str(tmp_path / "a"))
    assert info["settings"]["chunker"] == "sentence-pack:tokens=128,overlap=1"
    out, _ = run_text(capsys, "info", "--index", str(tmp_path / "a"))
    assert "sentence-pack:tokens=128,overlap=1" in out and "none (BM25 only)" in out and "chunks" in out
    whole = run_json(
        capsys, "index", str(root), "--index", str(tmp_path / "b"), "--embedder", "none", "--chunker", "none"
    )
    assert (whole["unit"], whole["documents"], whole["chunks"], whole["context"]) == ("documents", 1, None, "none")


def test_eval_keeps_whole_documents_by_default(capsys, tmp_path: Path) -> None:
    root = tmp_path / "set"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text('{"_id": "d1", "text": "alpha beta"}\n{"_id": "d2", "text": "gamma"}\n')
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "alpha"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    result = run_json(capsys, "eval", str(root))
    assert result["provenance"]["ingest"] == {"chunker": "none", "context": "none"}


@pytest.mark.parametrize("argv", [["search", "x", "-k", "-1"], ["search", "x", "-k", "0"], ["ask", "x", "-k", "-1"],
                                  ["eval", "set", "--depth", "0"], ["eval", "set", "-k", "x"]])  # fmt: skip
def test_counts_below_one_are_refused(capsys, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "must be 1 or more" in err or "is not a whole number" in err


def test_an_empty_query_finds_nothing_and_says_why(capsys, markup_docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    run_json(capsys, "index", str(markup_docs), "--index", index, "--embedder", "none")
    for query in ("", "   "):
        result = run_json(capsys, "search", query, "--index", index)
        assert result["hits"] == [] and result["reason"] == "the query is empty"
    result = run_json(capsys, "search", "the of and?", "--index", index)
    assert result["hits"] == [] and "no searchable terms" in result["reason"]
    _, err = run_text(capsys, "search", " ", "--index", index)
    assert "no results: the query is empty" in err
    answer = run_json(capsys, "ask", "", "--index", index, "--reader", "extractive")
    assert answer["abstained"] and answer["sources"] == [] and answer["reason"] == "the query is empty"


def test_snippets_show_the_text_around_the_match() -> None:
    analyzer = get_analyzer("english")
    text = " ".join(f"filler{i}" for i in range(150)) + " the gateway policies apply " + "tail " * 100
    shown = snippet(text, set(analyzer("gateway policy")), analyzer, width=80)
    assert "gateway policies" in shown and shown.startswith("…") and shown.endswith("…")
    assert len(shown) <= 80 and not shown[1:].startswith(" ")
    # the window with the most distinct query terms wins over the first lone match
    text = "gateway " + "filler " * 60 + "the gateway policy and its token " + "tail " * 60
    shown = snippet(text, set(analyzer("gateway policy token")), analyzer, width=80)
    assert "gateway policy and its token" in shown
    # no match: the start of the text
    assert snippet("alpha " * 100, {"zeta"}, analyzer, width=40).startswith("alpha alpha")
