"""The real-document QA set: three collections found offline (package METADATA, package docs, Debian docs),
checked by SHA-256, read by ``ragline eval``; a dev half, a test half and a held-out half."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from ragline.errors import InputError
from ragline.eval.answers import contains_answer
from ragline.eval.datasets import load_dataset

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import realdocs  # noqa: E402

INSTALLED = all((realdocs.site_packages() / folder / "METADATA").is_file() for folder, _ in realdocs.SOURCES.values())
needs_venv = pytest.mark.skipif(not INSTALLED, reason="the pinned packages are not installed here (make setup)")
ALL_FILES = all(
    ((realdocs.DEBIAN_DOC if collection == "debian-doc" else realdocs.site_packages()) / relative).is_file()
    for collection, relative, _ in realdocs.FILES.values()
)
needs_docs = pytest.mark.skipif(not ALL_FILES, reason="the Debian or package documentation is not installed here")


@needs_venv
@needs_docs
def test_the_set_is_a_dataset_whose_gold_documents_hold_the_answers(tmp_path: Path) -> None:
    dataset = load_dataset(realdocs.build(tmp_path / "realdocs"))
    assert len(dataset.corpus) == len(realdocs.SOURCES) + len(realdocs.FILES)
    assert len(dataset.questions) == len(realdocs.load_questions())
    texts = {d.id: d.text for d in dataset.corpus}
    unanswerable = 0
    for q in dataset.questions:
        if not q["answers"]:
            unanswerable += 1
            continue
        for doc_id in q["supporting_ids"]:
            assert contains_answer(texts[doc_id], q["answers"]), (q["id"], q["answers"])
    assert unanswerable >= 5


def test_the_halves_split_the_questions() -> None:
    calibration, report = realdocs.load_questions("calibration"), realdocs.load_questions("report")
    assert {q["id"] for q in calibration}.isdisjoint(q["id"] for q in report)
    assert abs(len(calibration) - len(report)) <= 2
    dev, test = realdocs.load_questions("dev"), realdocs.load_questions("test")
    heldout = realdocs.load_questions("heldout")
    assert len(dev) == len(calibration) + len(report) == 57 and len(test) >= 100 and len(heldout) >= 100
    assert len(dev) + len(test) + len(heldout) == len(realdocs.load_questions()) >= 250
    halves = [{q["id"] for q in half} for half in (dev, test, heldout)]
    assert sum(map(len, halves)) == len(set().union(*halves))
    with pytest.raises(InputError, match="unknown split"):
        realdocs.load_questions("validation")


def test_every_question_has_a_type_and_a_collection_and_the_test_half_spans_collections() -> None:
    """Types from the five kinds; a not-answerable question has no answer and no gold document."""
    kinds = {"factoid", "how-to", "multi-sentence", "list", "not answerable"}
    questions = realdocs.load_questions()
    assert {q["type"] for q in questions} == kinds
    assert {q["collection"] for q in questions} == set(realdocs.COLLECTIONS)
    for q in questions:
        assert bool(q["answers"]) == bool(q["supporting_ids"]) == (q["type"] != "not answerable"), q["id"]
    assert len({q["collection"] for q in realdocs.load_questions("test")}) >= 2
    assert len({q["supporting_ids"][0] for q in realdocs.load_questions("heldout") if q["supporting_ids"]}) >= 20


@needs_venv
def test_a_changed_package_version_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "site-packages"
    for folder, _ in realdocs.SOURCES.values():
        shutil.copytree(realdocs.site_packages() / folder, root / folder, ignore=lambda *_: ["RECORD"])
    folder = realdocs.SOURCES["httpx"][0]
    (root / folder / "METADATA").write_text("Name: httpx\nVersion: 9.9.9\n", encoding="utf-8")
    with pytest.raises(InputError, match="SHA-256 .* differs") as error:
        realdocs.build(tmp_path / "out", root=root)
    assert folder in str(error.value)
    shutil.rmtree(root / folder)
    with pytest.raises(InputError, match="make setup"):
        realdocs.build(tmp_path / "out", root=root)
