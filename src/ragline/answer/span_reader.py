"""Reader ``span``: a trained extractive reader (start/end heads over an encoder, a calibrated "no answer").

``span:model=trained:NAME`` loads a model trained by ``ragline train reader`` (``ragline.train.reader``):
an encoder (the packaged MiniLM fine-tuned on SQuAD-style data) with a start and an end logit per word
piece. Each of the top ``k`` sources is read in windows of ``max_length`` word pieces overlapping by
``stride``; the best span over every window and source is the answer, cited to the source it came from,
unless the ``[CLS]`` "no answer" score beats it by more than the threshold calibrated on the trainer's dev
slice (``ragline.answer.span_decode``). The span is a substring of the cited source.

A yes/no question ("Is ...", "Were both ...") has no span to point at: SQuAD has none, and ragline trains
on nothing else. The general rule here: a question opened by an auxiliary verb without an alternative
(" or ") is polar; it is answered "yes" when the reader finds an answerable span in the sources (the
sources speak to it) and declined otherwise (``yes_no="yes"``; ``"off"`` reads it as any other question).

A question that asks for a value alone (how much, how many, when, a limit or an amount) is declined when the
best span holds no value of that kind (``answer_type="check"``, ``ragline.answer.questions.fits_asked_type``):
the network has no notion of answer types and otherwise returns a name for "what is the pay band". The citation's
``supported`` is the support check's verdict on the span's sentence (``ragline.answer.support``), as for the rule
reader.

Windows are compared by their best span's raw score (``select="score"``) or by how far it beats the window's own
no-answer score (``"margin"``; ``ragline.answer.span_decode`` says why).

A "which ..., A or B?" question names its answer's candidates (``ragline.answer.questions.offered_options``): the
reader answers with the option whose occurrence in the sources the model scores highest as a span
(``options="choose"``; ``"off"``: any span), when it would answer at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragline.answer.context import Context
from ragline.answer.questions import fits_asked_type, is_polar, offered_options
from ragline.answer.span_decode import SELECTIONS, Window, decode, option_best
from ragline.answer.support import answers_question
from ragline.errors import ConfigError, ModelError
from ragline.types import Answer, Citation

DEFAULT_MAX_LENGTH = 256
DEFAULT_STRIDE = 64
DEFAULT_MAX_TOKENS = 30
SETTINGS_FILE = "span.json"  # what the trainer calibrated: threshold, window settings


@dataclass(slots=True)
class Encoded:
    """The windows of one question over some passages: the model's input and where each piece lies."""

    inputs: dict[str, Any]
    passages: list[int]  # per window, the passage it reads
    offsets: list[list[tuple[int, int] | None]]  # per window, per piece: chars in its passage, None outside


def encode_windows(tokenizer: Any, question: str, passages: Sequence[str], max_length: int, stride: int) -> Encoded:
    """``[CLS] question [SEP] window [SEP]`` for every window of every passage (a fast tokenizer's overflow)."""
    return encode_pairs(tokenizer, [question] * len(passages), passages, max_length, stride)


def encode_pairs(
    tokenizer: Any, questions: Sequence[str], passages: Sequence[str], max_length: int, stride: int
) -> Encoded:
    """The windows of each (question, passage) pair; ``Encoded.passages`` numbers the pair of each window."""
    if not passages:
        return Encoded({}, [], [])
    batch = tokenizer(
        list(questions),
        list(passages),
        truncation="only_second",
        max_length=max_length,
        stride=stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        padding="longest",
        return_tensors="pt",
    )
    mapping = batch.pop("overflow_to_sample_mapping").tolist()
    offsets_all = batch.pop("offset_mapping").tolist()
    offsets: list[list[tuple[int, int] | None]] = []
    for w in range(len(mapping)):
        ids = batch.sequence_ids(w)
        offsets.append([tuple(o) if s == 1 else None for o, s in zip(offsets_all[w], ids)])  # type: ignore[misc]
    return Encoded(dict(batch), mapping, offsets)


def score_windows(model: Any, encoded: Encoded, batch_size: int = 16) -> list[Window]:
    """The model's start/end logits for every window (inference mode)."""
    import torch

    windows: list[Window] = []
    if not encoded.passages:
        return windows
    model.eval()
    n = len(encoded.passages)
    with torch.inference_mode():
        for first in range(0, n, batch_size):
            part = {key: value[first : first + batch_size] for key, value in encoded.inputs.items()}
            out = model(**part)
            starts, ends = out.start_logits.float().numpy(), out.end_logits.float().numpy()
            for i in range(starts.shape[0]):
                w = first + i
                windows.append(Window(encoded.passages[w], starts[i], ends[i], encoded.offsets[w]))
    return windows


def load_qa_model(model: str, what: str = "span reader model") -> tuple[Any, Any, Path]:
    """(network with start/end heads, fast tokenizer, folder) of ``model``: ``trained:NAME``, a folder or a hub id.

    A plain encoder (the packaged MiniLM) gets a new, untrained head: what the trainer starts from.
    """
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    from ragline.train.models import resolve_model

    path = resolve_model(model, "reader")
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        network = AutoModelForQuestionAnswering.from_pretrained(path)
    except (OSError, ValueError) as error:
        raise ModelError(f"{what} {model!r} ({path}) could not be loaded: {error}") from error
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"{what} {model!r}: a span reader needs a fast tokenizer (character offsets of pieces)")
    return network, tokenizer, Path(path)


def load_span_model(model: str) -> tuple[Any, Any, dict[str, Any]]:
    """(model, tokenizer, calibrated settings) of a trained span reader (``span.json``: its threshold...)."""
    import json

    network, tokenizer, path = load_qa_model(model)
    settings_path = path / SETTINGS_FILE
    settings = json.loads(settings_path.read_text(encoding="utf-8")) if settings_path.is_file() else {}
    return network, tokenizer, settings


_LOADED: dict[str, tuple[Any, Any, dict[str, Any]]] = {}


class SpanReader:
    """Reads the top ``top_k`` sources with a trained span model; see the module doc.

    ``threshold``, ``max_length``, ``stride`` and ``max_answer_tokens`` default (``None``) to what the trainer
    stored with the model (``span.json``: the threshold calibrated on its dev slice). The model is loaded at the
    first question, as the other model-backed components are.
    """

    name = "span"

    def __init__(
        self,
        model: str = "trained:squad",
        top_k: int = 5,
        threshold: float | None = None,
        max_length: int | None = None,
        stride: int | None = None,
        max_answer_tokens: int | None = None,
        yes_no: str = "yes",
        answer_type: str = "check",
        options: str = "choose",
        select: str = "score",
    ) -> None:
        if select not in SELECTIONS:
            raise ConfigError(
                f"span reader select={select!r}: 'score' (the highest span over all windows) or 'margin' (the "
                "window whose span beats its own no-answer score by the most)"
            )
        if options not in ("choose", "off"):
            raise ConfigError(f"span reader options={options!r}: 'choose' (A or B, as the question offers) or 'off'")
        if yes_no not in ("yes", "off"):
            raise ConfigError(f"span reader yes_no={yes_no!r}: 'yes' (the polar-question rule) or 'off'")
        if answer_type not in ("check", "off"):
            raise ConfigError(
                f"span reader answer_type={answer_type!r}: 'check' (decline a span of another type) or 'off'"
            )
        if top_k < 1:
            raise ConfigError(f"span reader top_k={top_k}: at least 1")
        if max_length is not None and stride is not None and stride >= max_length // 2:
            raise ConfigError(f"span reader stride {stride} must be under half of max_length {max_length}")
        self.model, self.top_k, self.yes_no, self.answer_type = model, top_k, yes_no, answer_type
        self.options, self.select = options, select
        self.given = {
            "threshold": threshold,
            "max_length": max_length,
            "stride": stride,
            "max_answer_tokens": max_answer_tokens,
        }

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "top_k": self.top_k,
            **self.given,
            "yes_no": self.yes_no,
            "answer_type": self.answer_type,
            "options": self.options,
            "select": self.select,
        }

    def settings(self) -> tuple[Any, Any, dict[str, Any]]:
        """(network, tokenizer, effective settings): the given ones, else the model's stored ones."""
        if self.model not in _LOADED:
            _LOADED[self.model] = load_span_model(self.model)
        network, tokenizer, stored = _LOADED[self.model]
        defaults = {
            "threshold": 0.0,
            "max_length": DEFAULT_MAX_LENGTH,
            "stride": DEFAULT_STRIDE,
            "max_answer_tokens": DEFAULT_MAX_TOKENS,
        }
        chosen = {k: v if v is not None else stored.get(k, defaults[k]) for k, v in self.given.items()}
        if chosen["stride"] >= chosen["max_length"] // 2:
            raise ConfigError(
                f"span reader stride {chosen['stride']} must be under half of max_length {chosen['max_length']}"
            )
        return network, tokenizer, chosen

    def read(self, question: str, context: Context) -> Answer:
        network, tokenizer, chosen = self.settings()
        sources = list(context.sources[: self.top_k])
        passages = [source.text for source in sources]
        encoded = encode_windows(tokenizer, question, passages, int(chosen["max_length"]), int(chosen["stride"]))
        windows = score_windows(network, encoded)
        choice = decode(windows, int(chosen["max_answer_tokens"]), self.select)
        threshold = float(chosen["threshold"])
        details: dict[str, Any] = {"threshold": threshold, "score": choice.score, "null": choice.null}
        if choice.passage is None or choice.margin > threshold:
            details["reason"] = "no answer: the null score beats the best span by more than the threshold"
            if choice.passage is not None:
                details["candidate"] = passages[choice.passage][choice.start : choice.end]
            return Answer("", True, [], self.name, details)
        offered = offered_options(question) if self.options == "choose" else None
        option = option_best(windows, passages, offered, choice.null) if offered else None
        if option is not None:  # "which, A or B?": the answer is one of them, the one the model scores higher
            details.update(options=list(offered or ()), free_span=passages[choice.passage][choice.start : choice.end])
            choice = option
        source = sources[choice.passage]  # type: ignore[index]
        span = source.text[choice.start : choice.end]
        hit = source.hit
        details.update(span=span, start=choice.start, end=choice.end)
        polar = self.yes_no == "yes" and is_polar(question)
        if self.answer_type == "check" and not polar and not fits_asked_type(question, span):
            details.update(reason="the best span holds no value of the kind the question asks for", candidate=span)
            return Answer("", True, [], self.name, details)
        title = f"{hit.title} {hit.metadata.get('section', '')}".strip()
        supported = answers_question(question, span, source.text, title, at=choice.start)
        citation = Citation(source.n, source.doc_id, hit.doc_id, hit.title, hit.text, supported)
        if polar:
            details["polar"] = "an answerable span was found for a yes/no question: answered yes"
            return Answer("yes", False, [citation], self.name, details)
        return Answer(span, False, [citation], self.name, details)
