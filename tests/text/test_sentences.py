"""The project's one sentence splitter (ragline.text.sentences): where a sentence ends, and where it does not."""

from __future__ import annotations

import pytest

from ragline.text.sentences import sentence_texts, split_sentences


def _split(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        # Decimals, money, percentages and version numbers hold no sentence end ("$60.50", "3.2.2").
        (
            "Receipts are needed above $60.50 a day. The cap rose 3.5% in 2025.",
            ["Receipts are needed above $60.50 a day.", "The cap rose 3.5% in 2025."],
        ),
        (
            "Scale-out uses Milvus Lite 3.2.2 and ragline v2.3.1 today. It has no stemming.",
            ["Scale-out uses Milvus Lite 3.2.2 and ragline v2.3.1 today.", "It has no stemming."],
        ),
        (
            "The last release is Milvus Lite 3.2.2. Upgrade with pip.",
            ["The last release is Milvus Lite 3.2.2.", "Upgrade with pip."],
        ),
        # Abbreviations: titles, dotted letters, and the ones that stand before a number.
        (
            "Dr. Smith met the U.S. team at 3.5 p.m. today, e.g. at the depot. See Fig. 3 and No. 5. Done.",
            ["Dr. Smith met the U.S. team at 3.5 p.m. today, e.g. at the depot.", "See Fig. 3 and No. 5.", "Done."],
        ),
        ("The answer is no. That settles it.", ["The answer is no.", "That settles it."]),
        # A single capital is an initial before a name, not before a word that starts sentences.
        (
            "Ask J. Smith. It ignores the umask when creating B. Also, it works.",
            ["Ask J. Smith.", "It ignores the umask when creating B.", "Also, it works."],
        ),
        # A sentence that starts in lower case, after a real word or a code span.
        (
            "It is created (`milvus-bm25`). ragline's analyzer stems.",
            ["It is created (`milvus-bm25`).", "ragline's analyzer stems."],
        ),
        # Code spans: nothing inside ends a sentence; a TeX-style quote (`gcc') is no code span.
        ("Run `make demo. Then wait` first. Next step.", ["Run `make demo. Then wait` first.", "Next step."]),
        (
            "Bash builds with `gcc' by default.  If you want `cc' instead, type it.",
            ["Bash builds with `gcc' by default.", "If you want `cc' instead, type it."],
        ),
        # Chinese punctuation needs no space after it; a closing bracket stays with its sentence.
        ("它在二〇二四年发布。效果如何？很好！（完）", ["它在二〇二四年发布。", "效果如何？", "很好！", "（完）"]),
        ("数据里的规律会变成漏洞。）下一句。", ["数据里的规律会变成漏洞。）", "下一句。"]),
    ],
)
def test_sentence_ends(text: str, sentences: list[str]) -> None:
    assert _split(text) == sentences


def test_markdown_blocks_headings_items_fences_and_fields() -> None:
    """Headings and table rows stand alone, items, quotes and record fields start anew, code lines stand alone."""
    text = (
        "# Install\n"
        "A hard-wrapped sentence\ncontinues here: it has\nthree lines.\n"
        "- first item. Second sentence of it.\n"
        "1. numbered item\n"
        "> a quote\n"
        "| a | b. C |\n\n"
        "```python\n# not a heading. Not a sentence end\nx = 1.5\n```\n"
        "Maintainer: Oksana Hall\nLicense: MIT\n"
    )
    assert _split(text) == [
        "# Install",
        "A hard-wrapped sentence\ncontinues here: it has\nthree lines.",
        "- first item.",
        "Second sentence of it.",
        "1. numbered item",
        "> a quote",
        "| a | b. C |",
        "```python",
        "# not a heading. Not a sentence end",
        "x = 1.5",
        "```",
        "Maintainer: Oksana Hall",
        "License: MIT",
    ]


def test_spans_are_exact_stripped_and_bounded() -> None:
    text = "  Skip this. Inside one.  Inside two!  Outside."
    start, end = text.index("Inside one"), text.index("Outside")
    spans = split_sentences(text, start, end)
    assert [text[a:b] for a, b in spans] == ["Inside one.", "Inside two!"]
    assert sentence_texts("One\n  wrapped   line. Two.") == ["One wrapped line.", "Two."]
