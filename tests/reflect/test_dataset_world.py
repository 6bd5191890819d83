"""``ragline experiment reflection --dataset``: a QA folder's questions over all its passages in one index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.errors import ConfigError
from ragline.eval.experiments import reflection
from ragline.reflect.worlds import dataset_world, user_filter

PASSAGES = {
    "boria.md": "# Boria\n\nBoria was founded in 1705 by river traders.",
    "kelm.md": "# Kelm\n\nKelm is a mountain town. Its mayor is Ada Varga.",
    "orlan.md": "# Orlan\n\nOrlan lies on the coast and was founded in 1822.",
}
QUESTIONS = [
    {"id": "q1", "question": "When was Boria founded?", "answers": ["1705"], "supporting_ids": ["boria"],
     "type": "bridge"},
    {"id": "q2", "question": "Who is the mayor of Kelm?", "answers": ["Ada Varga"], "supporting_ids": ["kelm"],
     "type": "comparison"},
]  # fmt: skip


def folder(root: Path, questions: list[dict] | None = QUESTIONS) -> Path:
    root.mkdir()
    for name, text in PASSAGES.items():
        (root / name).write_text(text, encoding="utf-8")
    if questions is not None:
        (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return root


def test_every_question_searches_the_whole_pool_unfiltered(tmp_path: Path) -> None:
    """Planted fault checked: the index built over the first passage only."""
    world = dataset_world(folder(tmp_path / "qa"))
    assert world.name == "qa" and [q.id for q in world.questions] == ["q1", "q2"]
    assert len({d.id for d in world.index.documents()}) == 3 and user_filter(world.questions[0]) is None
    payload = reflection.run(world, per_type=10, names=("always-retrieve", "self-rag"), reader="extractive")
    assert payload["reader"] == "extractive" and payload["types"] == {"bridge": 1, "comparison": 1}
    always = payload["arms"]["always-retrieve"]
    assert {qid: r["outcome"] for qid, r in always["questions"].items()} == {"q1": "correct", "q2": "correct"}
    assert always["summary"]["all"]["f1"] == 1.0 and always["summary"]["all"]["retrievals"] == 1.0
    assert payload["paired"]["self-rag vs always-retrieve"]["f1"]["n"] == 2


def test_a_folder_without_questions_is_refused_by_name(tmp_path: Path) -> None:
    root = folder(tmp_path / "docs", questions=[])
    with pytest.raises(ConfigError, match="docs"):
        dataset_world(root)
