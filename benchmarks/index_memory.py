"""Peak memory of ``ragline index`` on one large generated text file, against the file's size.

Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/index_memory.py                  # 6 and 60 MiB, both chunkers
    PYTHONPATH=src .venv/bin/python benchmarks/index_memory.py --sizes 20 --chunkers none

For each size (MiB) a deterministic English-like text file is written (pseudo-words over a Zipf-like
vocabulary, sentences with capitals and full stops, paragraphs separated by blank lines). For each
chunker the real CLI runs in a fresh subprocess::

    python -m ragline index FILE --index DIR --embedder none --chunker C --max-file-mb 1000

and its peak resident set size is read from ``os.wait4`` (``ru_maxrss`` of that one child). The same
command on a 1 KiB file of the same text gives the baseline (interpreter, imports, one tiny commit).
Reported per run: ``peak_mib`` (the total), ``baseline_mib``, ``increase_mib`` = peak - baseline, and
``ratio`` = increase / file size; ``ratio_total`` = peak / file size. Output: one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MIB = 1024 * 1024
CHUNKERS = ("none", "fixed:size=100,overlap=30")
_LETTERS = np.array(list("etaoinshrdlucmfwypvbgkjqxz"))


def pseudo_words(count: int, seed: int = 0) -> list[str]:
    """``count`` distinct lowercase pseudo-words, short ones first (frequent words are short)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(_LETTERS) + 1)
    weights /= weights.sum()
    words: dict[str, None] = {}
    while len(words) < count:
        length = int(min(2 + rng.geometric(0.25), 14))
        words.setdefault("".join(rng.choice(_LETTERS, size=length, p=weights)), None)
    return sorted(words, key=len)


def generate_text(size: int, seed: int = 0, vocab_size: int = 50_000) -> str:
    """About ``size`` bytes of English-like prose (ASCII), deterministic for a seed."""
    rng = np.random.default_rng(seed)
    vocab = np.array(pseudo_words(vocab_size, seed), dtype=object)
    weights = 1.0 / (np.arange(vocab_size) + 2.7)
    cdf = np.cumsum(weights) / weights.sum()
    paragraphs: list[str] = []
    written = 0
    while written < size:
        sentences = []
        for _ in range(int(rng.integers(2, 8))):
            ranks = np.minimum(np.searchsorted(cdf, rng.random(int(rng.integers(6, 30)))), vocab_size - 1)
            words = vocab[ranks].tolist()
            sentences.append(words[0].capitalize() + " " + " ".join(words[1:]) + ".")
        paragraph = " ".join(sentences)
        paragraphs.append(paragraph)
        written += len(paragraph) + 2
    return "\n\n".join(paragraphs)[:size]


def peak_rss_mib(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Peak RSS (MiB) and wall seconds of one run of ``command`` in a fresh child process."""
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = child.stderr.read() if child.stderr else b""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({child.returncode}):\n{stderr.decode(errors='replace')}")
    return usage.ru_maxrss / 1024, time.perf_counter() - started  # Linux reports kilobytes


def index_command(source: Path, index: Path, chunker: str) -> list[str]:
    return [sys.executable, "-m", "ragline", "index", str(source), "--index", str(index), "--embedder", "none",
            "--chunker", chunker, "--max-file-mb", "1000", "--output", "json"]  # fmt: skip


def measure(sizes_mib: list[float], chunkers: list[str], seed: int = 0) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    runs = []
    with tempfile.TemporaryDirectory(prefix="ragline-memory-") as tmp:
        root = Path(tmp)
        for size_mib in sizes_mib:
            size = int(size_mib * MIB)
            text = generate_text(size, seed)
            folder = root / f"text-{size_mib:g}"
            folder.mkdir()
            (folder / "big.txt").write_text(text, "utf-8")
            tiny = root / f"tiny-{size_mib:g}"
            tiny.mkdir()
            (tiny / "small.txt").write_text(text[:1024], "utf-8")
            del text
            for chunker in chunkers:
                name = chunker.replace(":", "_").replace(",", "_").replace("=", "")
                baseline, _ = peak_rss_mib(index_command(tiny, root / f"i-tiny-{size_mib:g}-{name}", chunker), env)
                peak, seconds = peak_rss_mib(index_command(folder, root / f"i-{size_mib:g}-{name}", chunker), env)
                file_mib = size / MIB
                runs.append(
                    {
                        "file_mib": round(file_mib, 2),
                        "chunker": chunker,
                        "peak_mib": round(peak, 1),
                        "baseline_mib": round(baseline, 1),
                        "increase_mib": round(peak - baseline, 1),
                        "ratio": round((peak - baseline) / file_mib, 2),
                        "ratio_total": round(peak / file_mib, 2),
                        "seconds": round(seconds, 1),
                    }
                )
                print(json.dumps(runs[-1]), file=sys.stderr)
    return {"benchmark": "index_memory", "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="6,60", help="file sizes in MiB, comma-separated (6,60)")
    parser.add_argument("--chunkers", default=";".join(CHUNKERS), help="chunker specs separated by ';'")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",") if s.strip()]
    chunkers = [c.strip() for c in args.chunkers.split(";") if c.strip()]
    print(json.dumps(measure(sizes, chunkers, args.seed)))


if __name__ == "__main__":
    main()
