"""A tiny SQuAD-layout file whose answer a span reader learns in a few steps (reader tests and smoke runs)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

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
