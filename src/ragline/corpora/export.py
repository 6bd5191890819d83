"""Write a generated corpus to disk: a BEIR folder, or a plain folder of Markdown files.

BEIR layout (Thakur et al., 2021), readable by ``ragline.eval.datasets.load_beir``::

    corpus.jsonl       {"_id", "title", "text", "metadata"}
    queries.jsonl      {"_id", "text"}
    qrels/test.tsv     query-id <tab> corpus-id <tab> score, with a header line
    questions.jsonl    {"id", "question", "answers", "supporting_ids", "type", "user_groups",
                        "expected_abstain", "evidence", ...}

A question the user must not get answered (``expected_abstain``) has no qrels: nothing the user may
see is relevant, and judging the forbidden document relevant would reward the leak.

Markdown folder, readable by ``ragline.ingest`` and ``ragline.eval.datasets.load_dataset``: one
``<doc_id>.md`` per document with YAML front matter (title, acl, version, effective_date,
superseded_by, doc_type, then the other metadata), plus ``questions.jsonl``.

Both writers are atomic: they fill a temporary folder beside ``out_dir`` and rename it into place,
so a reader never sees a half-written export. An existing ``out_dir`` is replaced only if it is
empty or is an earlier export (it holds the ``.ragline-corpus.json`` marker).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragline.corpora.base import Corpus, Question
from ragline.errors import ConfigError

MARKER = ".ragline-corpus.json"
FRONT_MATTER_KEYS = ("title", "doc_type", "acl", "version", "effective_date", "superseded_by")
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def export_beir(corpus: Corpus, out_dir: str | Path) -> Path:
    """Write ``corpus`` as a BEIR folder with a ``questions.jsonl``; return the folder."""
    with _atomic_folder(Path(out_dir), corpus, "beir") as tmp:
        _write_jsonl(
            tmp / "corpus.jsonl",
            (
                {"_id": doc.id, "title": doc.title, "text": doc.text, "metadata": doc.metadata}
                for doc in corpus.documents
            ),
        )
        _write_jsonl(tmp / "queries.jsonl", ({"_id": q.id, "text": q.text} for q in corpus.questions))
        (tmp / "qrels").mkdir()
        lines = ["query-id\tcorpus-id\tscore"]
        lines += [f"{q.id}\t{doc_id}\t1" for q in corpus.questions for doc_id in q.gold_doc_ids]
        (tmp / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        _write_jsonl(tmp / "questions.jsonl", (question_record(q) for q in corpus.questions))
    return Path(out_dir)


def write_markdown_folder(corpus: Corpus, out_dir: str | Path) -> Path:
    """Write each document as ``<doc_id>.md`` with YAML front matter, plus ``questions.jsonl``."""
    for doc in corpus.documents:
        if not _SAFE_ID.fullmatch(doc.id):
            raise ConfigError(f"document id {doc.id!r} cannot be a file name: use letters, digits, '.', '_', '-'")
    with _atomic_folder(Path(out_dir), corpus, "markdown") as tmp:
        for doc in corpus.documents:
            meta = {"title": doc.title, **{key: doc.metadata.get(key) for key in FRONT_MATTER_KEYS[1:]}}
            meta.update((key, value) for key, value in doc.metadata.items() if key not in meta)
            # JSON scalars and flow lists are valid YAML, and they quote anything ambiguous.
            header = "".join(f"{key}: {json.dumps(value, ensure_ascii=False)}\n" for key, value in meta.items())
            (tmp / f"{doc.id}.md").write_text(f"---\n{header}---\n{doc.text}", encoding="utf-8")
        _write_jsonl(tmp / "questions.jsonl", (question_record(q) for q in corpus.questions))
    return Path(out_dir)


def question_record(question: Question) -> dict[str, Any]:
    """The ``questions.jsonl`` record of a question."""
    return {
        "id": question.id,
        "question": question.text,
        "answers": question.answers,
        "supporting_ids": list(question.gold_doc_ids),
        "type": question.type,
        "user_groups": list(question.user_groups),
        "expected_abstain": question.expected_abstain,
        "evidence": [{"doc_id": doc_id, "sentence": sentence} for doc_id, sentence in question.evidence],
        "bridge": question.bridge,
        "distractor_answers": list(question.distractor_answers),
        "forbidden_ids": list(question.forbidden_doc_ids),
    }


def _write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


@contextmanager
def _atomic_folder(out_dir: Path, corpus: Corpus, layout: str) -> Iterator[Path]:
    """Yield an empty temporary folder; on success, it replaces ``out_dir`` in one rename."""
    if out_dir.exists() and not _replaceable(out_dir):
        raise ConfigError(
            f"{out_dir} exists and is not an earlier corpus export (no {MARKER}); choose an empty or new folder"
        )
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        yield tmp
        marker = {"corpus": corpus.name, "seed": corpus.seed, "fingerprint": corpus.fingerprint(), "layout": layout}
        (tmp / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        _swap_in(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _replaceable(path: Path) -> bool:
    return path.is_dir() and ((path / MARKER).is_file() or not any(path.iterdir()))


def _swap_in(tmp: Path, out_dir: Path) -> None:
    """Rename ``tmp`` to ``out_dir``; an old ``out_dir`` is moved aside first and removed after."""
    if not out_dir.exists():
        os.rename(tmp, out_dir)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
    os.rename(out_dir, old / "export")
    try:
        os.rename(tmp, out_dir)
    except BaseException:
        os.rename(old / "export", out_dir)  # put the previous export back
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)
