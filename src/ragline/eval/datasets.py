"""Load evaluation datasets: BEIR folders, and question files over plain folders.

BEIR folder (Thakur et al., "BEIR", NeurIPS 2021 Datasets and Benchmarks):
``corpus.jsonl`` (``_id``, ``title``, ``text``, optional ``metadata``), ``queries.jsonl``
(``_id``, ``text``) and ``qrels/<split>.tsv``. A QA set may add ``questions.jsonl`` (``id``,
``question``, ``answers``, ``supporting_ids``...), exposed as ``Dataset.questions``.

Questions folder: a plain folder of documents and a ``questions.jsonl``. The documents are
loaded by ``ragline.ingest.load_folder``, exactly as ``ragline index`` would load them, so a
document's id is its path relative to the folder without extension (``notes/setup.md`` ->
``notes/setup``). A question's ``supporting_ids`` (such ids, or the paths with extension) become
its qrels, relevance 1, in the only split, ``test``; a question without them is not judged.
BEIR corpus records are read by ``ragline.ingest``'s record reader too, for the same reason.

Only judged queries count in an evaluation: ``Dataset.judged_queries``, those with a relevant
doc in the split's qrels. ``Dataset.hash`` fingerprints exactly the files that were read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragline.errors import ConfigError, InputError
from ragline.eval.metrics import RELEVANCE_LEVEL, Qrels
from ragline.eval.trec import PathLike, read_beir_qrels
from ragline.ingest.loaders import document_from_record, iter_jsonl, load_folder, supported_formats
from ragline.types import Document

QUESTIONS_FILE = "questions.jsonl"


@dataclass
class Dataset:
    """A corpus, its queries and the qrels of one split, plus a fingerprint of the files read."""

    name: str
    path: Path
    split: str
    splits: list[str]
    corpus: list[Document] = field(repr=False)
    queries: dict[str, str] = field(repr=False)
    qrels: Qrels = field(repr=False)
    file_hashes: dict[str, str] = field(repr=False)  # path relative to ``path`` -> SHA-256
    questions: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def judged_queries(self) -> dict[str, str]:
        """Query id -> text for the queries with at least one relevant doc in this split."""
        judged = (qid for qid, docs in self.qrels.items() if any(g >= RELEVANCE_LEVEL for g in docs.values()))
        return {qid: self.queries[qid] for qid in judged}

    @property
    def hash(self) -> str:
        """SHA-256 over the sorted ``"relative/path  sha256"`` lines of every file read."""
        manifest = "".join(f"{name}  {digest}\n" for name, digest in sorted(self.file_hashes.items()))
        return hashlib.sha256(manifest.encode("utf-8")).hexdigest()


def load_dataset(path: PathLike, split: str = "test") -> Dataset:
    """Load a BEIR folder (it has ``corpus.jsonl``) or else a questions folder."""
    root = _folder(path)
    if (root / "corpus.jsonl").is_file():
        return load_beir(root, split)
    if (root / QUESTIONS_FILE).is_file():
        return _load_questions_folder(root, split)
    raise InputError(str(root), f"not a dataset: no corpus.jsonl (BEIR layout) and no {QUESTIONS_FILE}")


def load_beir(path: PathLike, split: str = "test") -> Dataset:
    """Load a BEIR folder with the qrels of ``split`` (and ``questions.jsonl`` if present)."""
    root = _folder(path)
    splits = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
    _check_split(split, splits, root / "qrels")
    corpus = _beir_corpus(root / "corpus.jsonl")
    if not corpus:
        raise InputError(str(root / "corpus.jsonl"), "no documents: one JSON record per line (_id, title, text)")
    queries = _beir_queries(root / "queries.jsonl")
    qrels_file = f"qrels/{split}.tsv"
    qrels = read_beir_qrels(root / qrels_file)
    read = ["corpus.jsonl", "queries.jsonl", qrels_file]
    questions = None
    if (root / QUESTIONS_FILE).is_file():
        questions = [question for _, question in _questions(root / QUESTIONS_FILE)]
        read.append(QUESTIONS_FILE)
    dataset = Dataset(root.name, root, split, splits, corpus, queries, qrels, _hashes(root, read), questions)
    _check_judged_have_text(dataset, root / qrels_file)
    return dataset


def only_types(dataset: Dataset, types: Container[str]) -> Dataset:
    """``dataset`` judged on the queries whose question (``questions.jsonl``) has one of ``types`` only."""
    from ragline.eval.qa import QAQuestion

    if not dataset.questions:
        raise ConfigError(f"--types: {dataset.path} has no questions.jsonl, so its queries have no types")
    wanted = {q.id for q in map(QAQuestion.from_record, dataset.questions) if q.type in types}
    qrels = {qid: docs for qid, docs in dataset.qrels.items() if qid in wanted}
    if not any(qid in qrels for qid in dataset.judged_queries):
        raise ConfigError(f"--types: no judged query of {dataset.path} has a question of type {sorted(types)}")
    return replace(dataset, qrels=qrels)


def _load_questions_folder(root: Path, split: str) -> Dataset:
    _check_split(split, ["test"], root / QUESTIONS_FILE)
    files_read: list[str] = []
    corpus = _folder_documents(root, files_read)
    paths = {doc.source: doc.id for doc in corpus}  # "a/b.md" -> "a/b": a path is accepted as an id
    doc_ids = set(paths.values())
    queries: dict[str, str] = {}
    qrels: Qrels = {}
    questions = []
    for where, question in _questions(root / QUESTIONS_FILE):
        query_id = question["id"]
        queries[query_id] = question["question"]
        questions.append(question)
        for ref in question.get("supporting_ids") or []:
            doc_id = ref if ref in doc_ids else paths.get(ref)
            if doc_id is None:
                hint = "a document's id is its path without extension"
                raise InputError(where, f"supporting id {ref!r} names no document of {root}; {hint}")
            qrels.setdefault(query_id, {})[doc_id] = 1
    hashes = _hashes(root, [QUESTIONS_FILE, *files_read])
    return Dataset(root.name, root, split, ["test"], corpus, queries, qrels, hashes, questions)


# --- records ---------------------------------------------------------------------------


def _beir_corpus(path: Path) -> list[Document]:
    corpus: dict[str, Document] = {}
    for where, record in iter_jsonl(path):
        document = document_from_record(record, where)
        corpus[_unique(document.id, corpus, where)] = document
    return list(corpus.values())


def _beir_queries(path: Path) -> dict[str, str]:
    queries: dict[str, str] = {}
    for where, record in iter_jsonl(path):
        queries[_unique(_id(record, "_id", where), queries, where)] = _text(record, "text", where)
    return queries


def _questions(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield validated question records; ``id`` normalized to a string."""
    seen: set[str] = set()
    for where, record in iter_jsonl(path):
        record["id"] = _unique(_id(record, "id", where), seen, where)
        seen.add(record["id"])
        _text(record, "question", where)
        if not isinstance(record.get("answers", []), list):
            raise InputError(where, "field 'answers' must be a list")
        supporting = record.get("supporting_ids", [])
        if not isinstance(supporting, list) or not all(isinstance(ref, str) for ref in supporting):
            raise InputError(where, "field 'supporting_ids' must be a list of strings")
        yield where, record


def _unique(record_id: str, seen: Container[str], where: str) -> str:
    if record_id in seen:
        raise InputError(where, f"id {record_id!r} appears twice in this file")
    return record_id


def _id(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # qrels ids are read as text, so integer ids must become text to match
    return _text(record, key, where)


def _text(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if value is None:
        raise InputError(where, f"field {key!r} is missing")
    if not isinstance(value, str):
        raise InputError(where, f"field {key!r} must be a string, got {type(value).__name__}")
    return value


# --- files -----------------------------------------------------------------------------


def _folder(path: PathLike) -> Path:
    root = Path(path)
    if not root.is_dir():
        raise InputError(str(root), "no such directory")
    return root


def _folder_documents(root: Path, files_read: list[str]) -> list[Document]:
    """The folder's documents; appends each file read (and its metadata sidecar) to ``files_read``."""

    def note(path: Path) -> None:
        files_read.append(path.relative_to(root).as_posix())
        sidecar = path.with_name(path.name + ".meta.json")  # read by load_folder too
        if sidecar.is_file():
            files_read.append(sidecar.relative_to(root).as_posix())

    report = load_folder(root, on_file=note)
    if report.errors:  # a skipped document would silently change every score computed on it
        raise report.errors[0]
    if not report.documents:  # else every question would be asked of an empty corpus
        others = {**report.unsupported, ".jsonl": report.unsupported.get(".jsonl", 1) - 1}  # not questions.jsonl
        left_out = ", ".join(f"{n} {suffix or 'without suffix'}" for suffix, n in sorted(others.items()) if n)
        raise InputError(
            str(root),
            f"{QUESTIONS_FILE} but no documents to search ({supported_formats()}"
            + (f"; left out: {left_out}" if left_out else "")
            + "); add the documents, or put passage records in corpus.jsonl (BEIR layout: _id, title, text)",
        )
    seen: set[str] = set()
    for document in report.documents:  # "a.txt" and "a.md" would both be "a"
        seen.add(_unique(document.id, seen, str(root / str(document.source))))
    return report.documents


def _hashes(root: Path, relative_paths: list[str]) -> dict[str, str]:
    """SHA-256 of each file, read in chunks so that a large corpus is never held twice."""
    hashes = {}
    for relative in relative_paths:
        digest = hashlib.sha256()
        with open(root / relative, "rb") as file:
            for chunk in iter(lambda: file.read(1 << 20), b""):
                digest.update(chunk)
        hashes[relative] = digest.hexdigest()
    return hashes


# --- checks ----------------------------------------------------------------------------


def _check_split(split: str, splits: list[str], where: Path) -> None:
    if split not in splits:
        raise ConfigError(f"unknown split {split!r} in {where}; available: {', '.join(splits) or 'none'}")


def _check_judged_have_text(dataset: Dataset, qrels_path: Path) -> None:
    missing = [qid for qid in dataset.qrels if qid not in dataset.queries]
    if missing:
        reason = f"{len(missing)} of its queries are not in queries.jsonl, e.g. {missing[:3]}"
        raise InputError(str(qrels_path), reason)
