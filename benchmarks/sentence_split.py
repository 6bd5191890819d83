"""Sentence splitters on hand-labelled real text: ragline's rules against pysbd and a plain regex.

``benchmarks/sentences/labelled.json`` holds passages copied verbatim from real documents (ragline's
README, docs and BENCHMARKS.md, Debian's ``/usr/share/doc`` files for bash, coreutils and e2fsprogs,
and the Chinese CS224N lecture notes), each with its sentences labelled by hand (conventions in
the file's ``about``). A splitter's output is compared with the labels by boundary: the place of each
sentence end, counted in non-space characters so that whitespace and stripping do not matter.

    PYTHONPATH=src .venv/bin/python benchmarks/sentence_split.py [--errors] [--candidate NAME=MODULE:FUNCTION]

Prints one JSON object: for the dev passages (the rules were refined against them), the held-out ones
(labelled after the rules were frozen) and all, per splitter, boundary precision / recall / F1, the share of
labelled sentences reproduced exactly, and the microseconds per sentence. ``--candidate`` adds a splitter (a function of
a text returning ``(start, end)`` spans, as ``ragline.text.sentences.split_sentences``), e.g. an older
version of ragline on the path.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

SAMPLE = Path(__file__).parent / "sentences" / "labelled.json"
_SPACE = re.compile(r"\s+")
_CJK = re.compile(r"[\u3400-\u9fff]")
# The splitter the agent's grader and the lost-in-the-middle probe used before ragline had one.
_SINGLE_BREAK = re.compile(r"(?<!\n)\n(?!\n)")
_NAIVE = re.compile(r"(?<=[.!?。！？])\s*|\n+")

Splitter = Callable[[str], list[str]]


def _spans_splitter(function: Callable[[str], list[tuple[int, int]]]) -> Splitter:
    return lambda text: [text[a:b] for a, b in function(text)]


def _ragline() -> Splitter:
    from ragline.text.sentences import split_sentences

    return _spans_splitter(split_sentences)


def _pysbd() -> Splitter | None:
    try:
        import pysbd
    except ImportError:
        return None
    english = pysbd.Segmenter(language="en", clean=False)
    chinese = pysbd.Segmenter(language="zh", clean=False)

    def split(text: str) -> list[str]:  # pysbd's best: its Chinese rules where the text is Chinese
        chinese_share = len(_CJK.findall(text)) / max(1, len(text))
        return (chinese if chinese_share > 0.3 else english).segment(text)

    return split


def _unwrapped(split: Splitter) -> Splitter:
    """``split`` on the text with single line breaks made spaces (blank lines kept): pysbd reads a line
    break as a sentence end, so hard-wrapped prose would cost it every line."""
    return lambda text: split(_SINGLE_BREAK.sub(" ", text))


def _naive(text: str) -> list[str]:
    return [s for s in _NAIVE.split(text) if s.strip()]


def _bare(text: str) -> str:
    return _SPACE.sub("", text)


def boundaries(sentences: list[str]) -> set[int]:
    """Sentence ends as offsets in the text without whitespace (the last one, the text's end, left out)."""
    ends, total = set(), 0
    for sentence in sentences:
        total += len(_bare(sentence))
        ends.add(total)
    ends.discard(total)
    return ends


def score(split: Splitter, passages: list[dict], errors: bool = False) -> dict:
    found = gold = right = exact = n_gold = 0
    mistakes = []
    started = time.perf_counter()
    predicted = [split(p["text"]) for p in passages]
    seconds = time.perf_counter() - started
    for passage, sentences in zip(passages, predicted, strict=True):
        if _bare("".join(sentences)) != _bare(passage["text"]):
            raise ValueError(f"{passage['source']}: the splitter dropped or changed characters")
        want, got = boundaries(passage["sentences"]), boundaries(sentences)
        found, gold, right = found + len(got), gold + len(want), right + len(want & got)
        normal = {" ".join(s.split()) for s in sentences}
        exact += sum(" ".join(s.split()) in normal for s in passage["sentences"])
        n_gold += len(passage["sentences"])
        if errors:
            mistakes += [(passage["source"], " ".join(s.split())) for s in sentences if " ".join(s.split())
                         not in {" ".join(g.split()) for g in passage["sentences"]}]  # fmt: skip
    precision, recall = right / found if found else 1.0, right / gold if gold else 1.0
    result = {
        "boundary_precision": round(precision, 3),
        "boundary_recall": round(recall, 3),
        "boundary_f1": round(2 * precision * recall / (precision + recall) if precision + recall else 0.0, 3),
        "sentences_exact": round(exact / n_gold, 3),
        "us_per_sentence": round(1e6 * seconds / n_gold, 1),
    }
    if errors:
        result["wrong_sentences"] = mistakes
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--errors", action="store_true", help="list each splitter's sentences that are not labelled ones")
    p.add_argument("--candidate", action="append", default=[], metavar="NAME=MODULE:FUNCTION")
    args = p.parse_args()
    data = json.loads(SAMPLE.read_text(encoding="utf-8"))
    passages = data["passages"]
    pysbd = _pysbd()
    splitters: dict[str, Splitter | None] = {
        "ragline": _ragline(),
        "pysbd": pysbd,
        "pysbd-unwrapped": _unwrapped(pysbd) if pysbd else None,
        "naive-regex": _naive,
    }
    for spec in args.candidate:
        name, _, target = spec.partition("=")
        module, _, function = target.partition(":")
        splitters[name] = _spans_splitter(getattr(importlib.import_module(module), function))
    parts = {"dev": [p for p in passages if p.get("split") == "dev"],
             "held-out": [p for p in passages if p.get("split") == "held-out"], "all": passages}  # fmt: skip
    results = {
        part: {
            "passages": len(chosen),
            "sentences": sum(len(p["sentences"]) for p in chosen),
            "splitters": {
                name: score(split, chosen, args.errors) if split else "not installed (pip install pysbd)"
                for name, split in splitters.items()
            },  # fmt: skip
        }
        for part, chosen in parts.items()
    }
    print(json.dumps(results, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
