"""Questions that need no retrieval: arithmetic, general knowledge and definitions, for every built-in world.

Self-RAG's first decision (Asai et al., 2023) is whether to retrieve at all, and a router's cheapest route
is none: both are measured on questions a model can answer from what it knows, asked of a corpus that
does not hold the answer. The generated worlds hold none (every question of theirs needs its documents),
so this module adds them as a separate, versioned set: the worlds' own documents and questions stay
byte-identical (their fingerprints do not move), and a caller asks for these next to them.

Each question has no gold documents (an answer needs no source) and is not expected to abstain. The
general-knowledge table is split in two halves, one for training worlds and one for evaluation worlds, so
no question of an evaluation world is seen in training; arithmetic operands are drawn from the world's
seed. ``CLOSED_BOOK_VERSION`` changes whenever the questions of a seed change.
"""

from __future__ import annotations

import random

from ragline.corpora.base import Question

CLOSED_BOOK_VERSION = 1
CLOSED_BOOK = "closed-book"  # the question type

# (question, answer, aliases): facts a general-purpose model is taught, none about any generated world.
KNOWLEDGE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("What is the capital of France?", "Paris", ()),
    ("What is the capital of Japan?", "Tokyo", ()),
    ("What is the capital of Italy?", "Rome", ()),
    ("What is the capital of Egypt?", "Cairo", ()),
    ("What is the capital of Germany?", "Berlin", ()),
    ("What is the capital of Spain?", "Madrid", ()),
    ("What is the chemical symbol for gold?", "Au", ()),
    ("What is the chemical symbol for iron?", "Fe", ()),
    ("What is the chemical symbol for sodium?", "Na", ()),
    ("What is the chemical symbol for silver?", "Ag", ()),
    ("How many days are there in a week?", "7", ("seven",)),
    ("How many sides does a hexagon have?", "6", ("six",)),
    ("How many legs does a spider have?", "8", ("eight",)),
    ("How many minutes are there in an hour?", "60", ("sixty",)),
    ("How many months are there in a year?", "12", ("twelve",)),
    ("How many hours are there in a day?", "24", ("twenty-four",)),
    ("At how many degrees Celsius does water boil at sea level?", "100", ("one hundred",)),
    ("At how many degrees Celsius does water freeze?", "0", ("zero",)),
    ("Which planet is closest to the Sun?", "Mercury", ()),
    ("What is the largest planet in the Solar System?", "Jupiter", ()),
    ("Who wrote Romeo and Juliet?", "William Shakespeare", ("Shakespeare",)),
    ("What gas do plants take in from the air for photosynthesis?", "carbon dioxide", ("CO2",)),
    ("What is the opposite of the word hot?", "cold", ()),
    ("What do you call a word that means the same as another word?", "synonym", ("a synonym",)),
)
OPERATIONS: tuple[tuple[str, str], ...] = (("plus", "+"), ("minus", "-"), ("times", "*"))
ARITHMETIC_PER_WORLD = 4
KNOWLEDGE_PER_WORLD = 8


def closed_book_questions(seed: int, evaluation: bool) -> list[Question]:
    """The closed-book questions of the world of ``seed``: arithmetic drawn from the seed, general
    knowledge from the table's half for ``evaluation`` (odd rows) or training (even rows) worlds."""
    rng = random.Random(f"closed-book:{CLOSED_BOOK_VERSION}:{seed}")
    half = [row for i, row in enumerate(KNOWLEDGE) if i % 2 == (1 if evaluation else 0)]
    questions: list[Question] = []
    for text, answer, aliases in rng.sample(half, min(KNOWLEDGE_PER_WORLD, len(half))):
        questions.append(Question(f"closed-book-{len(questions) + 1:03d}", text, CLOSED_BOOK, answer, list(aliases)))
    for _ in range(ARITHMETIC_PER_WORLD):
        word, symbol = rng.choice(OPERATIONS)
        a, b = rng.randint(12, 99), rng.randint(2, 11 if symbol == "*" else 60)
        value = a + b if symbol == "+" else a - b if symbol == "-" else a * b
        questions.append(
            Question(f"closed-book-{len(questions) + 1:03d}", f"What is {a} {word} {b}?", CLOSED_BOOK, str(value))
        )
    return questions


def orrin_closed_book(seed: int) -> list[Question]:
    """The closed-book questions asked of the Orrin world of ``seed`` (its evaluation world is ``DEFAULT_SEED``)."""
    from ragline.corpora.orrin.world import DEFAULT_SEED

    return closed_book_questions(seed, evaluation=seed == DEFAULT_SEED)


def countries_closed_book(seed: int) -> list[Question]:
    """The closed-book questions asked of the countries world of ``seed`` (evaluation: its ``DEFAULT_SEED``)."""
    from ragline.corpora.countries import DEFAULT_SEED

    return closed_book_questions(seed + 1_000_003, evaluation=seed == DEFAULT_SEED)
