"""The span reader's training data: SQuAD-layout paragraphs read and split by article, and the no-answer examples
made from answerable ones (``ragline.train.reader``'s module doc says which ways and why)."""

from __future__ import annotations

import gzip
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragline.answer.spans import sentences
from ragline.errors import ConfigError, InputError
from ragline.text.opposites import OPPOSITE


@dataclass(frozen=True, slots=True)
class QA:
    """One reading example: a question, a passage and the answer's character span (``None``: no answer)."""

    id: str
    question: str
    context: str
    answer: tuple[int, int] | None
    answers: tuple[str, ...] = ()
    title: str = ""


@dataclass(frozen=True, slots=True)
class Paragraph:
    title: str
    context: str
    qas: tuple[QA, ...]


@dataclass(frozen=True, slots=True)
class ReaderData:
    """The file trained on, for the card (``TrainingRun.publish`` reads ``name``, ``path``, ``hash``)."""

    name: str
    path: Path
    hash: str


def read_paragraphs(path: str | Path) -> Iterator[Paragraph]:
    """The paragraphs of a SQuAD-layout JSON-lines file (``.gz`` or plain); InputError names file:line."""
    path = Path(path)
    if not path.is_file():
        raise InputError(str(path), "no such file (SQuAD-layout JSON lines: one paragraph a line with its qas)")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
                title, context = str(record.get("title", "")), record["context"]
                qas = []
                for qa in record["qas"]:
                    answers = qa.get("answers") or []
                    span = None
                    if answers:
                        start, text = int(answers[0]["answer_start"]), answers[0]["text"]
                        if context[start : start + len(text)] != text:
                            raise InputError(where, f"question {qa.get('id')}: answer {text!r} not at {start}")
                        span = (start, start + len(text))
                    texts = tuple(a["text"] for a in answers)
                    qas.append(QA(str(qa["id"]), qa["question"], context, span, texts, title))
            except InputError:
                raise
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
                raise InputError(where, f"not a SQuAD-layout paragraph ({type(error).__name__}: {error})") from error
            yield Paragraph(title, context, tuple(qas))


def split_articles(paragraphs: list[Paragraph], dev_fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """(train titles, dev titles): a seeded ``dev_fraction`` of the articles, at least one each side."""
    titles = sorted({p.title for p in paragraphs})
    if len(titles) < 2:
        raise ConfigError(f"the dev slice is cut by article: need at least 2 articles (titles), got {len(titles)}")
    random.Random(seed).shuffle(titles)
    n_dev = min(max(1, round(len(titles) * dev_fraction)), len(titles) - 1)
    return sorted(titles[n_dev:]), sorted(titles[:n_dev])


# The modes that alternate several ways, in turn over the picked questions.
ALTERNATING = {
    "both": ("other", "removed"),
    "hard": ("similar", "removed"),
    "adversarial": ("swapped", "similar", "removed"),
    "adversarial-negated": ("swapped", "negated", "similar", "removed"),
    "adversarial-antonym": ("swapped", "similar", "removed"),
}
# A way that fits few questions, tried first on every picked question of its modes; a question it does not fit
# gets the mode's alternation. (Taking its turn like the others, antonym would be tried on a quarter of the
# questions and fit one in eight of those: too few examples to teach anything.)
FIRST_WHERE_IT_FITS = {"adversarial-antonym": "antonym"}
# Every ``no_answer`` mode: one way, the alternations, or none ("none" last: the dev slice cannot do without).
NO_ANSWER_MODES = ("other", "removed", "similar", "swapped", "negated", "antonym", *ALTERNATING, "none")


def no_answer_examples(
    questions: list[QA], by_title: dict[str, list[Paragraph]], mode: str, share: float, rng: random.Random
) -> list[QA]:
    """No-answer counterparts for a seeded ``share`` of ``questions`` (see the module doc for ``mode``)."""
    if mode == "none" or share <= 0:
        return []
    picked = rng.sample(questions, round(len(questions) * share))
    ways = ALTERNATING.get(mode, (mode,))
    first = FIRST_WHERE_IT_FITS.get(mode)
    rare = RareWords(by_title) if "similar" in ways else None
    swaps = EntitySwaps(by_title) if "swapped" in ways else None
    antonyms = Antonyms() if "antonym" in (*ways, first) else None

    def counterpart(way: str, qa: QA) -> QA | None:
        """``qa``'s no-answer counterpart made the ``way`` way, or None where that way does not fit it."""
        question: str | None = qa.question
        context: str | None = qa.context
        if way == "other":
            context = _other_paragraph(qa, by_title, rng)
        elif way == "similar" and rare is not None:
            context = rare.closest_without_answer(qa)
        elif way == "swapped" and swaps is not None:
            question = swaps.swap(qa, rng)
        elif way == "negated":
            question = negate(qa)
        elif way == "antonym" and antonyms is not None:
            question = antonyms.swap(qa)
        else:
            context = _without_answer_sentence(qa)
        if question is None or context is None:
            return None
        return QA(no_answer_id(qa.id, way), question, context, None, (), qa.title)

    made = []
    turn = 0  # the alternation's turn: only the questions the first way does not fit take one
    for qa in picked:
        example = counterpart(first, qa) if first else None
        if example is None:
            example, turn = counterpart(ways[turn % len(ways)], qa), turn + 1
        if example is not None:
            made.append(example)
    return made


def no_answer_id(question_id: str, way: str) -> str:
    """The id of the no-answer example made from question ``question_id`` the ``way`` way."""
    return f"{question_id}-no-{way}"


def made_from(example_id: str) -> tuple[str, str | None]:
    """(the question's id, the way) of a made no-answer example's id; (the id, None) for any other example."""
    question_id, marker, way = example_id.rpartition("-no-")
    return (question_id, way) if marker else (example_id, None)


class RareWords:
    """The question's rare words in a paragraph: the sum of the BM25 IDF (over every paragraph given) of the
    question's distinct terms the paragraph holds (the project's English analyzer: stopwords out, stems)."""

    def __init__(self, by_title: dict[str, list[Paragraph]]) -> None:
        from ragline.index.bm25 import BM25Params, idf
        from ragline.text.analyzer import get_analyzer

        self.analyze = get_analyzer("english")
        self.by_title = by_title
        self.terms: dict[str, frozenset[str]] = {}  # per paragraph text, analyzed once
        df: dict[str, int] = {}
        contexts = {p.context for paragraphs in by_title.values() for p in paragraphs}
        for context in contexts:
            for term in self._terms(context):
                df[term] = df.get(term, 0) + 1
        names = list(df)
        weights = idf(BM25Params(), np.array([df[t] for t in names]), len(contexts))
        self.idf = dict(zip(names, weights.tolist()))

    def _terms(self, text: str) -> frozenset[str]:
        if text not in self.terms:
            self.terms[text] = frozenset(self.analyze(text))
        return self.terms[text]

    def overlap(self, question: str, context: str) -> float:
        held = self._terms(context)
        return sum(self.idf.get(t, 0.0) for t in set(self.analyze(question)) if t in held)

    def closest_without_answer(self, qa: QA) -> str | None:
        """The paragraph of ``qa``'s article, not its own and without its answer text, with the most overlap."""
        best, best_score = None, -1.0
        for p in self.by_title.get(qa.title, []):
            lowered = p.context.lower()
            if p.context == qa.context or any(a.lower() in lowered for a in qa.answers):
                continue
            score = self.overlap(qa.question, p.context)
            if score > best_score:
                best, best_score = p.context, score
        return best


class EntitySwaps:
    """The question with a name or number it shares with its paragraph replaced by one of the same shape from
    another article's questions that the paragraph never mentions ("When did the Normans conquer Sicily?" ->
    "... conquer Portugal?"): the paragraph still shares the question's other words but no longer holds what it
    asks about, the "entity swap" kind of unanswerable question SQuAD 2.0's writers made. Names are found by the
    graph's capitalization rules (``structures.entities``); a shape is a name's word count or a number's digit
    count."""

    def __init__(self, by_title: dict[str, list[Paragraph]]) -> None:
        self.pool: dict[tuple[str, int], list[tuple[str, str]]] = {}  # shape -> (title, name), in file order
        for title, paragraphs in by_title.items():
            names = {n for p in paragraphs for qa in p.qas for n in self.names(qa.question)}
            for name in sorted(names):
                self.pool.setdefault(_shape(name), []).append((title, name))

    @staticmethod
    def names(question: str) -> list[str]:
        from ragline.structures.entities import RuleEntityExtractor

        return RuleEntityExtractor().query_names(question) + _NUMBER.findall(question)

    def swap(self, qa: QA, rng: random.Random) -> str | None:
        """The swapped question, or None when it names nothing its paragraph holds or no stand-in fits."""
        lowered, question = qa.context.lower(), qa.question.lower()
        anchors = [n for n in self.names(qa.question) if _mentions(lowered, n)]
        rng.shuffle(anchors)
        for anchor in anchors:
            stand_ins = [
                name
                for title, name in self.pool.get(_shape(anchor), [])
                if title != qa.title and not _mentions(lowered, name) and name.lower() not in question
            ]
            at = re.search(rf"(?<!\w){re.escape(anchor)}(?!\w)", qa.question)
            if stand_ins and at is not None:
                return qa.question[: at.start()] + rng.choice(stand_ins) + qa.question[at.end() :]
        return None


_NUMBER = re.compile(r"(?<![\w.,])\d+(?![\w.,]\d)")


# An auxiliary verb and its negated contraction: the contraction stays grammatical where the auxiliary is inverted
# ("did the quake occur" -> "didn't the quake occur"), where a bare "not" after it would not be.
_NEGATED = {"is": "isn't", "are": "aren't", "was": "wasn't", "were": "weren't", "do": "don't", "does": "doesn't",
            "did": "didn't", "can": "can't", "could": "couldn't", "has": "hasn't", "have": "haven't", "had": "hadn't",
            "will": "won't", "would": "wouldn't", "should": "shouldn't", "must": "mustn't"}  # fmt: skip
_NEGATION = re.compile(r"\b(?:not|never|no|none|nor|cannot)\b|n't\b", re.IGNORECASE)


def negate(qa: QA) -> str | None:
    """The question with its first auxiliary verb past the question word negated ("What did the Normans
    conquer?" -> "What didn't the Normans conquer?"), the "negation" kind of SQuAD 2.0's unanswerable questions;
    None for a question that opens with its auxiliary (yes/no), has none, or already negates, or when the
    sentence holding the answer negates (it might then answer the negated question)."""
    if _NEGATION.search(qa.question) or qa.answer is None or _NEGATION.search(_answer_sentences(qa)):
        return None
    words = qa.question.split(" ")
    for i, word in enumerate(words[1:], 1):
        if word.lower() in _NEGATED:
            return " ".join([*words[:i], _NEGATED[word.lower()], *words[i + 1 :]])
    return None


class Antonyms:
    """The question with one word turned into its opposite ("What was the largest city?" -> "... smallest
    city?"), SQuAD 2.0's "antonym" kind of unanswerable question: the word (by its stem) is in the answer's
    sentence, so the answer hangs on it, and its opposite is nowhere in the paragraph (so the paragraph says
    nothing of the changed question) nor in the question ("upper or lower classes" offers both). The first such
    word past the question word; None where none fits."""

    def __init__(self) -> None:
        from ragline.text.analyzer import get_analyzer

        self.analyze = get_analyzer("english")
        self.opposite = OPPOSITE

    def stems(self, text: str) -> set[str]:
        return set(self.analyze(text))

    def swap(self, qa: QA) -> str | None:
        if qa.answer is None:
            return None
        words = qa.question.split(" ")
        candidates = [(i, w) for i, w in enumerate(words[1:], 1) if w.lower().strip("?,.;:") in self.opposite]
        if not candidates:
            return None
        held, elsewhere = self.stems(_answer_sentences(qa)), self.stems(qa.context) | self.stems(qa.question)
        for i, word in candidates:
            core = word.strip("?,.;:")
            opposite, stems = self.opposite[core.lower()], self.stems(core)
            if not stems or not stems <= held or self.stems(opposite) & elsewhere:
                continue
            if core[:1].isupper():
                opposite = opposite[:1].upper() + opposite[1:]
            return " ".join([*words[:i], word.replace(core, opposite), *words[i + 1 :]])
        return None


def _answer_sentences(qa: QA) -> str:
    """The sentences of ``qa``'s paragraph that hold (part of) its answer, joined; "" for a no-answer example."""
    if qa.answer is None:
        return ""
    start, end = qa.answer
    return " ".join(qa.context[s:e] for s, e in sentences(qa.context) if s < end and e > start)


def _shape(name: str) -> tuple[str, int]:
    return ("number", len(name)) if name.isdigit() else ("name", len(name.split()))


def _mentions(lowered_text: str, name: str) -> bool:
    lowered = name.lower()  # the substring test first: most names are not there, and it is much cheaper
    return lowered in lowered_text and re.search(rf"(?<!\w){re.escape(lowered)}(?!\w)", lowered_text) is not None


def _other_paragraph(qa: QA, by_title: dict[str, list[Paragraph]], rng: random.Random) -> str | None:
    others = [p.context for p in by_title.get(qa.title, []) if p.context != qa.context]
    others = [c for c in others if not any(a.lower() in c.lower() for a in qa.answers)]
    return rng.choice(others) if others else None


def _without_answer_sentence(qa: QA) -> str | None:
    if qa.answer is None:
        return None
    start, end = qa.answer
    kept = [qa.context[s:e] for s, e in sentences(qa.context) if e <= start or s >= end]
    context = " ".join(kept)
    if not context.strip() or any(a.lower() in context.lower() for a in qa.answers):
        return None
    return context


def new_questions(questions: list[QA], skip: int, seed: int) -> list[QA]:
    """``questions`` less the ``skip`` that a run with this seed and ``max_questions=skip`` sampled first."""
    if skip <= 0:
        return questions
    seen = {qa.id for qa in random.Random(seed).sample(questions, min(skip, len(questions)))}
    return [qa for qa in questions if qa.id not in seen]
