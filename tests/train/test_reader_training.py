"""Training a span reader here: it learns a trivially learnable span, abstains by a calibrated threshold,
reads SQuAD-layout files with typed errors, and makes no-answer examples from answerable ones."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ragline.errors import ConfigError, InputError, ModelError
from ragline.train.reader import ReaderTraining, _base_rounds, train_reader, training_examples
from ragline.train.reader_data import (
    QA,
    Antonyms,
    EntitySwaps,
    Paragraph,
    RareWords,
    negate,
    new_questions,
    no_answer_examples,
    read_paragraphs,
    split_articles,
)
from train.tiny_squad import FILLER, write_tiny_squad

pytest.importorskip("transformers")

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
    by_margin = build_reader("span:model=trained:tiny-reader,select=margin").read("What is the code?", context)
    assert by_margin.text == "ZY-42" and by_margin.citations[0].chunk_id == "doc-7#0"


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


NORMANS = [
    "The Norman conquest of Sicily began in 1061 under Roger. He was the brother of Robert Guiscard.",
    "The abbey of Bec trained many scholars in the liturgy and in letters.",
    "Norman masons built churches in the Romanesque style across the duchy.",
    "Roger and the Norman knights took the cities of Sicily one by one; the conquest of the island was slow.",
    "In 1061 the Norman army crossed to Sicily at Messina, beginning the conquest.",
]


def _normans() -> tuple[QA, dict[str, list[Paragraph]]]:
    own = NORMANS[0]
    qa = QA("n1", "When did the Norman conquest of Sicily begin?", own, (own.index("1061"), own.index("1061") + 4),
            ("1061",), "Normans")  # fmt: skip
    paragraphs = [Paragraph("Normans", c, (qa,) if c == own else ()) for c in NORMANS]
    # Other articles: IDF is counted over every paragraph given, so "Norman" is rarer than "the".
    others = [Paragraph(f"T{i}", f"The {w} of the valley was the town's pride.", ()) for i, w in enumerate("abcdef")]
    by_title: dict[str, list[Paragraph]] = {}
    for p in paragraphs + others:
        by_title.setdefault(p.title, []).append(p)
    return qa, by_title


def test_similar_no_answer_shares_the_questions_rare_words_and_never_holds_the_answer():
    """The hard pick is the article's paragraph, not its own and without the answer text, that shares the most
    of the question's rare words. Planted faults, each checked to fail here: picking a random eligible
    paragraph (as ``other`` does) instead of the highest overlap, and dropping the answer-text filter (the
    closest paragraph, NORMANS[4], holds "1061")."""
    qa, by_title = _normans()
    rare = RareWords(by_title)
    picked = rare.closest_without_answer(qa)
    assert picked == NORMANS[3]
    eligible = [NORMANS[1], NORMANS[2], NORMANS[3]]
    assert all(rare.overlap(qa.question, picked) > rare.overlap(qa.question, c) for c in eligible if c != picked)
    made = no_answer_examples([qa] * 4, by_title, "hard", 1.0, random.Random(0))
    assert {m.id.rsplit("-", 1)[1] for m in made} == {"similar", "removed"}
    for m in made:
        assert m.answer is None and "1061" not in m.context
    assert next(m for m in made if m.id.endswith("similar")).context == NORMANS[3]


def test_similar_overlap_beats_a_random_paragraph_on_a_squad_layout_file(tmp_path: Path):
    """Over many questions, the ``similar`` paragraph shares more rare words with its question than a random
    other paragraph of the article does, and it is the best of them for every question. Planted fault:
    ``closest_without_answer`` taking the first eligible paragraph instead of the best fails this."""
    rng = random.Random(3)
    topics = ["glacier", "falcon", "copper", "harbour", "violin", "orchard", "comet", "marble"]
    lines = []
    for a in range(3):
        for p, topic in enumerate(topics):
            nearby = topics[(p + 1) % len(topics)]  # so one other paragraph names this one's topic
            context = (
                f"The {topic} of region {a} is known, as is its {nearby}. "
                f"Its {topic} keeper lived there for {p + 1} decades."
            )
            start = context.index(f"{p + 1} decades")
            question = f"How long did the {topic} keeper live in region {a}?"
            qa = {
                "id": f"{a}-{p}",
                "question": question,
                "answers": [{"text": f"{p + 1} decades", "answer_start": start}],
            }
            lines.append(json.dumps({"title": f"A{a}", "context": context, "qas": [qa]}))
    path = tmp_path / "topics.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    paragraphs = list(read_paragraphs(path))
    by_title: dict[str, list[Paragraph]] = {}
    for para in paragraphs:
        by_title.setdefault(para.title, []).append(para)
    rare = RareWords(by_title)
    picked_scores, random_scores = [], []
    for para in paragraphs:
        qa = para.qas[0]
        picked = rare.closest_without_answer(qa)
        assert picked is not None and qa.answers[0] not in picked
        others = [o.context for o in by_title[qa.title] if o.context != qa.context and qa.answers[0] not in o.context]
        picked_scores.append(rare.overlap(qa.question, picked))
        assert picked_scores[-1] == max(rare.overlap(qa.question, o) for o in others)
        random_scores.append(rare.overlap(qa.question, rng.choice(others)))
    assert sum(picked_scores) / len(picked_scores) > sum(random_scores) / len(random_scores)


def test_a_second_round_reads_new_questions_and_keeps_the_dev_slice(tmp_path: Path):
    """``skip_questions=N`` leaves out exactly the N questions a run with ``max_questions=N`` (same seed) read,
    and the dev questions stay the same. Planted fault: ignoring ``skip_questions`` (the pool unchanged)
    makes the two rounds share questions and this fails."""
    data = write_tiny_squad(tmp_path / "t.jsonl.gz", articles=12, per_article=5)
    base = ReaderTraining(dev_fraction=0.25, dev_questions=6, max_questions=10, no_answer="none")
    first, dev1, _ = training_examples(data, base, lambda message: None)
    second_settings = ReaderTraining(dev_fraction=0.25, dev_questions=6, max_questions=10, skip_questions=10,
                                     no_answer="none")  # fmt: skip
    second, dev2, counts = training_examples(data, second_settings, lambda message: None)
    assert len(first) == len(second) == 10 and counts["train_questions_skipped"] == 10
    assert not {q.id for q in first} & {q.id for q in second}
    assert [q.id for q in dev1 if q.answer] == [q.id for q in dev2 if q.answer]
    pool = [qa for qa in first + second]
    assert new_questions(pool, 0, 0) is pool


def test_new_settings_leave_earlier_models_up_to_date_and_cards_count_every_round(tmp_path: Path, monkeypatch):
    """Settings added later (``dev_no_answer``, ``skip_questions``) at their default keep the key a model trained
    before them has (so ``make squad-reader`` does not train again), and a round on top of a trained reader
    counts the examples that reader had seen. Planted faults: keeping the new fields in the key changes it
    (first assertion fails); reading the base's ``steps`` instead of its best step's examples fails the last."""
    from dataclasses import asdict

    from ragline.train.models import settings_key

    old = asdict(ReaderTraining())
    del old["dev_no_answer"], old["skip_questions"]
    assert ReaderTraining().key() == settings_key(old)
    assert ReaderTraining(dev_no_answer="hard").key() != ReaderTraining().key()
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path))
    folder = tmp_path / "models" / "r1"
    folder.mkdir(parents=True)
    card = {"kind": "reader", "id": "r1@abc", "steps": 551, "dev": {"best_figures": {"examples_seen": 8000}}}
    (folder / "card.json").write_text(json.dumps(card), encoding="utf-8")
    assert _base_rounds("minilm") == {"id": "minilm", "seen": 0}
    assert _base_rounds("trained:r1") == {"id": "r1@abc", "seen": 8000}
    (folder / "card.json").write_text(json.dumps({**card, "examples_seen_total": 15000}), encoding="utf-8")
    assert _base_rounds("trained:r1")["seen"] == 15000


def _swap_world() -> tuple[QA, dict[str, list[Paragraph]]]:
    own = "Roger was the brother of Robert Guiscard. The Norman conquest of Sicily began in 1061 under Roger."
    qa = QA("s1", "When did Roger begin the Norman conquest?", own, (own.index("1061"), own.index("1061") + 4),
            ("1061",), "Normans")  # fmt: skip
    others = {
        "Iberia": [Paragraph("Iberia", "Text.", (QA("i1", "Who ruled Portugal in 1143?", "Text.", None),))],
        "Islands": [Paragraph("Islands", "Text.", (QA("k1", "Why did Sicily trade with Malta?", "Text.", None),))],
    }
    normans = [Paragraph("Normans", own, (qa,)), Paragraph("Normans", "Norman masons built churches in Sicily.", ())]
    return qa, {"Normans": normans, **others}


def test_swapped_no_answer_replaces_a_name_the_paragraph_holds_with_one_it_never_mentions():
    """A ``swapped`` example keeps the question's own paragraph and changes one name (or number) the paragraph
    holds into one of the same shape from another article that the paragraph never mentions; the article's own
    names are never stand-ins. Planted faults, each checked to fail here: dropping the "never mentions" filter
    (Sicily, from the Islands article, could stand in for Roger's one-word shape and leave it answerable) and
    swapping a name the paragraph does not hold."""
    qa, by_title = _swap_world()
    swaps = EntitySwaps(by_title)
    for seed in range(20):
        swapped = swaps.swap(qa, random.Random(seed))
        assert swapped is not None and swapped != qa.question
        before, after = qa.question.rstrip("?").split(), swapped.rstrip("?").split()
        changed = [(b, a) for b, a in zip(before, after) if b != a]
        assert len(before) == len(after) and len(changed) == 1, (qa.question, swapped)
        anchor, stand_in = changed[0]
        assert anchor in qa.context and stand_in.lower() not in qa.context.lower()
        assert stand_in in {"Portugal", "Malta"}  # one word, from the other articles, absent from the paragraph
    assert swaps.swap(QA("s2", "Who painted Guernica?", qa.context, None), random.Random(0)) is None
    made = no_answer_examples([qa] * 6, by_title, "adversarial", 1.0, random.Random(0))
    assert {m.id.rsplit("-", 1)[1] for m in made} == {"swapped", "similar", "removed"}
    for m in made:
        assert m.answer is None
        assert (m.question != qa.question and m.context == qa.context) if m.id.endswith("swapped") else True


def test_negated_no_answer_contracts_the_questions_auxiliary_and_skips_what_a_negation_could_answer():
    """``negated`` turns the first auxiliary past the question word into its negated contraction, so an inverted
    question stays grammatical; a yes/no question, one already negated, and one whose answer sentence negates are
    left alone. Planted faults, each checked to fail here: negating the opening auxiliary of a yes/no question,
    and dropping the answer-sentence check."""
    context = "The quake struck in 2008. It was not felt in Tibet, which lies to the west."
    qa = QA("n1", "In what year did the quake strike?", context, (context.index("2008"), context.index("2008") + 4),
            ("2008",), "T")  # fmt: skip
    assert negate(qa) == "In what year didn't the quake strike?"
    assert negate(QA("n2", "Did the quake strike in 2008?", context, qa.answer, ("2008",), "T")) is None
    assert negate(QA("n3", "What year didn't the quake strike?", context, qa.answer, ("2008",), "T")) is None
    tibet = (context.index("Tibet"), context.index("Tibet") + 5)
    assert negate(QA("n4", "Where was the quake felt?", context, tibet, ("Tibet",), "T")) is None
    made = no_answer_examples([qa] * 4, {"T": [Paragraph("T", context, (qa,))]}, "negated", 1.0, random.Random(0))
    assert made and all(m.question == "In what year didn't the quake strike?" and m.context == context for m in made)


def test_antonym_no_answer_turns_a_word_the_answer_hangs_on_into_its_opposite_the_paragraph_never_says():
    """``antonym`` swaps a listed word of the question that the answer's sentence holds (by stem) for its opposite,
    only where neither the paragraph nor the question says the opposite; ``adversarial-antonym`` makes it wherever
    it fits and gives the other questions the adversarial alternation. Planted faults, each checked to fail here:
    dropping the answer-sentence check, dropping the paragraph check, and alternating antonym like the others."""
    context = (
        "Lyon is the largest city of the region. Its oldest bridge was built in 1190. The newest is from 2001. "
        "The river is wide."
    )

    def qa(qid: str, question: str, answer: str) -> QA:
        at = context.index(answer)
        return QA(qid, question, context, (at, at + len(answer)), (answer,), "T")

    antonyms = Antonyms()
    largest = qa("a1", "What is the largest city of the region?", "Lyon")
    assert antonyms.swap(largest) == "What is the smallest city of the region?"
    # "largest" is not in the answer's sentence: the answer does not hang on it
    assert antonyms.swap(qa("a2", "When was the bridge of the largest city built?", "1190")) is None
    # the paragraph says "newest", the opposite of "oldest": the changed question is answered there
    assert antonyms.swap(qa("a3", "When was the oldest bridge built?", "1190")) is None
    # the question offers both ("largest or smallest")
    assert antonyms.swap(qa("a4", "Is Lyon the largest or smallest city?", "Lyon")) is None
    assert antonyms.swap(qa("a5", "Which river is wide?", "river")) is None  # no listed word
    plain = qa("a6", "Which river is wide?", "river")
    paragraphs = {"T": [Paragraph("T", context, (largest, plain))]}
    made = no_answer_examples([largest] * 3 + [plain] * 3, paragraphs, "adversarial-antonym", 1.0, random.Random(0))
    ways = sorted(m.id.rsplit("-", 1)[1] for m in made)
    assert ways.count("antonym") == 3, ways  # every question it fits, not one in four
    assert all(m.question == "What is the smallest city of the region?" for m in made if m.id.endswith("antonym"))
    assert {"antonym", "removed"} <= set(ways) and all(m.answer is None for m in made)


def test_a_missing_reader_names_what_trains_it(tmp_path: Path, monkeypatch):
    """The hint of a missing ``trained:NAME`` reader names SQuAD-layout training data (a BEIR folder cannot train a
    reader) and, for the default ``squad``, the make target. Planted fault: the reranker's BEIR example here."""
    from ragline.train.models import resolve_model

    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path))
    with pytest.raises(ModelError, match=r"--name squad` \(or `make squad-reader`\).*squad_v1.1_train.jsonl.gz"):
        resolve_model("trained:squad", "reader")
    with pytest.raises(ModelError, match=r"--name other` \(e.g\. DATASET = .*reader_train"):
        resolve_model("trained:other", "reader")
