"""Orrin version questions under each versions policy: correct answers, superseded values, superseded sources.

PYTHONPATH=src python benchmarks/trust_versions.py      # prints one JSON line
"""

from __future__ import annotations

import json

from ragline.answer.pipeline import RAGPipeline
from ragline.answer.versions import reader_answer
from ragline.config import load_config
from ragline.corpora.builtin import orrin_index


def main() -> None:
    index, corpus = orrin_index()
    questions = [q for q in corpus.questions if q.type == "version"]
    out = {"questions": len(questions), "reader": "extractive", "retriever": "bm25", "policies": {}}
    for policy in ("all", "current"):
        config = load_config("extractive").with_overrides(retrieve={"retriever": "bm25", "versions": policy})
        pipeline = RAGPipeline.from_config(config, index)
        correct = superseded_value = superseded_source = 0
        for q in questions:
            answer, _ = pipeline.answer(q.text)
            text = reader_answer(answer).text.lower()  # not the conflict note's other value
            correct += any(a.lower() in text for a in [q.answer, *q.aliases])
            superseded_value += any(d.lower() in text for d in q.distractor_answers)
            superseded_source += any(h.metadata.get("superseded_by") for h in pipeline.retrieve(q.text))
        out["policies"][policy] = {"correct": correct, "superseded_value": superseded_value,
                                   "superseded_source": superseded_source}  # fmt: skip
    print(json.dumps(out))


if __name__ == "__main__":
    main()
