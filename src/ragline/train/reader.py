"""``ragline train reader``: fine-tune a span reader (start/end heads, a "no answer") from the packaged MiniLM.

Data: SQuAD-layout JSON lines, one paragraph a line with its questions (``{"id", "title", "context",
"qas": [{"id", "question", "answers": [{"text", "answer_start"}]}]}``, gzip or not). The dev slice is cut
BY ARTICLE (``title``): no dev paragraph shares an article with a train one. ``max_questions`` subsamples
the train questions (seeded); 2 CPU cores cannot read all 87,599 of SQuAD v1.1 in an hour.

No-answer examples (SQuAD v1.1 has none) are made from the answerable ones, both ways the lecture names
(``no_answer="both"`` alternates them; ``"other"``, ``"removed"`` or ``"none"`` for one or neither):

- ``other``: the question paired with another paragraph of the same article that does not contain the
  answer text (same topic, so the reader must check the question, not only the subject);
- ``removed``: the question's own paragraph with the sentence holding the answer removed (skipped when the
  answer text still occurs in what is left);
- ``similar``: the paragraph of the same article, not its own and without the answer text, that shares the
  most of the question's rare words (the sum of the BM25 IDF of the question's terms it holds; IDF over
  every paragraph of the file): a distractor on the question's own words, as SQuAD 2.0's unanswerable
  questions are; ``"hard"`` alternates ``similar`` and ``removed``;
- ``swapped``: the question itself changed, a name or number it shares with its own paragraph replaced by one
  of the same shape from another article (``reader_data.EntitySwaps``), paired with its own paragraph: the
  paragraph shares every other word of the question and no longer holds what it asks about, the "entity swap"
  kind of SQuAD 2.0's unanswerable questions; ``"adversarial"`` alternates ``swapped``, ``similar`` and
  ``removed``;
- ``negated``: the question with its auxiliary verb negated ("did" -> "didn't"), with its own paragraph
  (``reader_data.negate``: SQuAD 2.0's "negation" kind); ``"adversarial-negated"`` alternates ``swapped``,
  ``negated``, ``similar`` and ``removed``;
- ``antonym``: a word of the question that the answer's sentence holds turned into its opposite ("largest" ->
  "smallest", "began" -> "ended"; a general English list), when the paragraph never says the opposite
  (``reader_data.Antonyms``: SQuAD 2.0's "antonym" kind); it fits about one question in eight, so
  ``"adversarial-antonym"`` makes it wherever it fits and alternates ``swapped``, ``similar`` and ``removed``
  over the rest.

``no_answer_share`` of the sampled questions get such a counterpart, pointing at ``[CLS]``. The dev slice's
no-answer examples are made the ``dev_no_answer`` way (``both`` by default; a run trained on hard examples
calibrates its threshold on hard ones).

A second round: ``base="trained:NAME"`` starts from a trained reader (its heads included), and
``skip_questions=N`` leaves out the N questions a run with the same seed and ``max_questions=N`` sampled, so
the round reads questions the first did not; the card says what the model was initialised from and the
examples seen in all rounds.

The model: ``AutoModelForQuestionAnswering`` over the base encoder (a new start/end head), cross-entropy on
the gold start and end pieces of the window holding the answer (a no-answer example: ``[CLS]``, a seeded
window). Windows of ``max_length`` pieces, ``stride`` overlap, as the reader reads. Every ``eval_every``
steps the dev slice is read whole (every window) and decoded (``ragline.answer.span_decode``); the dev
figure is the mean F1 over its answerable and no-answer examples at the best no-answer threshold, which is
stored with the best step (``span.json``) and used by reader ``span``. Seeded, resumable, a card, saved as
``trained:NAME`` by the loop the reranker and embedder trainers share (``ragline.train.loop``).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragline.answer.span_decode import best_threshold, decode
from ragline.answer.span_reader import SETTINGS_FILE, encode_pairs, encode_windows, load_qa_model, score_windows
from ragline.errors import ConfigError
from ragline.eval.answers import f1 as answer_f1
from ragline.models.weights import sha256_file
from ragline.train.data import rng_for, seed_all
from ragline.train.loop import TrainingRun
from ragline.train.models import settings_key
from ragline.train.reader_data import (
    NO_ANSWER_MODES,
    QA,
    Paragraph,
    ReaderData,
    new_questions,
    no_answer_examples,
    read_paragraphs,
    split_articles,
)

Log = Callable[[str], None]
# Settings added after models were trained: left out of the key at their default, so those stay up to date.
_LATER_DEFAULTS = {"dev_no_answer": "both", "skip_questions": 0}


@dataclass(frozen=True)
class ReaderTraining:
    """Everything that determines a trained span reader (stamped in its card; a resume must match it)."""

    base: str = "minilm"
    split: str = "train"
    dev_fraction: float = 0.05  # share of the ARTICLES held out as the dev slice
    dev_questions: int = 100  # answerable dev questions read at each check (a seeded sample)
    max_questions: int | None = 6000  # train questions sampled (None: all); `make squad-reader`'s size
    no_answer: str = "both"
    no_answer_share: float = 0.5  # no-answer examples per sampled question
    max_length: int = 128  # word pieces per window (question included)
    stride: int = 32
    max_answer_tokens: int = 30  # longest answer span, word pieces
    batch_size: int = 16
    epochs: int = 1
    max_steps: int | None = None
    learning_rate: float = 1e-4
    warmup: float = 0.1
    eval_every: int = 100
    patience: int = 3
    seed: int = 0
    threads: int = 2
    dev_no_answer: str = "both"  # how the dev slice's no-answer examples are made (the threshold's calibration)
    skip_questions: int = 0  # leave out the questions a run with max_questions=skip_questions sampled

    def key(self) -> str:
        data = asdict(self)
        for name, default in _LATER_DEFAULTS.items():
            if data[name] == default:
                del data[name]
        return settings_key(data)

    def check(self) -> None:
        for name in ("no_answer", "dev_no_answer"):
            if getattr(self, name) not in NO_ANSWER_MODES:
                raise ConfigError(f"{name} {getattr(self, name)!r}: one of {', '.join(NO_ANSWER_MODES)}")
        if self.dev_no_answer == "none":
            raise ConfigError("dev_no_answer 'none': the dev slice needs no-answer examples to calibrate on")
        if self.skip_questions < 0:
            raise ConfigError(f"skip_questions {self.skip_questions}: 0 or more")
        if not 0.0 <= self.no_answer_share <= 1.0:
            raise ConfigError(f"no_answer_share {self.no_answer_share}: between 0 and 1")
        if self.stride >= self.max_length // 2:
            raise ConfigError(f"stride {self.stride} must be under half of max_length {self.max_length}")


def training_examples(
    path: str | Path, settings: ReaderTraining, log: Log
) -> tuple[list[QA], list[QA], dict[str, int]]:
    """(train examples, dev examples, counts): the article split, the subsample and the no-answer examples."""
    paragraphs = list(read_paragraphs(path))
    train_titles, dev_titles = split_articles(paragraphs, settings.dev_fraction, settings.seed)
    by_title: dict[str, list[Paragraph]] = {}
    for p in paragraphs:
        by_title.setdefault(p.title, []).append(p)
    dev_set = set(dev_titles)
    train_q = [qa for p in paragraphs if p.title not in dev_set for qa in p.qas if qa.answer is not None]
    dev_q = [qa for p in paragraphs if p.title in dev_set for qa in p.qas if qa.answer is not None]
    if not train_q or not dev_q:
        raise ConfigError(f"{path}: no answerable question in the train or the dev articles; nothing to learn")
    rng = random.Random(settings.seed)
    available = len(train_q)
    pool = new_questions(train_q, settings.skip_questions, settings.seed)
    if settings.max_questions is not None and settings.max_questions < len(train_q):
        sampled = rng.sample(train_q, settings.max_questions)  # drawn even when skipping: the dev sample stays
        train_q = (
            sampled
            if pool is train_q
            else random.Random(settings.seed + 1).sample(pool, min(settings.max_questions, len(pool)))
        )
    else:
        train_q = pool
    if not train_q:
        raise ConfigError(f"skip_questions {settings.skip_questions}: no train question is left")
    dev_q = rng.sample(dev_q, min(settings.dev_questions, len(dev_q)))
    train = train_q + no_answer_examples(train_q, by_title, settings.no_answer, settings.no_answer_share, rng)
    # The dev slice always has no-answer examples: the threshold is calibrated on them.
    dev = dev_q + no_answer_examples(dev_q, by_title, settings.dev_no_answer, 0.5, rng)
    counts = {
        "articles": len(by_title),
        "train_articles": len(train_titles),
        "dev_articles": len(dev_titles),
        "train_questions_available": available,
        "train_questions": len(train_q),
        "train_questions_skipped": settings.skip_questions,
        "train_examples": len(train),
        "train_no_answer": len(train) - len(train_q),
        "dev_questions": len(dev_q),
        "dev_no_answer": len(dev) - len(dev_q),
    }
    log(
        f"{path}: {len(train_titles)} train / {len(dev_titles)} dev articles; {len(train)} train examples "
        f"({counts['train_no_answer']} no-answer), {len(dev)} dev ({counts['dev_no_answer']} no-answer)"
    )
    return train, dev, counts


def targets(
    tokenizer: Any, batch: list[QA], settings: ReaderTraining, rng: random.Random
) -> tuple[dict[str, Any], Any, Any]:
    """The training input of a batch: one window per example (the one holding the answer; a no-answer
    example's seeded window) and its gold start and end pieces (0, ``[CLS]``, for no answer)."""
    import torch

    rows: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    encoded = encode_pairs(
        tokenizer, [qa.question for qa in batch], [qa.context for qa in batch], settings.max_length, settings.stride
    )
    by_example: dict[int, list[int]] = {}
    for w, e in enumerate(encoded.passages):
        by_example.setdefault(e, []).append(w)
    for e, qa in enumerate(batch):
        windows = by_example.get(e, [])
        if not windows:
            continue
        chosen, start, end = None, 0, 0
        if qa.answer is not None:
            a_start, a_end = qa.answer
            for w in windows:
                pieces = [(i, o) for i, o in enumerate(encoded.offsets[w]) if o is not None]
                if pieces and pieces[0][1][0] <= a_start and pieces[-1][1][1] >= a_end:
                    start = next(i for i, o in pieces if o[1] > a_start)
                    end = next(i for i, o in reversed(pieces) if o[0] < a_end)
                    chosen = w
                    break
        if chosen is None:
            chosen, start, end = rng.choice(windows), 0, 0
        rows.append(chosen)
        starts.append(start)
        ends.append(end)
    inputs = {key: value[rows] for key, value in encoded.inputs.items()}
    return inputs, torch.tensor(starts), torch.tensor(ends)  # type: ignore[return-value]


def dev_margins(
    model: Any,
    tokenizer: Any,
    dev: list[QA],
    settings: ReaderTraining,
    distractors: list[list[str]] | None = None,
    select: str = "score",
) -> tuple[list[float], list[float], list[bool]]:
    """Read every dev example whole (all windows) and decode: per example its margin (``null - best``), the F1
    of its best span (0 for a no-answer example) and whether it is answerable. ``distractors``: per example,
    more passages read beside its own (as a reader reads several sources), decoded by ``select``."""
    margins, f1s, answerable = [], [], []
    for number, qa in enumerate(dev):
        passages = [qa.context, *(distractors[number] if distractors else [])]
        windows = score_windows(
            model, encode_windows(tokenizer, qa.question, passages, settings.max_length, settings.stride)
        )
        choice = decode(windows, settings.max_answer_tokens, select)
        text = passages[choice.passage][choice.start : choice.end] if choice.passage is not None else ""
        margins.append(choice.margin)
        f1s.append(answer_f1(text, list(qa.answers)) if qa.answer is not None else 0.0)
        answerable.append(qa.answer is not None)
    return margins, f1s, answerable


def threshold_figures(
    margins: list[float], f1s: list[float], answerable: list[bool], balanced: bool = False
) -> dict[str, float]:
    """The calibrated threshold (``span_decode.best_threshold``) and what it gives on these examples."""
    threshold, f1 = best_threshold(margins, f1s, answerable, balanced)
    has = [f for f, a in zip(f1s, answerable) if a]
    answered = [m <= threshold for m in margins]
    no = [ans for ans, a in zip(answered, answerable) if not a]
    return {
        "f1": round(f1, 4),
        "threshold": round(threshold, 4),
        "hasans_f1_answering_all": round(sum(has) / max(1, len(has)), 4),
        "hasans_f1": round(sum(f for f, a, ans in zip(f1s, answerable, answered) if a and ans) / max(1, len(has)), 4),
        "noans_declined": round(sum(1 for ans in no if not ans) / max(1, len(no)), 4),
    }


def dev_figures(model: Any, tokenizer: Any, dev: list[QA], settings: ReaderTraining) -> dict[str, float]:
    """Read the dev slice, calibrate the threshold: F1 and the threshold."""
    return threshold_figures(*dev_margins(model, tokenizer, dev, settings))


def train_reader(
    data_path: str | Path,
    name: str,
    settings: ReaderTraining = ReaderTraining(),
    log: Log = lambda message: None,
    progress: bool = True,
) -> dict[str, Any]:
    """Train a span reader on ``data_path`` and save it as ``trained:NAME``; its card."""
    import torch

    started, cpu_started = time.perf_counter(), time.process_time()
    settings.check()
    torch.set_num_threads(settings.threads)
    train, dev_examples, counts = training_examples(data_path, settings, log)
    seed_all(settings.seed)
    model, tokenizer, _ = load_qa_model(settings.base, "base model")
    run = TrainingRun("reader", name, settings, model, log, started, figure="f1")
    order = run.plan(len(train), settings.batch_size)
    run.resume()
    run.state["cpu_before"] = run.state.get("cpu_now", 0.0)  # a resumed run counts its earlier CPU time
    latest: dict[str, float] = {}

    def save_best(best: Path) -> None:
        best.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(best)
        tokenizer.save_pretrained(best)
        stored = {
            "threshold": latest.get("threshold", 0.0),
            "max_length": settings.max_length,
            "stride": settings.stride,
            "max_answer_tokens": settings.max_answer_tokens,
            "dev": dict(latest),
        }
        (best / SETTINGS_FILE).write_text(json.dumps(stored, indent=2) + "\n", encoding="utf-8")

    def dev() -> float:
        figures = dev_figures(model, tokenizer, dev_examples, settings)
        latest.clear()
        # Wall and CPU seconds beside the curve: on shared cores the wall clock alone says little.
        cpu = time.process_time() - cpu_started + run.state.get("cpu_before", 0.0)
        seen = run.state["step"] * settings.batch_size
        latest.update(figures, examples_seen=seen, seconds=round(run.seconds(), 1), cpu_seconds=round(cpu, 1))
        run.state["cpu_now"] = latest["cpu_seconds"]
        run.state.setdefault("curve", []).append(dict(latest))
        log(f"dev after {latest['examples_seen']} examples: {figures}")
        return figures["f1"]

    if run.fresh:
        untrained = dev()
        run.begin(untrained, save_best)

    def step_loss(step: int) -> Any:
        picks = [train[order[(step * settings.batch_size + j) % len(order)]] for j in range(settings.batch_size)]
        inputs, starts, ends = targets(tokenizer, picks, settings, rng_for(settings.seed, step))
        return model(**inputs, start_positions=starts, end_positions=ends).loss

    run.train(step_loss, dev, save_best, progress)
    path = Path(data_path)
    stored = json.loads((run.partial / "best" / SETTINGS_FILE).read_text(encoding="utf-8"))
    earlier = _base_rounds(settings.base)
    return run.publish(
        ReaderData(path.name, path, sha256_file(path)),
        counts,
        "mean F1 over the dev slice's answerable and no-answer examples at the calibrated threshold",
        {"best_figures": stored["dev"], "curve": run.state.get("curve", [])},
        no_answer=settings.no_answer,
        dev_no_answer=settings.dev_no_answer,
        no_answer_threshold=stored["threshold"],
        initialised_from=earlier["id"],
        examples_seen_before=earlier["seen"],
        examples_seen_total=earlier["seen"] + int(stored["dev"].get("examples_seen", 0)),
    )


def _base_rounds(base: str) -> dict[str, Any]:
    """What a second round starts from: the base reader's card id and the examples it had seen in all
    (its best step's, over every earlier round); a plain encoder: its name and 0."""
    from ragline.train.models import TRAINED_PREFIX, read_card, trained_path

    if not base.startswith(TRAINED_PREFIX):
        return {"id": base, "seen": 0}
    card = read_card(trained_path(base[len(TRAINED_PREFIX) :]))
    seen = card.get("examples_seen_total")
    if seen is None:
        seen = card.get("dev", {}).get("best_figures", {}).get("examples_seen", 0)
    return {"id": card.get("id", base), "seen": int(seen)}
