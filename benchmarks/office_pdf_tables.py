"""Real public PDFs with tables (``benchmarks/pdf_tables``, see its SOURCE.md): correct / wrong / abstained, before
and after the PDF layout loader.

Two files from a registry package's test data: a page of the U.S. Census Bureau's Statistical Abstract (two tables
of arrests, dot leaders and no rules) and a pdfTeX page of R's ``mtcars`` table. 12 questions written by hand from
their text before any run. Indexed and read as ``office_docs.py`` does (the default pipeline's chunker; by default
its hybrid retrieval, MiniLM + BM25; the extractive reader); ``before`` is pypdf's text, ``after`` pdfplumber's
layout with tables. A right citation names the document and page.

    .venv/bin/python benchmarks/office_pdf_tables.py --out benchmarks/results/office_pdf_tables.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from common import log, package_version  # noqa: E402
from office_docs import report, run_arm  # noqa: E402

DATA = Path(__file__).parent / "pdf_tables"
SHA256 = {
    "12s0324.pdf": "092853e4af150d1c72f474a59ce902305e8675c1d04059d5e2af4a628bc6dfbd",
    "data.pdf": "398b460ae6896c553335c45736fe6962992ee3b3f22d15058c335846f7c60143",
}


def questions() -> list[dict[str, Any]]:
    """The hand-written questions in ``office_docs.run_arm``'s form (every answer sits in a table)."""
    out = []
    for line in (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        out.append({"id": item["id"], "type": "pdf", "kind": "table", "question": item["question"],
                    "answers": item["answers"], "doc": item["doc"], "anchor": {"page": item["page"]}})  # fmt: skip
    return out


def copy_checked(folder: Path) -> None:
    """The PDFs into ``folder``, each checked against its SHA-256 (a changed file is refused, never evaluated)."""
    for name, digest in SHA256.items():
        data = (DATA / name).read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise SystemExit(f"{DATA / name}: SHA-256 differs from SOURCE.md; not evaluated")
        shutil.copyfile(DATA / name, folder / name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--retriever", default="hybrid", choices=("bm25", "hybrid"))
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    items = questions()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        copy_checked(folder)
        arms = {arm: run_arm(folder, items, arm, args.retriever, Path(tmp)) for arm in ("before", "after")}
    for arm, result in arms.items():
        result["outcome"] = {
            "correct": sum(r["correct"] for r in result["answers"]),
            "wrong": sum(not r["correct"] and not r["abstained"] for r in result["answers"]),
            "abstained": sum(r["abstained"] for r in result["answers"]),
        }
        log(f"{arm}: {result['outcome']}; right document and page: {result['table_correct_cited_right_place']}")
    result = {
        "benchmark": "office_pdf_tables",
        "retriever": args.retriever,
        "reader": "extractive",
        "questions": len(items),
        "files": SHA256,
        "versions": {name: package_version(name) for name in ("pdfplumber", "pypdf")},
        **arms,
    }
    report(result, args.out)


if __name__ == "__main__":
    main()
