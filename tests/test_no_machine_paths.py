"""No tracked file names a folder of one machine (the data folder is ``$RAGLINE_BENCH`` or ``../shared/bench``).

JSON results and TREC runs are records of a run (their provenance may hold the paths it ran with) and are
not scanned. The pattern is assembled from parts so that this file does not match itself.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SLASH = "/"
MACHINE_PATH = re.compile(
    "|".join(
        [
            re.escape(SLASH + "work" + SLASH),
            re.escape(SLASH + "home" + SLASH) + r"[A-Za-z0-9_.-]+" + SLASH,
            re.escape(SLASH + "Users" + SLASH),
        ]
    )
)
RECORDS = (".json", ".jsonl", ".trec", ".png", ".log")


def _tracked() -> list[str]:
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout")
    return [name for name in done.stdout.decode().split("\0") if name]


def machine_paths(text: str) -> list[str]:
    """The absolute machine paths in ``text``."""
    return [m.group(0) for m in MACHINE_PATH.finditer(text)]


def test_the_pattern_finds_machine_paths_and_not_relative_ones():
    """Planted fault: a pattern that misses any of the three roots fails here."""
    assert machine_paths("data in " + SLASH + "work" + SLASH + "shared/bench") == [SLASH + "work" + SLASH]
    assert machine_paths("cd " + SLASH + "home" + SLASH + "ada/ragline") == [SLASH + "home" + SLASH + "ada/"]
    assert machine_paths(SLASH + "Users" + SLASH + "ada/x") == [SLASH + "Users" + SLASH]
    assert machine_paths("../shared/bench and ~/.cache/ragline and $RAGLINE_BENCH/scifact") == []


def test_no_tracked_file_names_a_machine_folder():
    """Planted fault: a benchmark's dataset default written as the absolute path of one machine's data folder."""
    found = []
    for name in _tracked():
        if name.endswith(RECORDS):
            continue
        path = ROOT / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if machine_paths(line):
                found.append(f"{name}:{number}: {line.strip()[:120]}")
    assert not found, "\n".join(found)
