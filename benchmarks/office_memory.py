"""Peak memory of loading a 200-page PDF (layout: pdfplumber) and a 100,000-row spreadsheet (openpyxl read-only).

Each file is generated (``office_files.py``), then loaded by ``ragline.ingest.loaders.load_file`` in a fresh child
process whose peak resident set size is read from ``os.wait4`` (``ru_maxrss``). A baseline child imports the same
libraries and loads a one-page / one-row file of the same kind, so ``increase_mib`` is what the big file costs.
For comparison, the workbook is also read by openpyxl in its default (not read-only) mode, cell objects and all.

    .venv/bin/python benchmarks/office_memory.py --out benchmarks/results/office_memory.json
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from common import log, print_result, write_result  # noqa: E402
from office_files import pdf_bytes, pdf_paragraph, pdf_table  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src"
WORDS = "grid substation inspection torque bolt housing crew depot schedule report budget revenue".split()


def write_pdf(path: Path, pages: int) -> None:
    items = []
    for number in range(pages):
        lines = [" ".join(WORDS[(number + i + j) % len(WORDS)] for j in range(12)) + "." for i in range(30)]
        page = [("text", 72, 760, 9, "Maintenance manual"), ("text", 280, 30, 9, f"Page {number + 1}"),
                ("text", 72, 720, 16, f"Section {number + 1}")]  # fmt: skip
        page += pdf_paragraph(72, 690, lines[:20], size=10)
        page += pdf_table(72, 400, [120, 120, 120], [["Part", "Torque", "Interval"],
                                                    *([f"P{number}-{r}", f"{r + 10} N m", f"{r + 2} weeks"]
                                                      for r in range(8))])  # fmt: skip
        items.append(page)
    path.write_bytes(pdf_bytes(items))


def write_sheet(path: Path, rows: int) -> None:
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Parts")
    sheet.append(["Part", "Supplier", "Unit price", "Lead time", "Warehouse", "Notes"])
    for i in range(rows):
        sheet.append([f"P-{i:06d}", f"Vendor {i % 97}", round(1 + (i % 500) * 0.37, 2), i % 30,
                      f"WH-{i % 12}", "standard"])  # fmt: skip
    book.save(str(path))


LOAD = (
    "import sys; from pathlib import Path; from ragline.ingest.loaders import load_file; "
    "d = load_file(Path(sys.argv[1]), Path(Path(sys.argv[1]).name), 200 * 2**20); print(len(d.text))"
)
FULL_OPENPYXL = (
    "import sys, openpyxl; b = openpyxl.load_workbook(sys.argv[1]); "
    "print(sum(len(str(c.value)) for s in b.worksheets for r in s.iter_rows() for c in r))"
)


def peak(code: str, path: Path) -> tuple[float, float, str]:
    """Peak RSS (MiB), wall seconds and stdout of ``python -c code path`` in a fresh child process."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", code, str(path)], env=env, stdout=subprocess.PIPE, text=True)
    out = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise SystemExit(f"child failed on {path} ({status})")
    return usage.ru_maxrss / 1024, time.perf_counter() - started, out.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result: dict = {"benchmark": "office_memory", "pages": args.pages, "rows": args.rows}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {"pdf": (root / "manual.pdf", root / "one.pdf", write_pdf, args.pages),
                 "xlsx": (root / "parts.xlsx", root / "one.xlsx", write_sheet, args.rows)}  # fmt: skip
        for kind, (big, small, write, size) in files.items():
            write(big, size)
            write(small, 1)
            log(f"{kind}: {big.stat().st_size / 2**20:.1f} MiB written")
            base, _, _ = peak(LOAD, small)
            top, seconds, chars = peak(LOAD, big)
            result[kind] = {"file_mib": round(big.stat().st_size / 2**20, 2), "text_chars": int(chars),
                            "baseline_mib": round(base, 1), "peak_mib": round(top, 1),
                            "increase_mib": round(top - base, 1), "seconds": round(seconds, 1)}  # fmt: skip
            log(f"{kind}: {result[kind]}")
            if kind == "xlsx":
                full, full_seconds, _ = peak(FULL_OPENPYXL, big)
                result["xlsx_openpyxl_default_mode"] = {"peak_mib": round(full, 1), "seconds": round(full_seconds, 1)}
                log(f"openpyxl default mode: {result['xlsx_openpyxl_default_mode']}")
    if args.out:
        write_result(args.out, result)
    print_result(result)


if __name__ == "__main__":
    main()
