"""Office documents: questions whose answers sit in tables, slides and mail headers, before and after the loaders.

A generated document set (``office_files.py``; invented names and figures from ``--seed``): a Word travel policy
with a rate table, an Excel workbook of three sheets, a PowerPoint review with a table slide and bullet slides,
a CSV parts list, three e-mails (one carrying a CSV attachment), and a three-page PDF report with a running
header and footer, a hyphenated word and a ruled table on page 2. Each question names the file type, the kind of
place its answer sits (``table``, ``text``, ``header``) and, for PDFs, decks and workbooks, the page, slide or
sheet a right citation names.

Two arms over the same files, indexed alike (the default pipeline's chunker, ``fixed:size=100,overlap=30``;
BM25, or ``--retriever hybrid`` with MiniLM) and read by the extractive reader:

* ``before``: the loaders as they were: ``.docx .pptx .xlsx .csv .eml .msg`` are unsupported (skipped), and a
  PDF is pypdf's text (``load_pdf(layout=False)``: a table is a run of cells without its header);
* ``after``: every loader (``ragline.ingest``), PDF layout with pdfplumber.

Per arm and file type: correct (SQuAD exact match), wrong, abstained; for table questions, the share answered
correctly **with a citation to the right page, slide or sheet** (and the right document). ``--reader`` takes
any reader spec (graded by ``contains`` unless it is ``extractive``: the LLM answers in sentences); ``--chunker
default`` indexes with the default pipeline's chunker, and ``--arms after`` runs the loaders of today only (a
slow reader is not run on the ``before`` arm's skipped files).

    .venv/bin/python benchmarks/office_docs.py --out benchmarks/results/office_docs.json
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from common import log, package_version, print_result, write_result  # noqa: E402
from office_files import (  # noqa: E402
    invented,
    pdf_bytes,
    pdf_paragraph,
    pdf_table,
    unique,
    utc,
    write_docx,
    write_eml,
    write_pptx,
    write_xlsx,
)

BEFORE_SUFFIXES = (".txt", ".md", ".markdown", ".rst", ".rest", ".html", ".htm", ".pdf")
CHUNKER = "fixed:size=100,overlap=30"


def q(qid: str, filetype: str, kind: str, question: str, answers: list[str], doc: str, **anchor: Any) -> dict:
    return {"id": qid, "type": filetype, "kind": kind, "question": question, "answers": answers, "doc": doc,
            "anchor": anchor}  # fmt: skip


def money(value: int) -> str:
    return f"${value:,}"


def word_policy(folder: Path, rng: random.Random, people: list[str]) -> list[dict[str, Any]]:
    """Word: a travel policy with a per-diem table."""
    questions: list[dict[str, Any]] = []
    cities = unique(rng, 10, lambda: invented(rng))
    rows = [["City", "Per diem", "Lodging cap", "Approver"]]
    for i, city in enumerate(cities):
        rows.append([city, money(rng.randrange(40, 140)), money(rng.randrange(120, 400)), people[i]])
    write_docx(folder / "travel-policy.docx", "Travel policy", [
        ("heading", 1, "Travel policy"),
        ("para", "Staff who travel for work are reimbursed for meals and lodging at the rates below. "
                 "Book through the travel desk at least ten days before departure."),
        ("heading", 2, "Per diem rates"),
        ("table", rows),
        ("heading", 2, "Receipts"),
        ("bullet", "Keep every receipt above the threshold of $25."),
        ("bullet", "Submit receipts within 30 days of returning."),
    ])  # fmt: skip
    for city, per_diem, cap, approver in rng.sample(rows[1:], 6):
        questions += [
            q(f"docx-{city}-diem", "docx", "table", f"What is the per diem for {city}?", [per_diem], "travel-policy"),
            q(f"docx-{city}-cap", "docx", "table", f"What is the lodging cap in {city}?", [cap], "travel-policy"),
            q(f"docx-{city}-approver", "docx", "table", f"Who approves travel to {city}?", [approver],
              "travel-policy"),
        ]  # fmt: skip
    questions.append(q("docx-receipts", "docx", "text", "Within how many days must receipts be submitted?",
                       ["30 days"], "travel-policy"))  # fmt: skip
    return questions


def excel_workbook(folder: Path, rng: random.Random, people: list[str]) -> list[dict[str, Any]]:
    """Excel: services, offices and budgets on three sheets."""
    questions: list[dict[str, Any]] = []
    services = unique(rng, 12, lambda: f"{invented(rng)} review")
    service_rows = [[s, rng.randrange(90, 400), rng.randrange(1, 9), people[10 + i % 10]]
                    for i, s in enumerate(services)]  # fmt: skip
    offices = unique(rng, 8, lambda: invented(rng))
    office_rows = [[o, rng.randrange(20, 300), people[20 + i]] for i, o in enumerate(offices)]
    departments = unique(rng, 6, lambda: f"{invented(rng)} division")
    budget_rows = [[d, rng.randrange(2, 90) * 10_000, rng.randrange(5, 120)] for d in departments]
    write_xlsx(folder / "operations.xlsx", [
        ("Services", [["Rate card 2026"], ["Service", "Hourly rate", "Minimum hours", "Owner"], *service_rows]),
        ("Offices", [["Office", "Desks", "Manager"], *office_rows]),
        ("Budget", [["Department", "Budget", "Headcount"], *budget_rows]),
    ])  # fmt: skip
    for service, rate, hours, _owner in rng.sample(service_rows, 5):
        questions += [
            q(f"xlsx-{service}-rate", "xlsx", "table", f"What is the hourly rate for the {service}?", [str(rate)],
              "operations", sheet="Services"),
            q(f"xlsx-{service}-hours", "xlsx", "table", f"What is the minimum hours for the {service}?", [str(hours)],
              "operations", sheet="Services"),
        ]  # fmt: skip
    for office, desks, manager in rng.sample(office_rows, 4):
        questions += [
            q(f"xlsx-{office}-desks", "xlsx", "table", f"How many desks does the {office} office have?", [str(desks)],
              "operations", sheet="Offices"),
            q(f"xlsx-{office}-manager", "xlsx", "table", f"Who is the manager of the {office} office?", [manager],
              "operations", sheet="Offices"),
        ]  # fmt: skip
    for department, _budget, headcount in rng.sample(budget_rows, 3):
        questions.append(q(f"xlsx-{department}-headcount", "xlsx", "table",
                           f"What is the headcount of the {department}?", [str(headcount)], "operations",
                           sheet="Budget"))  # fmt: skip
    return questions


def powerpoint_review(folder: Path, rng: random.Random, people: list[str]) -> list[dict[str, Any]]:
    """PowerPoint: a quarterly review with a table slide and bullet slides."""
    questions: list[dict[str, Any]] = []
    teams = unique(rng, 6, lambda: invented(rng))
    team_rows = [[t, str(rng.randrange(3, 40)), invented(rng)] for t in teams]
    churn = f"{rng.randrange(10, 60) / 10}%"
    revenue = f"${rng.randrange(12, 90) / 10} million"
    launch = invented(rng)
    write_pptx(folder / "quarterly-review.pptx", [
        ("bullets", "Quarterly review", ["Prepared by the strategy office", "Second quarter"], ""),
        ("table", "Engineering headcount", [["Team", "Engineers", "Location"], *team_rows],
         "Hiring resumes next quarter."),
        ("bullets", "Quarter highlights", [f"Customer churn fell to {churn}", f"Net revenue reached {revenue}",
                                           f"The {launch} app launched in May"], ""),
    ])  # fmt: skip
    for team, engineers, location in rng.sample(team_rows, 4):
        questions += [
            q(f"pptx-{team}-engineers", "pptx", "table", f"How many engineers does the {team} team have?",
              [engineers], "quarterly-review", slide=2),
            q(f"pptx-{team}-location", "pptx", "table", f"Where is the {team} team located?", [location],
              "quarterly-review", slide=2),
        ]  # fmt: skip
    questions += [
        q(
            "pptx-churn",
            "pptx",
            "text",
            "What percentage did customer churn fall to?",
            [churn],
            "quarterly-review",
            slide=3,
        ),
        q("pptx-revenue", "pptx", "text", "How much did net revenue reach?", [revenue], "quarterly-review", slide=3),
    ]
    return questions


def csv_parts(folder: Path, rng: random.Random, people: list[str]) -> list[dict[str, Any]]:
    """CSV: a parts list."""
    questions: list[dict[str, Any]] = []
    parts = unique(rng, 10, lambda: f"{invented(rng)} valve")
    part_rows = [[p, invented(rng), f"{rng.randrange(2, 90)}.{rng.randrange(10, 99)}", rng.randrange(2, 30)]
                 for p in parts]  # fmt: skip
    (folder / "parts.csv").write_text(
        "Part,Supplier,Unit price,Lead time days\n" + "".join(f"{a},{b},{c},{d}\n" for a, b, c, d in part_rows)
    )
    for part, supplier, price, _lead in rng.sample(part_rows, 4):
        questions += [
            q(f"csv-{part}-supplier", "csv", "table", f"Who is the supplier of the {part}?", [supplier], "parts"),
            q(f"csv-{part}-price", "csv", "table", f"What is the unit price of the {part}?", [price], "parts"),
        ]
    return questions


def email_messages(folder: Path, rng: random.Random, people: list[str]) -> list[dict[str, Any]]:
    """E-mail: three messages; one carries a CSV price list."""
    questions: list[dict[str, Any]] = []
    topics = [("depot move", f"Depot move to Hall {rng.randrange(2, 9)}"),
              ("budget freeze", "Budget freeze for the third quarter"),
              ("price list", "Updated price list for consumables")]  # fmt: skip
    items = unique(rng, 5, lambda: f"{invented(rng)} cartridge")
    item_rows = [[i, f"{rng.randrange(3, 60)}.{rng.randrange(10, 99)}"] for i in items]
    for n, (topic, subject) in enumerate(topics):
        sender = people[30 + n]
        when = utc(2026, rng.randrange(1, 12), rng.randrange(1, 28), 9 + n)
        attachments = []
        if topic == "price list":
            table = "Item,Price\n" + "".join(f"{a},{b}\n" for a, b in item_rows)
            attachments.append(("prices.csv", table.encode(), "text/csv"))
        write_eml(folder / f"mail-{n + 1}.eml", f"{sender} <{sender.split()[0].lower()}@example.org>",
                  "staff@example.org", subject, when, f"Hello all,\n\nPlease see the note on the {topic}.\n\nThanks.\n",
                  attachments)  # fmt: skip
        day = when.strftime("%d %b %Y")
        questions += [
            q(f"eml-{n}-sender", "eml", "header", f"Who sent the message about the {topic}?", [sender],
              f"mail-{n + 1}"),
            q(f"eml-{n}-date", "eml", "header", f"When was the message about the {topic} sent?",
              [day, day.lstrip("0"), when.strftime("%-d %B %Y")], f"mail-{n + 1}"),
        ]  # fmt: skip
    for item, price in rng.sample(item_rows, 3):
        questions.append(q(f"eml-{item}-price", "eml", "table", f"What is the price of the {item}?", [price], "mail-3"))
    return questions


def pdf_report(folder: Path, rng: random.Random, people: list[str]) -> list[dict[str, Any]]:
    """PDF: a three-page report with a running header and footer and a ruled table on page 2."""
    questions: list[dict[str, Any]] = []
    regions = unique(rng, 7, lambda: invented(rng))
    region_rows = [[r, f"${rng.randrange(11, 99) / 10} million", f"{rng.randrange(-30, 90) / 10}%"] for r in regions]
    header, footer = "Northwind holdings annual report", "Page {} of 3"
    pages = []
    for number in range(1, 4):
        items: list = [("text", 72, 760, 9, header), ("text", 280, 40, 9, footer.format(number))]
        if number == 1:
            items += [("text", 72, 700, 18, "Letter to shareholders")]
            items += pdf_paragraph(72, 670, ["The board approved the plant main-",
                                             "tenance budget in March and opened two depots.",
                                             "Revenue by region is on the next page."])  # fmt: skip
        elif number == 2:
            items += [("text", 72, 700, 18, "Revenue by region")]
            items += pdf_table(72, 680, [150, 150, 120], [["Region", "Revenue", "Growth"], *region_rows])
        else:
            items += [("text", 72, 700, 18, "Outlook")]
            items += pdf_paragraph(72, 670, ["The company expects modest growth next year.",
                                             "Capital spending stays flat."])  # fmt: skip
        pages.append(items)
    (folder / "annual-report.pdf").write_bytes(pdf_bytes(pages, title="Annual report"))
    for region, revenue_, growth in rng.sample(region_rows, 5):
        questions += [
            q(f"pdf-{region}-revenue", "pdf", "table", f"What was the revenue of the {region} region?", [revenue_],
              "annual-report", page=2),
            q(f"pdf-{region}-growth", "pdf", "table", f"What was the growth of the {region} region?", [growth],
              "annual-report", page=2),
        ]  # fmt: skip
    return questions


def build(folder: Path, seed: int) -> list[dict[str, Any]]:
    """Write the document set into ``folder``; its questions back. One random stream in a fixed order, so a seed
    gives the same files and questions."""
    rng = random.Random(seed)
    people = unique(rng, 40, lambda: f"{invented(rng)} {invented(rng, 3)}")
    makers = (word_policy, excel_workbook, powerpoint_review, csv_parts, email_messages, pdf_report)
    return [question for make in makers for question in make(folder, rng, people)]


def load(folder: Path, arm: str) -> Any:
    """The documents of ``folder`` as the ``before`` or ``after`` loaders read them."""
    from ragline.ingest import load_folder
    from ragline.ingest.loaders import LoadReport, load_file, plan_folder
    from ragline.ingest.pdf import load_pdf

    if arm == "after":
        return load_folder(folder)
    files, report = plan_folder(folder, BEFORE_SUFFIXES)
    assert isinstance(report, LoadReport)
    for path, relative in files:
        loader = (lambda p, r: load_pdf(p, r, layout=False)) if path.suffix == ".pdf" else load_file
        report.documents.append(loader(path, relative))
    return report


def run_arm(
    folder: Path,
    questions: list[dict[str, Any]],
    arm: str,
    retriever: str,
    work: Path,
    reader: str = "extractive",
    chunker: str = CHUNKER,
) -> dict[str, Any]:
    from ragline.answer.pipeline import RAGPipeline
    from ragline.config import load_config
    from ragline.eval.answers import answer_matches
    from ragline.index import Index
    from ragline.index.settings import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, chunk_documents

    report = load(folder, arm)
    units, _ = chunk_documents(report.documents, IngestConfig(chunker, "none"))
    embedder = "minilm" if retriever == "hybrid" else None
    settings = IndexSettings(embedder=embedder, chunker=chunker)
    index = Index.create(work / f"index-{arm}", settings)
    index.sync(units)
    index.commit()
    # the default pipeline's reader is "llm:max_tokens=128" (a sentence: graded by "contains")
    config = load_config("default").with_overrides(retrieve={"retriever": retriever}, read={"reader": reader})
    match = "em" if reader == "extractive" else "contains"
    pipeline = RAGPipeline.from_config(config, index)
    rows = []
    for item in questions:
        answer, context = pipeline.answer(item["question"])
        correct = not answer.abstained and answer_matches(answer.text, item["answers"], match)
        cited = context.source(answer.citations[0].n) if answer.citations else None
        metadata = cited.hit.metadata if cited is not None else {}
        right_place = (
            cited is not None
            and cited.hit.document_id == item["doc"]
            and all(metadata.get(key) == value for key, value in item["anchor"].items())
        )
        rows.append({"id": item["id"], "type": item["type"], "kind": item["kind"], "answer": answer.text,
                     "abstained": answer.abstained, "correct": correct, "cited_right_place": bool(right_place),
                     "anchor": {k: metadata.get(k) for k in ("page", "slide", "sheet") if k in metadata}})  # fmt: skip
    index.close()
    by_type: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        outcome = "abstained" if row["abstained"] else ("correct" if row["correct"] else "wrong")
        by_type[row["type"]][outcome] += 1
        by_type[row["type"]]["questions"] += 1
    table = [r for r in rows if r["kind"] == "table"]
    return {
        "loaded": sorted(d.id for d in report.documents),
        "unsupported": report.unsupported,
        "chunks": len(units),
        "per_type": {t: dict(c) for t, c in sorted(by_type.items())},
        "correct": sum(r["correct"] for r in rows),
        "table_questions": len(table),
        "table_correct": sum(r["correct"] for r in table),
        "table_correct_cited_right_place": sum(r["correct"] and r["cited_right_place"] for r in table),
        "table_share": round(sum(r["correct"] and r["cited_right_place"] for r in table) / max(len(table), 1), 3),
        "answers": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--retriever", default="bm25", choices=("bm25", "hybrid"))
    parser.add_argument("--reader", default="extractive", help='or the default pipeline\'s "llm:max_tokens=128"')
    parser.add_argument("--chunker", default=CHUNKER, help='a chunker spec, or "default": the default pipeline\'s')
    parser.add_argument("--arms", default="before,after", choices=("before,after", "after", "before"))
    parser.add_argument("--limit", type=int, help="only N questions, every k-th (a quick LLM run)")
    parser.add_argument("--keep", type=Path, help="write the document set here (and keep it) instead of a temp dir")
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    chunker = args.chunker
    if chunker == "default":
        from ragline.config import load_config

        chunker = load_config("default").ingest.chunker
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp) / "docs"
        folder.mkdir(parents=True, exist_ok=True)
        questions = build(folder, args.seed)
        if args.limit:  # every k-th question: each file type keeps its share
            questions = questions[:: max(1, len(questions) // args.limit)][: args.limit]
        log(f"{len(questions)} questions over {len(list(folder.iterdir()))} files")
        arms = {}
        for arm in args.arms.split(","):
            arms[arm] = run_arm(folder, questions, arm, args.retriever, Path(tmp), args.reader, chunker)
            log(
                f"{arm}: {arms[arm]['correct']}/{len(questions)} correct; table questions correct with the right "
                f"citation: {arms[arm]['table_correct_cited_right_place']}/{arms[arm]['table_questions']}"
            )
    result = {
        "benchmark": "office_docs",
        "seed": args.seed,
        "retriever": args.retriever,
        "chunker": chunker,
        "reader": args.reader,
        "questions": len(questions),
        "kinds": dict(Counter(q["kind"] for q in questions)),
        "versions": {name: package_version(name) for name in
                     ("python-docx", "python-pptx", "openpyxl", "extract-msg", "pdfplumber", "pypdf")},
        **arms,
    }  # fmt: skip
    report(result, args.out)


def report(result: dict[str, Any], out: Path | None) -> None:
    """Write the whole result to ``out`` (when given); print it without the per-question answers."""
    if out:
        write_result(out, result)
    arms = [arm for arm in ("before", "after") if arm in result]  # --arms may run one
    print_result({k: v for k, v in result.items() if k not in arms}
                 | {arm: {k: v for k, v in result[arm].items() if k != "answers"} for arm in arms})  # fmt: skip


if __name__ == "__main__":
    main()
