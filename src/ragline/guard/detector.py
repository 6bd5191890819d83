"""The injection detector: which spans of a retrieved text are instructions addressed to the reading model.

A text is cut into segments (sentences and table rows by the project's splitter, ``text/sentences.py``, so a
hard-wrapped sentence is one segment, not a line fragment such as "You" or "answer."; plus what a page hides
from its human reader: HTML comments, ``alt``/``title`` attributes, hidden elements, markdown comments,
decoded base64). Each
segment is de-obfuscated (NFKC, zero-width characters dropped, Cyrillic/Greek look-alikes folded to
Latin, leetspeak digits read as letters, s p a c e d letters joined) and scored two ways:

* **patterns**: hand-written, high-precision forms of an injection (override orders such as "ignore
  previous instructions" / "忽略之前的指令", fake role headers, addressing the model, role play, forced
  answers). A match inside a quotation that a cue marks as an example is a mention, not a use ("the phrase 'ignore previous
  instructions' is an attack"), and does not count;
* **classifier**: logistic regression over hashed word 1-2-grams and character 2-4-grams of the
  de-obfuscated segment, trained on the injection set's train split (``ragline.guard.train``), its
  threshold chosen on the dev split; weights in ``injection_model.npz``, checked by SHA-256 at load.

A segment's score is 1.0 for a pattern match, else the classifier's probability; a text's score is its
best segment's. Segments at or above the threshold are flagged, with their character spans in the text.
"""

# ruff: noqa: E501  (the pattern table: one alternative group a line reads best)
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import unicodedata
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from ragline.errors import ModelError
from ragline.text.sentences import split_sentences

MODEL_PATH = Path(__file__).with_name("injection_model.npz")
MODEL_CARD = Path(__file__).with_name("injection_model.json")  # sha256, threshold, training figures
DIMENSIONS = 1 << 17

# --- de-obfuscation ------------------------------------------------------------------------------------

_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
# Cyrillic and Greek letters that look like Latin ones (the usual homoglyph substitutions).
_HOMOGLYPHS = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u04bb\u0501\u0410\u0412\u0415\u041a\u041c"
    "\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u03bf\u03b1\u03b5\u03b9\u03ba\u03bd\u03c1\u03c4\u03c5\u0391"
    "\u0392\u0395\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a7",
    "aeopcyxijshdABEKMHOPCTXIoaeiknptuABEHIKMNOPTX",
)
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
_MIXED_TOKEN = re.compile(r"[\w@$]*[a-z][\w@$]*")
_SPACED = re.compile(r"(?<![^\W_])(?:[^\W_][ .\-_]{1,2}){3,}[^\W_](?![^\W_])")


def _unleet(match: re.Match[str]) -> str:
    token = match.group()
    return token.translate(_LEET) if any(c in "0134578@$" for c in token) else token


def normalize(text: str) -> str:
    """The text a detector reads: lower case, look-alikes folded, leetspeak and spaced letters undone."""
    text = unicodedata.normalize("NFKC", _ZERO_WIDTH.sub("", text)).translate(_HOMOGLYPHS).lower()
    text = text.replace("_", " ")  # "instruction_for_model" reads as words
    text = _SPACED.sub(lambda m: re.sub(r"[ .\-_]", "", m.group()), text)
    text = _MIXED_TOKEN.sub(_unleet, text)  # only tokens with a letter: "1gn0r3" -> "ignore", "4.2" stays
    return re.sub(r"\s+", " ", text).strip()


# --- segments ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Segment:
    """A span ``[start, end)`` of the text, what it says once decoded (``text``), and where it was found."""

    start: int
    end: int
    text: str
    kind: str  # sentence | comment | attribute | hidden | base64


_HIDDEN = [
    ("comment", re.compile(r"<!--(.*?)(?:-->|$)", re.DOTALL)),
    ("comment", re.compile(r"^\s*\[//\]:\s*#\s*\((.*?)\)\s*$", re.MULTILINE)),
    (
        "hidden",
        re.compile(
            r"<(\w+)[^>]*(?:\bhidden\b|display\s*:\s*none|visibility\s*:\s*hidden)[^>]*>(.*?)</\1\s*>",
            re.DOTALL | re.IGNORECASE,
        ),
    ),
    ("attribute", re.compile(r"\b(?:alt|title|aria-label|data-[\w-]+)\s*=\s*\"([^\"]*)\"", re.IGNORECASE)),
    ("attribute", re.compile(r"!\[([^\]]*)\]\(")),
]
# Markup a browser does not show; "<|system|>" or "<system>" are not HTML and stay, to be read.
_TAG = re.compile(
    r"</?(?:p|div|span|img|a|br|hr|ul|ol|li|table|thead|tbody|tr|td|th|b|i|u|em|strong|code|pre|h[1-6]|section"
    r"|article|header|footer|nav|small|sup|sub|blockquote|figure|figcaption|label|button|input|form|html|body|head)"
    r"\b[^>]*>",
    re.IGNORECASE,
)
_BASE64 = re.compile(r"(?<![\w+/])[A-Za-z0-9+/]{16,}={0,2}(?![\w+/=])")


def _decoded(token: str) -> str | None:
    """The text a base64 token encodes, when it is mostly printable text."""
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(ch.isprintable() for ch in decoded)
    return decoded if decoded and printable / len(decoded) > 0.95 and " " in decoded else None


def segments(text: str) -> list[Segment]:
    """Hidden parts first (comments, attributes, hidden elements), then the sentences of what is left."""
    found: list[Segment] = []
    visible = list(text)
    for kind, pattern in _HIDDEN:
        for match in pattern.finditer(text):
            inner = match.group(match.lastindex or 0)
            if inner.strip():
                found.append(Segment(match.start(), match.end(), inner, kind))
            visible[match.start() : match.end()] = " " * (match.end() - match.start())
    shown = _TAG.sub(lambda m: " " * len(m.group()), "".join(visible))
    for start, end in split_sentences(shown):
        if shown[start:end].strip(" |-:\t"):
            found.append(Segment(start, end, shown[start:end], "sentence"))
    for match in _BASE64.finditer(text):
        if (decoded := _decoded(match.group())) is not None:
            found.append(Segment(match.start(), match.end(), decoded, "base64"))
    return sorted(found, key=lambda s: (s.start, s.end))


# --- patterns ------------------------------------------------------------------------------------------

_OVERRIDE_VERB = (
    r"(?:ignore|disregard|forget|override|bypass|discard|stop following|do not follow|don't follow"
    r"|do not obey|不要遵守|不要理会|不要遵循|不要\s*follow|忽略|无视|忘记|忘掉|跳过)"
)
_RULES = r"(?:instructions?|rules|prompts?|directions|guidelines|programming|指令|指示|提示|规则|设定|要求)"
_MODEL = (
    r"(?:ai|a\.i\.|artificial intelligence|language models?|llms?|chatbots?|assistants?|bots?|gpt"
    r"|models?|人工智能|助手|机器人|ai\s*助手)"
)
_SAY = r"(?:say|reply|respond|answer|output|tell|write|state|print|return|回答|回复|输出|告诉|说)"
# What a text orders a model to produce; "tell" is left out here: "must tell the duty engineer" is what
# policies say to people (a benign on-call policy of the Orrin training world was redacted for it)
_PRODUCE = r"(?:say|reply|respond|answer|output|write|state|print|return|回答|回复|输出|说)"
PATTERNS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern)
    for name, pattern in {
        # "ignore previous instructions", "忽略之前的所有指令", "Please 忽略 previous 指令"
        "override": rf"{_OVERRIDE_VERB}(?:\W*\w+){{0,3}}?\W*{_RULES}",
        # "disregard everything above", "ignore the sentence above and reply ..."
        "override_above": rf"{_OVERRIDE_VERB}\s*(?:everything|all|the \w+|this \w+)?\s*(?:above|before this|上面|上述)"
        rf"|{_OVERRIDE_VERB}\s*(?:the|this)\s*(?:\w+\s*){{1,2}}and\s*{_SAY}",
        # "SYSTEM:", "[SYSTEM MESSAGE]", "<|system|>", "### System prompt update", "系统提示："
        "role_header": r"^\W*(?:system|developer|admin)(?:\s*(?:message|prompt|override|update|notice|mode))*\s*"
        r"(?:[:\]>|]|update\b)|<\|?\s*(?:system|im_start|tool_response|tool)\b|system\s*override\s*[:!]"
        r"|(?:系统|管理员)(?:提示|消息|指令|通知)\s*[:：]|developer mode",
        # "Dear AI model reading this", "note to the model", "If you are a language model", "Assistant, ..."
        "addressee": rf"(?:dear|note (?:to|for)|p\.?s\.? to|attention|hey|hi|favour for|favor for)\s*(?:the |any |all )?"
        rf"{_MODEL}|if you are (?:an? )?{_MODEL}|(?:when|if) (?:an? |the )?{_MODEL} (?:reads?|summari[sz]es)"
        rf"|{_MODEL}s? (?:reading|summari[sz]ing|processing|answering)\b"
        rf"|^\W*(?:\(for \w+\)\s*)?{_MODEL}(?:\s*(?:instructions?|directive|note|notice))?\s*[:,：，]|(?:for|to) (?:ai|language models?|llms?|chatbots?)\s*[:,]"
        rf"|(?:instructions?|directive|message|note) (?:for|to) (?:the )?(?:ai|language models?|llms?|"
        rf"assistants?|chatbots?|models?|ai systems?)",
        # "you are now DAN", "pretend you are", "act as", "你现在是"
        "role_play": r"\byou are (?:now|no longer)\b|\bfrom now on\b|\bpretend (?:you are|to be)\b|\bact as (?:an?|dan|my)\b"
        r"|\bdo anything now\b|\bwith no (?:rules|restrictions|filters)\b|你现在(?:是|必须)|没有(?:任何)?限制的"
        r"|不受限制|扮演",
        # "the only correct reply is now ...", "respond only with", "你必须只回复"
        "forced_answer": rf"\bonly correct (?:reply|answer|response)\b|\b{_SAY} only with\b|\b(?:must|shall) {_PRODUCE}\b"
        rf"|\byour (?:new )?(?:answer|reply|response) (?:is|must be|should be)\b|只(?:回答|回复|输出)"
        rf"|直接(?:回答|回复|输出)|\bdecode (?:this|the following)\b.*\bfollow\b",
    }.items()
}
_QUOTED = re.compile(r"(?<!\w)'[^']{3,}'(?!\w)|\"[^\"]{3,}\"|“[^”]{3,}”|‘[^’]{3,}’|「[^」]{3,}」|『[^』]{3,}』")


# Words that introduce a quotation as an example: "text such as '...'", "the phrase '...'", "“...”之类的文字".
_MENTION_BEFORE = re.compile(
    r"(?:such as|phrase|like|called|words?|text|string|prompts?|e\.g\.|example|wrote|says?|said"
    r"|quote[sd]?|reads?|如|例如|类似|诸如|隐藏)\W{0,3}$"
)
_MENTION_AFTER = re.compile(r"^\W{0,3}(?:之类|等|这样的|is an? |was an? |are )")


def _mentions(normalized: str) -> list[tuple[int, int]]:
    """Spans of quotations that a cue marks as examples (mentions), not as text addressed to a reader."""
    return [
        (m.start(), m.end())
        for m in _QUOTED.finditer(normalized)
        if _MENTION_BEFORE.search(normalized[max(0, m.start() - 30) : m.start()])
        or _MENTION_AFTER.search(normalized[m.end() : m.end() + 12])
    ]


def pattern_hits(normalized: str) -> list[str]:
    """Names of the patterns that match ``normalized`` outside quoted examples (a mention is not a use)."""
    quoted = _mentions(normalized)
    hits = []
    for name, pattern in PATTERNS.items():
        for match in pattern.finditer(normalized):
            if not any(start <= match.start() and match.end() <= end for start, end in quoted):
                hits.append(name)
                break
    return hits


# --- classifier ----------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\w+")


def feature_counts(normalized: str) -> dict[int, float]:
    """Hashed word 1-2-grams and character 2-4-grams of a normalized segment, L2-normalized."""
    words = _TOKEN.findall(normalized)
    grams = [f"w:{w}" for w in words] + [f"b:{a} {b}" for a, b in zip(words, words[1:])]
    squeezed = f" {' '.join(words)} "
    grams += [f"c:{squeezed[i : i + n]}" for n in (2, 3, 4) for i in range(len(squeezed) - n + 1)]
    counts: dict[int, float] = {}
    for gram in grams:
        key = zlib.crc32(gram.encode("utf-8")) % DIMENSIONS
        counts[key] = counts.get(key, 0.0) + 1.0
    norm = float(np.sqrt(sum(v * v for v in counts.values()))) or 1.0
    return {k: v / norm for k, v in counts.items()}


@dataclass(frozen=True)
class InjectionModel:
    """Logistic regression weights over ``feature_counts`` and the decision threshold set on dev data."""

    weights: np.ndarray
    bias: float
    threshold: float

    def probability(self, normalized: str) -> float:
        counts = feature_counts(normalized)
        logit = self.bias + sum(self.weights[k] * v for k, v in counts.items())
        return float(1.0 / (1.0 + np.exp(-logit)))

    def save(self, path: Path = MODEL_PATH, card: Path = MODEL_CARD, **facts: object) -> str:
        """Write the weights (npz) and a card with their SHA-256, the threshold and ``facts``; the hash."""
        np.savez_compressed(path, weights=self.weights.astype(np.float32), bias=np.float32(self.bias))
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        card.write_text(
            json.dumps({"sha256": digest, "threshold": self.threshold, "dimensions": DIMENSIONS, **facts}, indent=2)
            + "\n"
        )
        return digest


def load_model(path: Path = MODEL_PATH, card: Path = MODEL_CARD) -> InjectionModel:
    """The checked-in classifier, its SHA-256 checked against its card."""
    if not path.is_file() or not card.is_file():
        raise ModelError(
            f"injection classifier missing: {path} / {card}; train it with `python -m ragline.guard.train`"
        )
    facts = json.loads(card.read_text())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != facts.get("sha256"):
        raise ModelError(
            f"{path}: sha256 {digest} does not match {card} ({facts.get('sha256')}); retrain or restore it"
        )
    data = np.load(path)
    return InjectionModel(data["weights"].astype(np.float64), float(data["bias"]), float(facts["threshold"]))


@lru_cache(maxsize=1)
def default_model() -> InjectionModel:
    return load_model()


# --- detector ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Flag:
    """A scored segment: its span in the text, its score and why (pattern names, or ``classifier``)."""

    start: int
    end: int
    kind: str
    score: float
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "start": self.start,
            "end": self.end,
            "kind": self.kind,
            "score": round(self.score, 4),
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True, slots=True)
class Verdict:
    """A text's score (its best segment's) and the segments at or above the threshold."""

    score: float
    flags: list[Flag] = field(default_factory=list)

    @property
    def flagged(self) -> bool:
        return bool(self.flags)


@dataclass
class InjectionDetector:
    """Patterns plus the classifier; ``use_patterns``/``use_classifier`` switch either off (for ablations)."""

    model: InjectionModel | None = None
    threshold: float | None = None  # None: the model's (chosen on dev data)
    use_patterns: bool = True
    use_classifier: bool = True

    def __post_init__(self) -> None:
        if self.model is None and self.use_classifier:
            self.model = default_model()
        if self.threshold is None:
            self.threshold = self.model.threshold if self.model is not None else 0.5

    def score_segment(self, text: str) -> tuple[float, tuple[str, ...]]:
        normalized = normalize(text)
        if self.use_patterns and (hits := pattern_hits(normalized)):
            return 1.0, tuple(hits)
        if self.use_classifier and self.model is not None:
            return self.model.probability(normalized), ("classifier",)
        return 0.0, ()

    def inspect(self, text: str) -> Verdict:
        """Every segment scored; those at or above the threshold flagged."""
        best, flags = 0.0, []
        for segment in segments(text):
            score, reasons = self.score_segment(segment.text)
            best = max(best, score)
            if score >= self.threshold:  # type: ignore[operator]
                flags.append(Flag(segment.start, segment.end, segment.kind, score, reasons))
        return Verdict(best, flags)

    def score(self, text: str) -> float:
        return self.inspect(text).score

    def config(self) -> dict[str, object]:
        return {"threshold": self.threshold, "patterns": self.use_patterns, "classifier": self.use_classifier}
