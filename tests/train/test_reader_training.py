"""Training a span reader here: it learns a trivially learnable span, abstains by a calibrated threshold,
reads SQuAD-layout files with typed errors, and makes no-answer examples from answerable ones."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from ragline.errors import ConfigError, InputError
from ragline.train.reader import (
    QA,
    Paragraph,
    ReaderTraining,
    no_answer_examples,
    read_paragraphs,
    split_articles,
    train_reader,
)

pytest.importorskip("transformers")

FILLER = ["The weather was mild that year.", "Many birds sang in the old park.", "A river runs past the hill."]


def write_tiny_squad(path: Path, articles: int = 6, per_article: int = 4) -> Path:
    """Paragraphs whose answer is always the code after "The code is": a span a reader learns in a few steps."""
    rng = random.Random(0)
    lines = []
    for a in range(articles):
        for p in range(per_article):
            code = f"{rng.choice('KQXZ')}{rng.choice('VWYJ')}-{rng.randint(10, 99)}"
            sents = [*rng.sample(FILLER, 2), f"The code is {code}.", rng.choice(FILLER)]
            rng.shuffle(sents)
            context = " ".join(sents)
            start = context.index(code)
            answers = [{"text": code, "answer_start": start}]
            qa = {"id": f"a{a}p{p}", "question": "What is the code?", "answers": answers}
            lines.append(json.dumps({"id": f"a{a}p{p}", "title": f"Article_{a}", "context": context, "qas": [qa]}))
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


TINY = ReaderTraining(
    dev_fraction=0.34, dev_questions=8, max_questions=None, no_answer="other", no_answer_share=0.25,
    max_length=48, stride=16, batch_size=4, epochs=8, max_steps=24, eval_every=12, patience=5, learning_rate=3e-4,
    warmup=0.0,
)  # fmt: skip


@pytest.mark.slow
@pytest.mark.models
def test_reader_learns_a_trivial_span_and_reads_it_with_a_citation(tmp_path: Path, monkeypatch):
    """Planted fault: an optimizer that never steps (``optimizer.step`` removed from the loop) leaves the dev
    F1 at the untrained figure and the loss flat; both assertions then fail."""
    from ragline.answer.context import build_context
    from ragline.answer.pipeline import build_reader
    from ragline.types import Hit

    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))
    data = write_tiny_squad(tmp_path / "tiny.jsonl.gz")
    card = train_reader(data, "tiny-reader", TINY, progress=False)
    assert card["kind"] == "reader" and card["train_articles"] == 4 and card["dev_articles"] == 2
    first, last = card["loss_first_last"]
    assert sum(last) / len(last) < 0.5 * sum(first) / len(first)
    assert card["dev"]["best"] > card["dev"]["untrained"] + 0.3
    assert card["dev"]["best_figures"]["hasans_f1_answering_all"] >= 0.9

    reader = build_reader("span:model=trained:tiny-reader")
    text = "The weather was mild that year. The code is ZY-42. Many birds sang in the old park."
    context = build_context([Hit("other", 1.0, 1, "", FILLER[2]), Hit("doc-7#0", 0.5, 2, "", text)])
    answer = reader.read("What is the code?", context)
    assert answer.text == "ZY-42" and not answer.abstained
    assert answer.citations[0].n == 2 and answer.citations[0].chunk_id == "doc-7#0"


def test_no_answer_examples_never_hold_the_answer():
    """Planted fault: keeping the answer's sentence (or a paragraph holding the answer) fails the check."""
    a = "Alpha Beta. The capital is Zorn. Gamma delta."
    b = "Other text about Zorn only."
    c = "Nothing relevant here at all."
    qa = QA("q1", "What is the capital?", a, (a.index("Zorn"), a.index("Zorn") + 4), ("Zorn",), "T")
    by_title = {"T": [Paragraph("T", a, (qa,)), Paragraph("T", b, ()), Paragraph("T", c, ())]}
    made = no_answer_examples([qa] * 2, by_title, "both", 1.0, random.Random(0))
    assert {m.id.rsplit("-", 1)[1] for m in made} == {"other", "removed"}
    for m in made:
        assert m.answer is None and "Zorn" not in m.context
    removed = next(m for m in made if m.id.endswith("removed"))
    assert removed.context == "Alpha Beta. Gamma delta."
    assert next(m for m in made if m.id.endswith("other")).context == c


def test_dev_slice_is_cut_by_article(tmp_path: Path):
    paragraphs = list(read_paragraphs(write_tiny_squad(tmp_path / "t.jsonl.gz", articles=10)))
    train, dev = split_articles(paragraphs, 0.2, seed=1)
    assert len(dev) == 2 and not set(train) & set(dev) and len(train) + len(dev) == 10
    assert split_articles(paragraphs, 0.2, seed=1) == (train, dev)


def test_bad_lines_name_the_file_and_line(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    good = json.dumps({"title": "T", "context": "abc", "qas": []})
    bad.write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl:2"):
        list(read_paragraphs(bad))
    wrong = tmp_path / "wrong.jsonl"
    qa = {"id": "q", "question": "?", "answers": [{"text": "xyz", "answer_start": 0}]}
    wrong.write_text(json.dumps({"title": "T", "context": "abc", "qas": [qa]}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"wrong.jsonl:1.*not at 0"):
        list(read_paragraphs(wrong))
    with pytest.raises(ConfigError, match="no_answer"):
        ReaderTraining(no_answer="sometimes").check()
