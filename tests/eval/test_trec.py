"""TREC run/qrels files and BEIR qrels TSV: round trips, the written order, and line-level errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.errors import ConfigError, InputError
from ragline.eval.trec import (
    check_run_target,
    read_beir_qrels,
    read_qrels,
    read_run,
    write_beir_qrels,
    write_qrels,
    write_run,
)

RUN = {"q1": {"a": 0.5, "b": 2.0, "c": 0.5, "é": -1e-300}, "q2": {"z": 1.0}, "q3": {}}


def test_run_is_written_best_first_with_ties_by_doc_id_descending(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    write_run(RUN, path, tag="bm25")
    assert path.read_text(encoding="utf-8").splitlines() == [
        "q1 Q0 b 1 2.0 bm25",
        "q1 Q0 c 2 0.5 bm25",
        "q1 Q0 a 3 0.5 bm25",
        "q1 Q0 é 4 -1e-300 bm25",
        "q2 Q0 z 1 1.0 bm25",
    ]
    assert read_run(path) == {q: docs for q, docs in RUN.items() if docs}  # an empty query leaves no line


# Any non-empty text: spaces (Wikipedia titles), tabs, "%" and escapes that look decoded already.
unusual = st.sampled_from(["a", " ", "é", "%", "%20", "\t", "\x1c", "\u3000", "Lilu (mythology)"])
ids = st.lists(unusual | st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6).map("".join)
tsv_ids = st.text(st.characters(blacklist_categories=("Z", "C")), min_size=1, max_size=8)  # BEIR: no tabs
finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None, database=None)
@given(st.dictionaries(ids, st.dictionaries(ids, finite, min_size=1, max_size=5), max_size=5))
def test_run_round_trip_is_exact(tmp_path_factory: pytest.TempPathFactory, run: dict) -> None:
    path = tmp_path_factory.mktemp("run") / "run.trec"
    write_run(run, path)
    assert read_run(path) == run


@settings(max_examples=60, deadline=None, database=None)
@given(st.dictionaries(ids, st.dictionaries(ids, st.integers(-1, 4), min_size=1, max_size=5), max_size=5))
def test_qrels_round_trips(tmp_path_factory: pytest.TempPathFactory, qrels: dict) -> None:
    folder = tmp_path_factory.mktemp("qrels")
    write_qrels(qrels, folder / "qrels.trec")
    assert read_qrels(folder / "qrels.trec") == qrels


@settings(max_examples=60, deadline=None, database=None)
@given(st.dictionaries(tsv_ids, st.dictionaries(tsv_ids, st.integers(-1, 4), min_size=1, max_size=5), max_size=5))
def test_beir_qrels_round_trip(tmp_path_factory: pytest.TempPathFactory, qrels: dict) -> None:
    folder = tmp_path_factory.mktemp("qrels")
    write_beir_qrels(qrels, folder / "qrels.tsv")
    assert read_beir_qrels(folder / "qrels.tsv") == qrels


def test_a_query_named_like_the_header_is_data(tmp_path: Path) -> None:
    """Found by the round trip above: the first line was skipped whenever its query id was "query-id"."""
    write_beir_qrels({"query-id": {"0": 0}}, tmp_path / "qrels.tsv")
    assert read_beir_qrels(tmp_path / "qrels.tsv") == {"query-id": {"0": 0}}


def test_files_are_read_the_same_by_pytrec_eval(tmp_path: Path) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"z": 1}}
    write_run(RUN, tmp_path / "run")
    write_qrels(qrels, tmp_path / "qrels")
    with open(tmp_path / "run") as run_file, open(tmp_path / "qrels") as qrels_file:
        assert pytrec_eval.parse_run(run_file) == read_run(tmp_path / "run")
        assert pytrec_eval.parse_qrel(qrels_file) == qrels


def test_beir_qrels_keep_spaces_in_ids_and_skip_the_header(tmp_path: Path) -> None:
    path = tmp_path / "test.tsv"
    text = "query-id\tcorpus-id\tscore\r\nq 1\tLilu (mythology)\t1\r\n\nq 1\tAlû\t0\n"  # CRLF, blank line
    path.write_text(text, encoding="utf-8")
    assert read_beir_qrels(path) == {"q 1": {"Lilu (mythology)": 1, "Alû": 0}}
    write_beir_qrels({"q 1": {"Lilu (mythology)": 1}}, path)
    assert path.read_text(encoding="utf-8") == "query-id\tcorpus-id\tscore\nq 1\tLilu (mythology)\t1\n"


@pytest.mark.parametrize(
    ("reader", "text", "line", "reason"),
    [
        (read_run, "q Q0 d 1 1.0 t\nq Q0 d\n", 2, "expected 6 columns (qid Q0 docid rank score tag), got 3"),
        (read_run, "q Q0 d 1 abc tag\n", 1, "score 'abc' is not a number"),
        (read_run, "q Q0 d 1 nan tag\n", 1, "score 'nan' is not a finite number"),
        (read_run, "q Q0 d 1.0 tag 1\n", 1, "rank '1.0' is not an integer"),
        (read_run, "q Q0 d 1 1 t\n\nq Q0 d 2 0 t\n", 3, "doc 'd' appears twice for query 'q'"),
        (read_qrels, "q 0 d 1\nq 0 e\n", 2, "expected 4 columns (qid iteration docid relevance), got 3"),
        (read_qrels, "q 0 d 0.5\n", 1, "relevance '0.5' is not an integer"),
        (read_beir_qrels, "query-id\tcorpus-id\tscore\nq d 1\n", 2, "expected 3 columns"),
        (read_beir_qrels, "q\td\tx\n", 1, "score 'x' is not an integer"),
        (read_beir_qrels, "q\t\t1\n", 1, "empty column"),
        (read_run, b"q Q0 d 1 1 t\nq Q0 \xff 2 0 t\n", 2, "not UTF-8 text"),
    ],
)
def test_malformed_lines_name_path_line_and_reason(
    tmp_path: Path, reader, text: str | bytes, line: int, reason: str
) -> None:
    path = tmp_path / "input"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    with pytest.raises(InputError) as raised:
        reader(path)
    assert raised.value.source == f"{path}:{line}"
    assert reason in raised.value.reason


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot open"):
        read_run(tmp_path / "absent")


def test_empty_file_is_an_empty_run(tmp_path: Path) -> None:
    (tmp_path / "run").write_text("\n")
    assert read_run(tmp_path / "run") == {}


def test_ids_with_spaces_are_escaped_and_read_back_identically(tmp_path: Path) -> None:
    run = {"5a77ec11 q": {"Lilu (mythology)": 2.0, "Alû": 1.0, "100%": 0.5, "a%20b": 0.25}}
    write_run(run, tmp_path / "run")
    assert (tmp_path / "run").read_text(encoding="utf-8").splitlines() == [
        "5a77ec11%20q Q0 Lilu%20(mythology) 1 2.0 ragline",
        "5a77ec11%20q Q0 Alû 2 1.0 ragline",
        "5a77ec11%20q Q0 100%25 3 0.5 ragline",
        "5a77ec11%20q Q0 a%2520b 4 0.25 ragline",
    ]
    assert read_run(tmp_path / "run") == run
    qrels = {"5a77ec11 q": {"Lilu (mythology)": 1}}
    write_qrels(qrels, tmp_path / "qrels")
    assert read_qrels(tmp_path / "qrels") == qrels


def test_escapes_that_are_not_utf8_name_the_line(tmp_path: Path) -> None:
    (tmp_path / "run").write_text("q Q0 d 1 1 t\nq Q0 %FF 2 0 t\n")
    with pytest.raises(InputError, match="not UTF-8") as raised:
        read_run(tmp_path / "run")
    assert raised.value.source == f"{tmp_path / 'run'}:2"


def test_run_target_is_checked_before_anything_is_computed(tmp_path: Path) -> None:
    check_run_target(tmp_path / "run.trec")
    with pytest.raises(ConfigError, match="no directory"):
        check_run_target(tmp_path / "absent" / "run.trec")
    with pytest.raises(ConfigError, match="is a directory"):
        check_run_target(tmp_path)
    with pytest.raises(ConfigError, match="tag"):
        check_run_target(tmp_path / "run.trec", tag="two words")


@pytest.mark.parametrize(("run", "what"), [({"q": {"": 1.0}}, "doc id"), ({"": {"a": 1.0}}, "query id")])
def test_unwritable_ids_raise_and_leave_no_file(tmp_path: Path, run: dict, what: str) -> None:
    path = tmp_path / "run"
    with pytest.raises(ConfigError, match=what):
        write_run({"ok": {"a": 1.0}, **run}, path)
    assert list(tmp_path.iterdir()) == []


def test_non_finite_scores_and_bad_tags_are_not_written(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not finite"):
        write_run({"q": {"a": float("inf")}}, tmp_path / "run")
    with pytest.raises(ConfigError, match="tag"):
        write_run({"q": {"a": 1.0}}, tmp_path / "run", tag="two words")
