"""Read and write TREC run files, TREC qrels files and BEIR qrels TSV.

- Run file (trec_eval's input): ``qid Q0 docid rank score tag``, whitespace-separated.
  On reading, the rank column must be an integer but is otherwise ignored: like trec_eval,
  ragline re-ranks by score (``metrics.rank_documents``). On writing, docs are sorted by that
  rule and ranked from 1, so trec_eval, pytrec_eval and ragline all see the same order.
- Qrels file: ``qid iteration docid relevance``, whitespace-separated; iteration is ignored.
- BEIR qrels: ``query-id<TAB>corpus-id<TAB>score`` after a header line. Tabs only, so ids may
  contain spaces (HotpotQA's doc ids are Wikipedia titles).

TREC files split on whitespace, so an id written there has its whitespace and ``%`` percent-encoded
(``Lilu (mythology)`` -> ``Lilu%20(mythology)``, UTF-8 bytes as ``%XX``, as in a URL), and reading
decodes every ``%XX``: a written run or qrels file reads back to the same ids, and trec_eval, which
compares ids as text, matches a run and qrels both written here. An id without whitespace or ``%``
is written as it is.

A malformed line raises ``InputError`` whose source is ``path:line``. A doc listed twice for a
query is an error too (trec_eval rejects duplicate docs in a run).
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote

from ragline.errors import ConfigError, InputError
from ragline.eval.metrics import Qrels, QrelsLike, Run, RunLike, rank_documents

PathLike = str | os.PathLike[str]

RUN_COLUMNS = "qid Q0 docid rank score tag"
QRELS_COLUMNS = "qid iteration docid relevance"
BEIR_HEADER = "query-id\tcorpus-id\tscore"


def read_run(path: PathLike) -> Run:
    """Read a TREC run file into query id -> doc id -> score."""
    run: Run = {}
    for where, line in _numbered_lines(path):
        query_id, _q0, doc_id, rank, score, _tag = _columns(line.split(), RUN_COLUMNS, where)
        _integer(rank, "rank", where)  # checked only: a non-integer rank means shifted columns
        _add(run, _decoded(query_id, where), _decoded(doc_id, where), _number(score, "score", where), where)
    return run


def write_run(run: RunLike, path: PathLike, tag: str = "ragline") -> None:
    """Write a run as a TREC run file, each query's docs best first and ranked from 1."""
    check_run_target(path, tag)
    _write_atomically(path, _run_lines(run, tag))


def check_run_target(path: PathLike, tag: str = "ragline") -> None:
    """Raise ``ConfigError`` now if ``write_run(..., path, tag)`` could not write there, so that a long
    evaluation is not run only to find that its run cannot be saved."""
    _check_token(tag, "tag", "whitespace")
    target = Path(path)
    if target.is_dir():
        raise ConfigError(f"cannot write the run to {target}: it is a directory; give a file name")
    folder = target.parent
    if not folder.is_dir():
        raise ConfigError(f"cannot write the run to {target}: no directory {folder}; create it first")
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"cannot write the run to {target}: directory {folder} is not writable")


_UNSAFE = re.compile(r"[%\s]")  # \s is exactly what str.split() splits on (str.isspace), and the escape itself


def encode_id(value: str) -> str:
    """An id as one TREC column: whitespace and ``%`` percent-encoded (``decode_id`` reverses it)."""
    return _UNSAFE.sub(lambda m: "".join(f"%{byte:02X}" for byte in m.group().encode("utf-8")), value)


def decode_id(column: str) -> str:
    """The id a TREC column holds: every ``%XX`` decoded (UTF-8), other text kept."""
    return unquote(column, errors="strict") if "%" in column else column


def read_qrels(path: PathLike) -> Qrels:
    """Read a TREC qrels file into query id -> doc id -> relevance grade."""
    qrels: Qrels = {}
    for where, line in _numbered_lines(path):
        query_id, _iteration, doc_id, relevance = _columns(line.split(), QRELS_COLUMNS, where)
        qid, did = _decoded(query_id, where), _decoded(doc_id, where)
        _add(qrels, qid, did, _integer(relevance, "relevance", where), where)
    return qrels


def write_qrels(qrels: QrelsLike, path: PathLike) -> None:
    """Write qrels as a TREC qrels file (iteration column 0)."""
    _write_atomically(path, _qrels_lines(qrels, " ", "{query} 0 {doc} {grade}\n"))


def read_beir_qrels(path: PathLike) -> Qrels:
    """Read a BEIR qrels TSV (header line ``query-id corpus-id score``, tab-separated)."""
    qrels: Qrels = {}
    for number, (where, line) in enumerate(_numbered_lines(path)):
        fields = line.split("\t")
        if number == 0 and fields == BEIR_HEADER.split("\t"):  # the header; BEIR always writes one
            continue  # (a query named "query-id" is data: its score is a number)
        query_id, doc_id, score = _columns(fields, BEIR_HEADER.replace("\t", " "), where)
        _add(qrels, query_id, doc_id, _integer(score, "score", where), where)
    return qrels


def write_beir_qrels(qrels: QrelsLike, path: PathLike) -> None:
    """Write qrels as a BEIR qrels TSV with its header line."""
    rows = _qrels_lines(qrels, "\t", "{query}\t{doc}\t{grade}\n")
    _write_atomically(path, itertools.chain([BEIR_HEADER + "\n"], rows))


# --- reading ---------------------------------------------------------------------------


def _numbered_lines(path: PathLike) -> Iterator[tuple[str, str]]:
    """Yield ``("path:line", text)`` for each non-blank line of a UTF-8 text file."""
    with _open_bytes(path) as file:  # bytes, so that a decoding error can name its line
        for number, raw in enumerate(file, start=1):
            where = f"{path}:{number}"
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                raise InputError(where, "not UTF-8 text") from error
            if line.strip():
                yield where, line


def _open_bytes(path: PathLike) -> BinaryIO:
    try:
        return open(path, "rb")
    except OSError as error:
        raise InputError(str(path), f"cannot open: {error.strerror or error}") from error


def _columns(fields: list[str], expected: str, where: str) -> list[str]:
    if len(fields) != len(expected.split()):
        raise InputError(where, f"expected {len(expected.split())} columns ({expected}), got {len(fields)}")
    if "" in fields:
        raise InputError(where, f"empty column in ({expected})")
    return fields


def _decoded(column: str, where: str) -> str:
    try:
        return decode_id(column)
    except UnicodeDecodeError:
        raise InputError(where, f"id {column!r}: its %XX escapes are not UTF-8 (write '%' as %25)") from None


def _number(text: str, what: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(where, f"{what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(where, f"{what} {text!r} is not a finite number")
    return value


def _integer(text: str, what: str, where: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(where, f"{what} {text!r} is not an integer") from None


def _add(table: dict[str, dict], query_id: str, doc_id: str, value: float, where: str) -> None:
    docs = table.setdefault(query_id, {})
    if doc_id in docs:
        raise InputError(where, f"doc {doc_id!r} appears twice for query {query_id!r}")
    docs[doc_id] = value


# --- writing ---------------------------------------------------------------------------


def _run_lines(run: RunLike, tag: str) -> Iterator[str]:
    for query_id, scores in run.items():
        _check_token(query_id, "query id", "nothing")
        query_column = encode_id(query_id)
        for rank, doc_id in enumerate(rank_documents(scores), start=1):
            _check_token(doc_id, "doc id", "nothing")
            score = float(scores[doc_id])
            if not math.isfinite(score):
                raise ConfigError(f"query {query_id!r}, doc {doc_id!r}: score {score} is not finite")
            # repr() is the shortest text that reads back to the same float: round trips are exact.
            yield f"{query_column} Q0 {encode_id(doc_id)} {rank} {score!r} {tag}\n"


def _qrels_lines(qrels: QrelsLike, separator: str, template: str) -> Iterator[str]:
    trec = separator == " "  # TREC qrels encode their ids; BEIR TSV keeps them, so tabs are refused
    forbidden = "nothing" if trec else "tabs or newlines"
    for query_id, judgments in qrels.items():
        _check_token(query_id, "query id", forbidden)
        for doc_id, grade in judgments.items():
            _check_token(doc_id, "doc id", forbidden)
            query, doc = (encode_id(query_id), encode_id(doc_id)) if trec else (query_id, doc_id)
            yield template.format(query=query, doc=doc, grade=int(grade))


def _check_token(value: str, what: str, forbidden: str) -> None:
    """Ids must survive the split on reading: non-empty and, unless encoded ("nothing"), without the separator."""
    if forbidden == "whitespace":
        bad = value.split() != [value]
    else:
        bad = forbidden != "nothing" and any(c in value for c in "\t\r\n")
    if not value or bad:
        without = "" if forbidden == "nothing" else f", without {forbidden}"
        raise ConfigError(f"{what} {value!r} cannot be written: it must be non-empty{without}")


def _write_atomically(path: PathLike, lines: Iterable[str]) -> None:
    """Write to a temporary file and rename it, so that an error midway (say, a bad id)
    never leaves a truncated file that looks complete to an evaluation script."""
    target = Path(path)
    temporary = target.with_name(target.name + ".tmp")
    try:
        with open(temporary, "w", encoding="utf-8", newline="\n") as file:
            file.writelines(lines)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
