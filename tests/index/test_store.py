"""The on-disk index: reopening, settings checks, the writer lock, corruption detection and crash safety."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import ragline
from ragline.errors import ConfigError, CorruptIndexError, IndexLockedError, IndexMismatchError, IndexNotFoundError
from ragline.index import BM25Params, Index, IndexSettings
from ragline.index.store import FORMAT
from ragline.text import Analyzer, get_analyzer
from ragline.types import Document

REPO = Path(__file__).resolve().parents[2]
QUERIES = ["apple", "banana cherry", "durian apple apple", "fig", "nothing here", ""]


def sample_docs() -> list[Document]:
    return [
        Document("a", "apple banana", title="Fruit", metadata={"acl": ["hr", "all"], "year": 2024}),
        Document("b", "banana cherry cherry", metadata={"acl": "eng", "year": 2023}, source="b.txt"),
        Document("c", "cherry durian apple", title="Mixed", metadata={}),
        Document("d", "fig fig fig", metadata={"acl": ["all"]}),
        Document("e", "Ünïcödé 数据 apple", metadata={"note": "ünï"}),
    ]


def results(index: Index) -> dict:
    out = {}
    for q in QUERIES:
        for variant in ("lucene", "bm25l", "okapi"):
            out[q, variant] = index.search_ids(q, k=100, bm25=BM25Params(variant=variant))
    out["filtered"] = index.search_ids("apple", k=100, filter="acl = all")
    return out


def test_create_add_commit_reopen(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    settings = IndexSettings(max_segments=5)
    index = Index.create(path, settings)
    assert (path / "manifest.json").is_file()
    assert Index.open(path).generation == 0 and len(Index.open(path)) == 0
    docs = sample_docs()
    index.add(docs[:3])
    index.commit()
    index.add(docs[3:])
    index.delete(["b"])
    index.add([Document("c", "cherry durian apple apple", title="Mixed v2")])
    assert index.commit() == 2
    before, info = results(index), index.info()
    index.close()

    reopened = Index.open(path)
    assert results(reopened) == before
    again = reopened.info()
    assert again == info
    assert again["documents"] == 4 == len(reopened)
    assert again["deleted"] == 2  # "b", and the first version of "c"
    assert [(s["rows"], s["deleted"]) for s in again["segments"]] == [(3, 2), (3, 0)]
    assert again["generation"] == 2
    assert again["settings"] == settings.to_dict()
    assert again["ragline_version"] == ragline.__version__
    assert again["format"] == FORMAT
    assert again["path"] == str(path)
    assert again["size_bytes"] > 0
    assert again["created_at"] and again["committed_at"]
    # stored documents come back exactly
    for doc in docs:
        if doc.id in ("a", "d", "e"):
            got = reopened.get(doc.id)
            assert (got.id, got.text, got.title, got.metadata, got.source) == (
                doc.id,
                doc.text,
                doc.title,
                doc.metadata,
                doc.source,
            )
    assert reopened.get("b") is None
    assert reopened.get("c").title == "Mixed v2"
    assert sorted(d.id for d in reopened.documents()) == ["a", "c", "d", "e"]
    hits = reopened.search("apple", k=2)
    assert [h.rank for h in hits] == [1, 2] and all(h.text for h in hits)


def test_in_memory_info() -> None:
    index = Index.create(None)
    index.add(sample_docs())
    index.commit()
    info = index.info()
    assert (info["path"], info["size_bytes"], info["documents"], info["deleted"], info["generation"]) == (
        None,
        0,
        5,
        0,
        1,
    )
    assert not list(Path.cwd().glob("manifest.json*"))


def test_settings_survive_reopen(tmp_path: Path) -> None:
    settings = IndexSettings(
        analyzer=get_analyzer("simple"),
        fields={"title": 2.0, "text": 1.0},
        bm25=BM25Params(variant="bm25+", k1=1.2, b=0.7, delta=0.8),
        max_segments=3,
    )
    with Index.create(tmp_path / "ix", settings) as index:
        index.add([Document("a", "running", title="dogs"), Document("b", "run", title="cat")])
        index.commit()
        before = index.search_ids("running dogs")
    reopened = Index.open(tmp_path / "ix")
    assert reopened.settings == settings
    assert reopened.search_ids("running dogs") == before
    assert [d for d, _ in reopened.search_ids("running")] == ["a"]  # "simple": no stemming, so "run" is no match


def test_open_with_the_same_analyzer(tmp_path: Path) -> None:
    Index.create(tmp_path / "ix", IndexSettings(analyzer=get_analyzer("simple"))).close()
    assert Index.open(tmp_path / "ix", analyzer="simple").settings.analyzer == get_analyzer("simple")
    assert Index.open(tmp_path / "ix", analyzer=Analyzer.from_dict(get_analyzer("simple").to_dict())) is not None


@pytest.mark.parametrize(
    "other", ["english", "english-porter", "chinese", "cjk-bigram", Analyzer(name="simple", stopwords="lucene")]
)
def test_open_with_another_analyzer(tmp_path: Path, other: str | Analyzer) -> None:
    Index.create(tmp_path / "ix", IndexSettings(analyzer=get_analyzer("simple"))).close()
    with pytest.raises(IndexMismatchError, match="analyzer"):
        Index.open(tmp_path / "ix", analyzer=other)


def test_open_or_create_with_other_settings(tmp_path: Path) -> None:
    Index.create(tmp_path / "ix", IndexSettings(analyzer=get_analyzer("simple"))).close()
    with pytest.raises(IndexMismatchError):
        Index.open_or_create(tmp_path / "ix", IndexSettings())
    assert Index.open_or_create(tmp_path / "ix", IndexSettings(analyzer=get_analyzer("simple"))).generation == 0
    assert Index.open_or_create(tmp_path / "new").generation == 0
    assert (tmp_path / "new" / "manifest.json").is_file()


def test_create_over_an_existing_index(tmp_path: Path) -> None:
    Index.create(tmp_path / "ix").close()
    with pytest.raises(ConfigError, match="already exists"):
        Index.create(tmp_path / "ix")


def test_open_a_newer_format(tmp_path: Path) -> None:
    Index.create(tmp_path / "ix").close()
    manifest = json.loads((tmp_path / "ix" / "manifest.json").read_text())
    manifest["format"] = 99
    (tmp_path / "ix" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexMismatchError, match="format"):
        Index.open(tmp_path / "ix")


@pytest.mark.parametrize("kind", ["no directory", "empty directory", "a file"])
def test_open_missing(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "ix"
    if kind == "empty directory":
        path.mkdir()
    elif kind == "a file":
        path.write_text("not an index")
    with pytest.raises(IndexNotFoundError, match=str(path)):
        Index.open(path)


def test_refresh_sees_a_newer_commit(tmp_path: Path) -> None:
    writer = Index.create(tmp_path / "ix")
    reader = Index.open(tmp_path / "ix")
    writer.add(sample_docs())
    writer.commit()
    assert reader.search_ids("apple") == []
    assert reader.refresh() is True
    assert reader.search_ids("apple") == writer.search_ids("apple")
    assert reader.refresh() is False


# -- the writer lock -------------------------------------------------------------------------------------


def test_second_writer_in_process(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    first = Index.create(path)  # create holds the lock
    first.add(sample_docs())
    first.commit()
    second = Index.open(path)
    assert second.search_ids("apple")  # readers need no lock
    for write in (lambda: second.add([Document("x", "x")]), lambda: second.delete(["a"]), lambda: second.sync([])):
        with pytest.raises(IndexLockedError, match=f"pid {os.getpid()}"):
            write()
    assert second.commit() == first.generation  # nothing pending: no lock needed
    first.close()
    second.add([Document("x", "xylophone")])
    assert second.commit() == 2
    with pytest.raises(IndexLockedError):
        first.add([Document("y", "y")])  # the first writer now waits for the second
    second.close()
    first.add([Document("y", "yak")])
    assert first.commit() == 3  # taking the lock loaded the second writer's commit first
    assert sorted(first.id_map()) == ["a", "b", "c", "d", "e", "x", "y"]


HOLD_LOCK = """
import sys
from ragline.index import Index
index = Index.open(sys.argv[1])
index.add([])
print("locked", flush=True)
sys.stdin.read()
"""

TRY_LOCK = """
import sys
from ragline.index import Index
from ragline.errors import IndexLockedError
index = Index.open(sys.argv[1])
try:
    index.add([])
except IndexLockedError as e:
    print("IndexLockedError", e)
else:
    print("acquired")
"""


def _python(script: str, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *args], text=True, cwd=REPO, **kw)


def test_writer_in_another_process_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    Index.create(path).close()
    child = _python(HOLD_LOCK, str(path), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline().strip() == "locked"
        index = Index.open(path)
        with pytest.raises(IndexLockedError, match=f"pid {child.pid}"):
            index.add([Document("a", "apple")])
    finally:
        child.stdin.close()
        child.wait(timeout=20)
    assert child.returncode == 0
    index.add([Document("a", "apple")])  # released when the process ended
    assert index.commit() == 1


def test_lock_held_here_stops_another_process(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    with Index.create(path):
        out = _python(TRY_LOCK, str(path), stdout=subprocess.PIPE).communicate(timeout=20)[0]
        assert out.startswith("IndexLockedError") and f"pid {os.getpid()}" in out
    out = _python(TRY_LOCK, str(path), stdout=subprocess.PIPE).communicate(timeout=20)[0]
    assert out.strip() == "acquired"


def test_lock_of_a_killed_writer_is_released(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    Index.create(path).close()
    child = _python(HOLD_LOCK, str(path), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout.readline().strip() == "locked"
    child.kill()
    child.wait(timeout=20)
    child.stdin.close()
    child.stdout.close()
    with Index.open(path) as index:
        index.add([Document("a", "apple")])
        assert index.commit() == 1


# -- corruption ------------------------------------------------------------------------------------------------


def _committed(path: Path) -> None:
    with Index.create(path, IndexSettings(max_segments=10)) as index:
        docs = sample_docs()
        index.add(docs[:3])
        index.commit()
        index.add(docs[3:])
        index.delete(["a"])
        index.commit()


SEGMENT_FILES = [
    "catalog.json",
    "docs.jsonl",
    "docs.offsets.npy",
    "metadata.json",
    "body.terms.json",
    "body.indptr.npy",
    "body.docs.npy",
    "body.tfs.npy",
    "body.lengths.npy",
]


@pytest.mark.parametrize("damage", ["delete", "truncate", "append"])
@pytest.mark.parametrize("name", SEGMENT_FILES)
def test_damaged_segment_file(tmp_path: Path, name: str, damage: str) -> None:
    path = tmp_path / "ix"
    _committed(path)
    manifest = json.loads((path / "manifest.json").read_text())
    folder = path / "segments" / manifest["segments"][0]["name"]
    assert name in manifest["segments"][0]["files"]
    file = folder / name
    if damage == "delete":
        file.unlink()
    elif damage == "truncate":
        file.write_bytes(file.read_bytes()[: file.stat().st_size // 2])
    else:
        file.write_bytes(file.read_bytes() + b"\0")
    with pytest.raises(CorruptIndexError, match=name):
        Index.open(path)


def test_missing_segment_folder(tmp_path: Path) -> None:
    import shutil

    path = tmp_path / "ix"
    _committed(path)
    manifest = json.loads((path / "manifest.json").read_text())
    shutil.rmtree(path / "segments" / manifest["segments"][1]["name"])
    with pytest.raises(CorruptIndexError):
        Index.open(path)


def test_missing_delete_set(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    _committed(path)
    (deletes,) = list((path / "deletes").iterdir())
    deletes.unlink()
    with pytest.raises(CorruptIndexError, match="delete set"):
        Index.open(path)


def test_unreferenced_files_are_collected_by_the_next_commit(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    _committed(path)
    (path / "segments" / "seg-999999-abcdef.tmp").mkdir()
    (path / "segments" / "seg-999999-abcdef.tmp" / "docs.jsonl").write_text("half")
    (path / "segments" / "seg-999998-abcdef").mkdir()
    (path / "deletes" / "seg-999998-abcdef.000009.npy").write_bytes(b"x")
    (path / "manifest.json.tmp").write_text("{")
    index = Index.open(path)
    assert len(index) == 4  # leftovers do not disturb reading
    index.add([Document("z", "zebra")])
    index.commit()
    _assert_clean(path)


def _assert_clean(path: Path) -> None:
    manifest = json.loads((path / "manifest.json").read_text())
    assert not list(path.rglob("*.tmp"))
    assert sorted(p.name for p in (path / "segments").iterdir()) == sorted(e["name"] for e in manifest["segments"])
    named = sorted(e["deletes"] for e in manifest["segments"] if e.get("deletes"))
    on_disk = sorted(p.name for p in (path / "deletes").iterdir()) if (path / "deletes").exists() else []
    assert on_disk == named


# -- readers and writers together --------------------------------------------------------------------------------


def test_open_reader_keeps_working_after_a_merge(tmp_path: Path) -> None:
    """segment.py: "The mapping outlives an unlink by a later merge, so an open reader keeps working"."""
    path = tmp_path / "ix"
    writer = Index.create(path, IndexSettings(max_segments=10))
    writer.add(sample_docs()[:2])
    writer.commit()
    expected = Index.open(path).search("apple")
    reader = Index.open(path)  # opened, but nothing read yet beyond what open() loads
    writer.add(sample_docs()[2:])
    writer.commit()
    writer.merge()  # the reader's segment folder is removed
    assert len(list((path / "segments").iterdir())) == 1
    assert reader.search_ids("apple") == [(h.doc_id, h.score) for h in expected]
    assert [h.to_dict() for h in reader.search("apple")] == [h.to_dict() for h in expected]
    assert [d for d, _ in reader.search_ids("apple", filter="acl = all")] == ["a"]


def test_ties_keep_segment_then_row_order() -> None:
    """store.py search_terms: "ties keep segment-then-row order"."""
    index = Index.create(None)
    index.add([Document(f"d{i:04d}", "same words here") for i in range(300)])
    index.commit()
    index.add([Document(f"e{i:04d}", "same words here") for i in range(300)])
    index.commit()
    for k in (1, 5, 50, 299, 300, 301, 600):
        got = index.search_terms(index.settings.analyzer("same"), k=k)
        assert [(si, row) for si, row, _ in got] == [(i // 300, i % 300) for i in range(min(k, 600))], k


# -- crash safety -----------------------------------------------------------------------------------------------

BATCH = 2000  # documents per commit: enough that a commit takes a while to write
BATCHES_SOURCE = '''
import random as _random
from ragline.types import Document as _Document

_VOCAB = [f"w{j}" for j in range(400)]


def batch_ops(b, n):
    """Batch b: add n new documents, rewrite every 7th of batch b-1, delete every 5th of batch b-2."""
    rng = _random.Random(b)
    adds = [
        _Document(f"b{b}-{i}", " ".join(rng.choice(_VOCAB) for _ in range(12)), metadata={"b": b, "i": i})
        for i in range(n)
    ]
    if b >= 1:
        adds += [_Document(f"b{b - 1}-{i}", f"updated w{b} w{i % 50}", metadata={"b": b}) for i in range(0, n, 7)]
    deletes = [f"b{b - 2}-{i}" for i in range(0, n, 5)] if b >= 2 else []
    return adds, deletes
'''
exec(BATCHES_SOURCE)  # defines batch_ops here too

WRITER = (
    BATCHES_SOURCE
    + """
import sys
from ragline.index import Index

path, n = sys.argv[1], int(sys.argv[2])
index = Index.open(path)
b = 0
while index.get(f"b{b}-1") is not None:  # row 1 of a batch is never rewritten or deleted
    b += 1
print("start", b, flush=True)
while True:
    adds, deletes = batch_ops(b, n)
    index.add(adds)
    index.delete(deletes)
    print("begin", b, flush=True)
    gen = index.commit()
    print("done", b, gen, flush=True)
    b += 1
"""
)


def expected_after(last: int, n: int) -> dict[str, Document]:
    live: dict[str, Document] = {}
    for b in range(last + 1):
        adds, deletes = batch_ops(b, n)  # noqa: F821 - defined by exec above
        for doc in adds:
            live[doc.id] = doc
        for doc_id in deletes:
            live.pop(doc_id, None)
    return live


class Reader(threading.Thread):
    def __init__(self, stream) -> None:  # noqa: ANN001
        super().__init__(daemon=True)
        self.stream, self.lines, self.cond = stream, [], threading.Condition()

    def run(self) -> None:
        for line in self.stream:
            with self.cond:
                self.lines.append(line.split())
                self.cond.notify_all()

    def wait_for(self, words: list[str], timeout: float) -> None:
        with self.cond:
            ok = self.cond.wait_for(lambda: words in self.lines, timeout=timeout)
        assert ok, f"child never printed {words}: {self.lines}"


@pytest.mark.slow
def test_kill_during_commits(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    Index.create(path, IndexSettings(analyzer=get_analyzer("simple"), max_segments=3)).close()
    rng = random.Random(20240611)
    queries = [["w1"], ["w7", "w300"], ["updated", "w3"], ["w42", "w42", "w5"], ["w399"]]
    last_done, saw_tmp = -1, False
    for attempt in range(5):
        child = _python(WRITER, str(path), str(BATCH), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        reader = Reader(child.stdout)
        reader.start()
        try:
            reader.wait_for(["start", str(last_done + 1)], timeout=60)
            target = last_done + 1 + rng.randrange(3)  # kill while committing this batch ...
            reader.wait_for(["begin", str(target)], timeout=60)
            time.sleep(rng.uniform(0.0, 0.25))  # ... at a random moment of it (or just after)
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=20)
            reader.join(timeout=20)
            stderr = child.stderr.read()
            child.stdout.close()
            child.stderr.close()
        assert child.returncode == -signal.SIGKILL, stderr
        begun = [int(w[1]) for w in reader.lines if w[0] == "begin"]
        done = {int(w[1]): int(w[2]) for w in reader.lines if w[0] == "done"}
        saw_tmp = saw_tmp or bool(list(path.rglob("*.tmp")))

        index = Index.open(path)  # the last completed commit
        completed = max(done, default=last_done)
        if index.get(f"b{completed + 1}-1") is not None:
            completed += 1  # the manifest was swapped, but the child died before it said so
        assert completed <= max(begun)
        assert index.get(f"b{completed + 1}-1") is None
        if completed in done:
            assert index.generation == done[completed]
        live = expected_after(completed, BATCH)
        assert index.id_map().keys() == live.keys()
        assert len(index) == len(live)
        for doc_id in rng.sample(sorted(live), 20):
            assert index.get(doc_id).text == live[doc_id].text
        fresh = Index.create(None, index.settings)
        fresh.add(list(live.values()))
        fresh.commit()
        for terms in queries:
            got = {index.segments[si].ids[r]: s for si, r, s in index.search_terms(terms, k=100_000)}
            want = {fresh.segments[si].ids[r]: s for si, r, s in fresh.search_terms(terms, k=100_000)}
            assert got.keys() == want.keys()
            assert all(got[d] == pytest.approx(want[d], rel=1e-5) for d in want)
        print(f"kill {attempt}: committing batch {max(begun)}, completed {completed}, tmp left: {saw_tmp}")
        last_done = completed

    # The dead writers' locks are gone; the next commit collects whatever half-written files they left.
    (path / "segments" / "seg-999999-abcdef.tmp").mkdir(exist_ok=True)  # in case no kill left one
    with Index.open(path) as index:
        adds, deletes = batch_ops(last_done + 1, 10)  # noqa: F821
        index.add(adds)
        index.commit()
    _assert_clean(path)
    assert last_done >= 2  # the kills happened at different batches, after real progress
    del saw_tmp  # informative only: whether a kill left a half-written segment depends on timing
