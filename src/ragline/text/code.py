"""Lines of code in a text: what a how-to question is answered by ("Scan a file stored in a Zip archive:" then
``mraptor file.zip -z infected``).

A line of code is a line of a fenced block, a line that is one `code span` alone, or a line set off by four
spaces of indentation or a shell prompt, short and not read as prose (no capital first, no full stop or colon
last: a chunk can start inside a fence). The sentence before it introduces it: the extractive reader reads the
command under that sentence, as a table cell under its column's name.
"""

from __future__ import annotations

import re

_PROMPT = re.compile(r"[$#%]\s+(?=\S)")  # a shell prompt before a command: "$ make check", "# chromium --no-sandbox"
CODE_SPAN = re.compile(r"`([^`\n]+)`")  # one `code span` on a line; its group is the code
MAX_COMMAND_WORDS = 12


def code_lines(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """The lines of code among the sentences ``spans`` of ``text`` (``ragline.answer.spans.sentences``):
    ``(index, start, end)`` for each, the index of its first sentence and where the command lies in ``text``,
    without indentation, prompt or backticks; consecutive lines that fit in ``MAX_COMMAND_WORDS`` together are one
    command."""
    blocks = _fenced_blocks(text)
    lines: list[tuple[int, int, int]] = []
    for i, (start, end) in enumerate(spans):
        body = text[start:end]
        if "\n" in body or len(body.split()) > MAX_COMMAND_WORDS or body[0].isupper() or body.endswith((".", ":")):
            continue
        indent = text[text.rfind("\n", 0, start) + 1 : start]
        prompt = _PROMPT.match(body)
        if CODE_SPAN.fullmatch(body):
            lines.append((i, start + 1, end - 1))
        elif (
            prompt or any(a <= start < b for a, b in blocks) or (not indent.strip() and len(indent.expandtabs(4)) >= 4)
        ):
            lines.append((i, start + (prompt.end() if prompt else 0), end))
    merged: list[tuple[int, int, int]] = []
    previous = -2  # the sentence index of the last line taken
    for i, start, end in lines:
        if merged and previous == i - 1 and len(text[merged[-1][1] : end].split()) <= MAX_COMMAND_WORDS:
            merged[-1] = (merged[-1][0], merged[-1][1], end)
        else:
            merged.append((i, start, end))
        previous = i
    return merged


def _fenced_blocks(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each fenced code block. A fence with an info string ("```text") opens a block; a bare
    one closes the open block, or, first in a text that starts inside a block (a chunk), closes that one."""
    blocks: list[tuple[int, int]] = []
    opened: int | None = None
    for match in re.finditer(r"(?m)^[ \t]*(?:`{3,}|~{3,})([^\n`]*)", text):
        if opened is None and (match.group(1).strip() or blocks or text[: match.start()].strip() == ""):
            opened = match.start()
        elif opened is None:
            blocks.append((0, match.start()))
        else:
            blocks.append((opened, match.start()))
            opened = None
    return blocks
