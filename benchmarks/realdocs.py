"""The real-document QA set: the METADATA of pinned packages in the venv, and hand-written questions.

Each document is one package's ``*.dist-info/METADATA`` exactly as installed (header fields, then its
long description: license, authors, maintainers, what it does). Only packages pinned in
pyproject.toml are used, so every machine that runs ``make setup`` has the same text; the SHA-256 of
each METADATA file is recorded in ``SOURCES`` and checked, so a version change is reported, never
silently evaluated. Questions (``benchmarks/realdocs/questions.jsonl``, written by hand) have gold
answers and gold documents, some are unanswerable, and each belongs to the ``calibration`` or the
``report`` half.

    .venv/bin/python benchmarks/realdocs.py --out benchmarks/data/realdocs            # all questions
    .venv/bin/python benchmarks/realdocs.py --out DIR --split report                    # the reported half

The output is a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``, ``questions.jsonl``)
that ``ragline eval DIR --reader extractive`` reads.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sysconfig
from pathlib import Path

from ragline.errors import InputError

QUESTIONS = Path(__file__).parent / "realdocs" / "questions.jsonl"
SPLITS = ("calibration", "report")

# document id -> (dist-info folder, SHA-256 of its METADATA); versions as pinned in pyproject.toml.
SOURCES: dict[str, tuple[str, str]] = {
    "httpx": ("httpx-0.28.1.dist-info", "febb9b0f8f3e80d57c8199c304f35c4336e8581d1d18d7983c92766b82793b25"),
    "pypdf": ("pypdf-7.1.1.dist-info", "ba172e01943c9bf5452fa33a2de42d90284f18f5505d8dc17567f8533079c345"),
    "numba": ("numba-0.68.1.dist-info", "03180342d0a32eeed6a7ae09124b5c73d4d3acd8208cfe3fd039f4f440088b0b"),
    "lxml": ("lxml-6.1.3.dist-info", "aad89f8107bc74045b86c9b7f7c0984196102520dd7faed5e4e45693b7c315ef"),
    "pyyaml": ("pyyaml-6.0.4.dist-info", "ad52ca347a4edcd0d4e10b51cd2e6e7107842313fa10c9206a70ce44ed65a760"),
    "jieba": ("jieba-0.42.1.dist-info", "5661d2cfc5b23f8c1b5ed4cecfa1ec866ddf563273c61e3911a362a3e6f3eea1"),
    "pytest": ("pytest-9.2.0.dist-info", "006823d1759e40b4546ff4296945eda3f0692e799f724bb235edd0512d42eead"),
    "pystemmer": ("pystemmer-3.1.0.dist-info", "60d89408e47c14b816b5cfbba4cede14081ce7ea65ec5aaeda4bc25c195bcbc6"),
    "rank-bm25": ("rank_bm25-0.2.2.dist-info", "1de65ad7ae030a81c3006d546f1939bf15dc1e3b45728c469a9c4097b08840e8"),
    "tantivy": ("tantivy-0.27.0.dist-info", "5cf3c0f62e80cb3c65c72cce473d94b3830356d3094f38ffc8b84a2e3399a108"),
    "numpy": ("numpy-2.4.6.dist-info", "b082c52ccbe3b880bae177c35171b52ed6c947f3ad71e3762f2723f60a411de0"),
    "faiss-cpu": ("faiss_cpu-1.15.1.dist-info", "ea9516cb19c2bcbcf915a2bdeb06006bcec125e0a1d22eb5d0724f0e1bfc903c"),
    "hypothesis": ("hypothesis-6.170.17.dist-info", "645b099ac6a691396a7edea134ee9086577c3dcbb58431f3a8a5fdb350267da4"),
    "rich": ("rich-15.0.0.dist-info", "fad34fc603fac4481bf81f8dd629492fc302c0ec31909c86644751512afb2e3b"),
}


def site_packages() -> Path:
    """The running interpreter's site-packages (the venv's, when run with its python)."""
    return Path(sysconfig.get_paths()["purelib"])


def read_source(doc_id: str, root: Path) -> str:
    """The METADATA text of ``doc_id``, after checking its SHA-256 against ``SOURCES``."""
    folder, digest = SOURCES[doc_id]
    path = root / folder / "METADATA"
    if not path.is_file():
        raise InputError(str(path), f"missing: install the pinned {folder.removesuffix('.dist-info')} (make setup)")
    data = path.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != digest:
        raise InputError(
            str(path),
            f"SHA-256 {actual} differs from the recorded {digest}: the installed version is not the pinned one; "
            "reinstall with make setup, or update SOURCES and re-check the questions' answers",
        )
    return data.decode("utf-8")


def documents(root: Path) -> list[dict[str, str]]:
    """BEIR corpus records: id, title (name and version from the header), the METADATA text."""
    records = []
    for doc_id in SOURCES:
        text = read_source(doc_id, root)
        header = dict(line.split(": ", 1) for line in text.split("\n\n", 1)[0].splitlines() if ": " in line)
        title = f"{header.get('Name', doc_id)} {header.get('Version', '')}".strip()
        records.append({"_id": doc_id, "title": title, "text": text})
    return records


def load_questions(split: str | None = None, path: Path = QUESTIONS) -> list[dict]:
    """The hand-written questions, all or one half (``calibration`` / ``report``)."""
    if split is not None and split not in SPLITS:
        raise InputError(str(path), f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    questions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [q for q in questions if split is None or q["split"] == split]


def build(out: Path, split: str | None = None, root: Path | None = None) -> Path:
    """Write the BEIR folder of ``split`` (None: every question) to ``out``; the corpus is always whole."""
    corpus = documents(root or site_packages())
    ids = {d["_id"] for d in corpus}
    questions = load_questions(split)
    for q in questions:
        unknown = [d for d in q.get("supporting_ids", []) if d not in ids]
        if unknown:
            raise InputError(str(QUESTIONS), f"question {q['id']}: supporting ids {unknown} name no document")
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    _write_jsonl(out / "corpus.jsonl", corpus)
    _write_jsonl(out / "questions.jsonl", questions)
    _write_jsonl(out / "queries.jsonl", [{"_id": q["id"], "text": q["question"]} for q in questions])
    rows = [f"{q['id']}\t{d}\t1\n" for q in questions for d in q.get("supporting_ids", [])]
    (out / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(rows), encoding="utf-8")
    return out


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write (BEIR layout)")
    parser.add_argument("--split", choices=SPLITS, help="only this half of the questions (default: all)")
    parser.add_argument("--site-packages", type=Path, help="where the dist-info folders are (default: this venv)")
    args = parser.parse_args()
    out = build(args.out, args.split, args.site_packages)
    print(json.dumps({"out": str(out), "documents": len(SOURCES), "questions": len(load_questions(args.split))}))


if __name__ == "__main__":
    main()
