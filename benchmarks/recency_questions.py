"""Questions about the most recent and the earliest incident, answered with and without date order.

Relevance cannot pick "the most recent incident": every incident report matches "root cause of the incident"
alike. ``ragline.answer.recency`` (``[retrieve] dates = "order"``, the default) reads the newest (oldest)
dated document among 50 candidates instead. This script makes the questions from an Orrin world's BEIR export
(``ragline corpus orrin [--train] --out WORLD``): the newest and the oldest report by its ``incident_date``,
four facts of each (root cause, error code, incident commander, duration) asked with two cues each ("most
recent"/"latest", "earliest"/"oldest"), 16 questions whose answers are read from the report's text. Then it
runs ``ragline eval`` with the default pipeline, dates ordered and not, and compares the answers (paired test):

    ragline corpus orrin --train --out orrin-train
    PYTHONPATH=src python benchmarks/recency_questions.py orrin-train \
        --out benchmarks/results/answers/recency_orrin-train.json
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_reader_compare import load, paired, summary  # noqa: E402

CUES = {"newest": ("most recent", "latest"), "oldest": ("earliest", "oldest")}
FACTS = (  # (question with {cue}, the answer's pattern in the report)
    ("What was the root cause of the {cue} incident?", r"The root cause was (?:an? |the )?([^.]+)\."),
    ("Which error code did users see during the {cue} incident?", r"returned error (E-\d+)"),
    ("Who was the incident commander of the {cue} incident?", r"([A-Z]\w+ [A-Z]\w+) took the incident commander"),
    ("How long did the {cue} incident last?", r"for (\d+ minutes)"),
)


def make_questions(world: Path, out: Path) -> int:
    """The dataset folder ``out`` (corpus linked, questions.jsonl, queries.jsonl, qrels) and its size."""
    docs = [json.loads(line) for line in (world / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line]
    reports = [d for d in docs if d.get("metadata", {}).get("incident_date")]
    dated = sorted(reports, key=lambda d: d["metadata"]["incident_date"])
    chosen = {"newest": dated[-1], "oldest": dated[0]}
    rows = []
    for direction, doc in chosen.items():
        for cue in CUES[direction]:
            for template, pattern in FACTS:
                found = re.search(pattern, doc["text"])
                if found is None:
                    continue
                n = len(rows) + 1
                rows.append(
                    {
                        "id": f"recency-{n:03d}",
                        "question": template.format(cue=cue),
                        "answers": [found.group(1)],
                        "supporting_ids": [doc["_id"]],
                        "type": direction,
                        "user_groups": ["all"],
                        "expected_abstain": False,
                    }
                )
    out.mkdir(parents=True, exist_ok=True)
    (out / "corpus.jsonl").unlink(missing_ok=True)
    (out / "corpus.jsonl").symlink_to((world / "corpus.jsonl").resolve())
    (out / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    queries = "".join(json.dumps({"_id": r["id"], "text": r["question"]}) + "\n" for r in rows)
    (out / "queries.jsonl").write_text(queries, encoding="utf-8")
    (out / "qrels").mkdir(exist_ok=True)
    qrels = "".join(f"{r['id']}\t{r['supporting_ids'][0]}\t1\n" for r in rows)
    (out / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels, encoding="utf-8")
    return len(rows)


def answers(dataset: Path, dates: str, folder: Path) -> Path:
    """``ragline eval`` of the default pipeline with ``[retrieve] dates = DATES``; its saved answers."""
    config = folder / f"dates-{dates}.toml"
    default = (Path(__file__).resolve().parent.parent / "pipelines" / "default.toml").read_text(encoding="utf-8")
    config.write_text(default.replace("[retrieve]\n", f'[retrieve]\ndates = "{dates}"\n', 1), encoding="utf-8")
    saved = folder / f"dates-{dates}.jsonl"
    command = [sys.executable, "-m", "ragline", "eval", str(dataset), "--config", str(config), "--match", "contains"]
    subprocess.run([*command, "--output", "json", "--save-answers", str(saved)], check=True, stdout=subprocess.DEVNULL)
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("world", type=Path, help="an Orrin world's BEIR export (ragline corpus orrin --out WORLD)")
    parser.add_argument("--out", type=Path, help="write the result JSON here too")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        n = make_questions(args.world, folder / "questions")
        off, order = (load(str(answers(folder / "questions", dates, folder))) for dates in ("off", "order"))
    ids = sorted(off)
    result: dict[str, Any] = {
        "world": args.world.name,
        "questions": n,
        "dates_off": summary(off),
        "dates_order": summary(order),
        "paired_correct": paired(off, order, {"correct": 1.0}),
        "answers": {
            i: {"question": off[i]["question"], "off": off[i]["answer"], "order": order[i]["answer"]} for i in ids
        },
    }
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
