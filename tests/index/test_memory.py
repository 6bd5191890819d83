"""Indexing a large file in bounded memory, with the same terms, postings and chunks as before."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ragline.index import BM25Params, Index, IndexSettings, store
from ragline.index.changes import text_batches
from ragline.index.merge import merge_postings
from ragline.index.postings import FieldPostings
from ragline.index.segment import FIELD_PARTS, FIELD_TEXT, json_line_pieces
from ragline.ingest.chunkers import FixedChunker, word_spans
from ragline.text import analyzer as analyzer_module
from ragline.text.analyzer import PRESETS, Analyzer
from ragline.types import Document

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from index_memory import measure  # noqa: E402

# Texts where a cut at whitespace could change a term if a step looked across it.
TRICKY = [
    "ΟΔΟΣ ΟΔΟΣ\nΣΟΦΟΣ Σ ΑΣ",  # final sigma depends on the neighbours
    "e \u0301cafe\u0301 \u0301 a\u0308 ﬁne ＡＢＣ ① ㎏",  # combining marks after a space, compatibility forms
    "the dog's bone, the cats’ toys; John's\nMary's 's x's",  # possessives at every position
    "使用Python进行中文文本处理 日本語のテキスト 한국어 텍스트 mixed漢字text",
    "İstanbul ǅemal ß ŉ",  # lowercasing that changes length
    "a" * 40 + " " + "b" * 3 + "\n\n" + "c" * 25,  # runs longer than a block
    "The of and to in a is that for it as was with be by on not he I this are or his",  # stopwords
]


def _corpus_text(seed: int, words: int = 400) -> str:
    rng = random.Random(seed)
    pieces = [rng.choice(TRICKY) for _ in range(3)]
    vocabulary = ["running", "runs", "Ran", "indexes", "indices", "the", "Σ", "é", "'s"]
    pieces += [rng.choice(vocabulary) for _ in range(words)]
    rng.shuffle(pieces)
    return "".join(p + rng.choice([" ", "\n", "  ", "\n\n", ", "]) for p in pieces)


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("block_chars", [1, 7, 64, 1 << 20])
def test_term_counts_are_the_counts_of_the_terms_whatever_the_block_size(preset: str, block_chars: int) -> None:
    analyzer = PRESETS[preset]
    for seed in range(4):
        text = _corpus_text(seed)
        counts = analyzer.term_counts(text, block_chars=block_chars)
        expected = Counter(analyzer(text))
        assert counts == expected
        assert list(counts) == list(expected)  # first-occurrence order, as the vocabulary is numbered
    for text in TRICKY:
        assert analyzer.term_counts(text, block_chars=block_chars) == Counter(analyzer(text))


@pytest.mark.parametrize("block_chars", [5, 1 << 20])
def test_a_title_and_text_read_as_parts_count_as_the_joined_body(block_chars: int) -> None:
    analyzer = PRESETS["english"]
    for title, text in [("Dog's Life", "ΟΔΟΣ the dogs run"), ("ΟΔΟΣ", "Σ is"), ("", "text only"), ("Title", "")]:
        document = Document("d", text, title)
        parts = FIELD_PARTS["body"](document)
        assert analyzer.term_counts(*parts, block_chars=block_chars) == Counter(analyzer(FIELD_TEXT["body"](document)))


def test_a_full_stem_cache_is_emptied_without_losing_a_stem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analyzer_module, "STEM_CACHE_LIMIT", 3)
    analyzer = Analyzer(name="test-cache")  # its own cache
    assert analyzer("running dogs jumped") == ["run", "dog", "jump"]
    # The cache now holds more than the limit; these tokens were cached before, then cleared: each is stemmed.
    assert analyzer("running dogs jumped quickly") == ["run", "dog", "jump", "quick"]
    assert analyzer.term_counts("houses running dogs") == {"hous": 1, "run": 1, "dog": 1}


def _postings_from_token_lists(token_lists: list[list[str]]) -> dict[str, dict[int, int]]:
    """The postings read straight off the token lists: term -> {row: frequency}."""
    out: dict[str, dict[int, int]] = {}
    for row, tokens in enumerate(token_lists):
        for term, tf in Counter(tokens).items():
            out.setdefault(term, {})[row] = tf
    return out


def test_postings_built_from_term_counts_match_the_token_lists() -> None:
    analyzer = PRESETS["english"]
    texts = [_corpus_text(seed, words=random.Random(seed).randint(0, 60)) for seed in range(40)] + ["", "the of"]
    postings = FieldPostings.build(analyzer.term_counts(t) for t in texts)
    token_lists = [analyzer(t) for t in texts]
    expected = _postings_from_token_lists(token_lists)
    assert postings.terms == list(dict.fromkeys(t for tokens in token_lists for t in tokens))
    assert postings.docs.dtype == np.int32 and postings.tfs.dtype == np.float32
    for i, term in enumerate(postings.terms):
        rows = postings.docs[postings.indptr[i] : postings.indptr[i + 1]]
        tfs = postings.tfs[postings.indptr[i] : postings.indptr[i + 1]]
        assert list(rows) == sorted(expected[term])  # ascending rows
        assert dict(zip(rows.tolist(), tfs.tolist())) == expected[term]
    assert postings.lengths.tolist() == [len(t) for t in token_lists]
    assert int(postings.indptr[-1]) == sum(len(p) for p in expected.values())


def test_postings_of_no_terms_are_empty() -> None:
    postings = FieldPostings.build(iter([{}, {}]))
    assert postings.terms == [] and postings.indptr.tolist() == [0] and len(postings.docs) == 0
    assert postings.lengths.tolist() == [0.0, 0.0]


def _fixed_windows(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows of ``size`` words every ``size - overlap`` words, the last one ending at the last word."""
    units = word_spans(text)
    out = []
    for first in range(0, len(units), size - overlap):
        window = units[first : first + size]
        out.append((window[0][0], window[-1][1]))
        if first + size >= len(units):
            break
    return out


@pytest.mark.parametrize("size,overlap", [(1, 0), (3, 0), (3, 2), (5, 1), (10, 3), (100, 30)])
def test_fixed_windows_are_read_in_one_pass_over_the_words(size: int, overlap: int) -> None:
    chunker = FixedChunker(size=size, overlap=overlap)
    for words in [0, 1, 2, 3, 4, 5, 9, 10, 11, 12, 13, 29, 100, 101, 171, 250]:
        text = " ".join(f"w{i}" for i in range(words)) + (" 中文" if words % 2 else "")
        assert chunker.spans(text, []) == _fixed_windows(text, size, overlap), words


@pytest.mark.slow
def test_indexing_a_large_file_takes_at_most_five_times_its_size() -> None:
    """Peak RSS of ``ragline index`` on a 20 MiB file, over the same command on a 1 KiB file."""
    result = measure([20], ["none", "fixed:size=100,overlap=30"])
    whole, chunked = result["runs"]
    # 40 MiB for what does not grow with the file (a 1 MiB analysis block, allocator arenas, noise)
    assert whole["increase_mib"] <= 5 * whole["file_mib"] + 40, whole
    # Chunks hold their texts (overlapping by 30%: 1.4x the file) through the commit, which analyzes
    # them into segments of ``COMMIT_BATCH_CHARS`` at a time (one segment of them all took 7x).
    assert chunked["increase_mib"] <= 5 * chunked["file_mib"] + 40, chunked


@pytest.mark.parametrize("piece_chars", [1, 3, 1 << 20])
def test_a_stored_line_written_in_pieces_is_its_json_line(piece_chars: int) -> None:
    for stored in [
        {"title": "t", "text": "plain"},
        {"title": 'Ωμέγα "q" \\', "text": "line\nbreak\ttab \x00 \u2028 😀 中文 " * 5, "index_text": "[t] x"},
        {"title": "", "text": ""},
    ]:
        expected = json.dumps(stored, ensure_ascii=False).encode() + b"\n"
        assert b"".join(json_line_pieces(stored, piece_chars)) == expected


# -- a commit analyzed in batches ---------------------------------------------------------------------------------


def _batch_corpus() -> list[Document]:
    rng = random.Random(7)
    words = ["apple", "banana", "cherry", "durian", "fig", "grape", "the", "running", "Σοφος", "数据"]
    return [
        Document(
            f"d{i:03d}",
            " ".join(rng.choice(words) for _ in range(rng.randint(0, 30))),
            title=rng.choice(["", "Fruit", "Running fig"]),
            metadata={"acl": rng.choice([["all"], ["hr"], "eng"]), "n": i},
            index_text=rng.choice([None, "[ctx] apple fig"]),
        )
        for i in range(120)
    ]


def _answers(index: Index) -> dict:
    out: dict = {}
    for query in ["apple", "banana cherry", "fig fig durian", "running", "σοφος", "数据", "nothing", ""]:
        for variant in ("lucene", "bm25l", "okapi"):
            out[query, variant] = index.search_ids(query, k=200, bm25=BM25Params(variant=variant))
        out[query, "filtered"] = index.search_ids(query, k=200, filter="acl = all")
    return out


def test_text_batches_keep_order_and_close_each_run_once_it_holds_the_limit() -> None:
    documents = [Document(f"d{i}", "x" * size) for i, size in enumerate([3, 4, 10, 1, 1, 1, 0, 12, 2])]
    batches = list(text_batches(documents, 5))
    assert [d for batch in batches for d in batch] == documents
    expected = [["d0", "d1"], ["d2"], ["d3", "d4", "d5", "d6", "d7"], ["d8"]]
    assert [[d.id for d in batch] for batch in batches] == expected
    assert list(text_batches([], 5)) == []
    assert [len(b) for b in text_batches(documents, 1 << 30)] == [len(documents)]


@pytest.mark.parametrize("on_disk", [False, True])
def test_a_commit_in_batches_answers_as_one_segment_does(tmp_path: Path, on_disk: bool) -> None:
    whole = Index.create(None)
    whole.add(_batch_corpus())
    whole.commit()
    assert len(whole.segments) == 1
    batched = Index.create(tmp_path / "ix" if on_disk else None)
    batched.commit_batch_chars = 2500
    batched.add(_batch_corpus())
    assert batched.commit() == 1  # one commit
    assert 3 <= len(batched.segments) <= batched.settings.max_segments  # several batches, no merge
    for index in [batched] + ([Index.open(tmp_path / "ix")] if on_disk else []):
        assert _answers(index) == _answers(whole)  # the same documents, scores and order of ties
        assert len(index) == len(whole) == 120
        assert [d.to_dict() for d in index.documents()] == [d.to_dict() for d in whole.documents()]
        assert index.get("d042") == whole.get("d042")


def test_a_commit_writes_at_most_max_segments_batches(tmp_path: Path) -> None:
    index = Index.create(tmp_path / "ix", IndexSettings(max_segments=3))
    index.commit_batch_chars = 1
    index.add(_batch_corpus())
    assert index.commit() == 1  # no merge was needed
    assert len(index.segments) == 3


def test_batches_merged_with_earlier_segments_keep_the_scores(tmp_path: Path) -> None:
    whole = Index.create(None)
    whole.add(_batch_corpus())
    whole.commit()
    batched = Index.create(tmp_path / "ix", IndexSettings(max_segments=2))
    batched.add(_batch_corpus()[:40])
    batched.commit()
    batched.commit_batch_chars = 400
    batched.add(_batch_corpus()[40:])
    batched.commit()  # two batches and the earlier segment: merged down to two
    assert len(batched.segments) == 2 and batched.generation == 3
    for key, expected in _answers(whole).items():
        got = _answers(batched)[key]
        # The merged segment comes last, so only the order among equal scores may differ.
        assert dict(got) == dict(expected), key
        assert [score for _, score in got] == [score for _, score in expected], key
    assert sorted(d.id for d in batched.documents()) == sorted(d.id for d in whole.documents())


def test_batches_written_before_a_failed_manifest_swap_are_invisible_and_collected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ix"
    writer = Index.create(path)
    writer.add([Document("old", "apple banana")])
    writer.commit()
    before = _answers(writer)
    writer.commit_batch_chars = 400
    writer.add(_batch_corpus())

    def crash(*args: object) -> None:
        raise OSError("disk full while swapping the manifest")

    monkeypatch.setattr(store, "write_manifest", crash)
    with pytest.raises(OSError, match="disk full"):
        writer.commit()
    monkeypatch.undo()
    writer.close()
    assert len(list((path / "segments").iterdir())) > 3  # the batches were written ...
    reader = Index.open(path)
    assert reader.generation == 1 and len(reader) == 1  # ... but are no part of any commit
    assert _answers(reader) == before
    reader.add([Document("new", "fig")])
    reader.commit()
    manifest = json.loads((path / "manifest.json").read_text())
    assert sorted(p.name for p in (path / "segments").iterdir()) == sorted(e["name"] for e in manifest["segments"])
    reader.close()


def test_merged_postings_are_the_postings_of_the_live_rows() -> None:
    analyzer = PRESETS["english"]
    rng = random.Random(3)
    texts = [[_corpus_text(rng.randrange(1000), words=rng.randint(0, 40)) for _ in range(n)] for n in (7, 0, 12, 1, 9)]
    lives = [np.array([rng.random() < 0.7 for _ in part], dtype=bool) for part in texts]
    lives[3][:] = True  # a part without deletes takes the shortcut
    parts = [(FieldPostings.build(analyzer.term_counts(t) for t in part), live) for part, live in zip(texts, lives)]
    merged = merge_postings(parts)
    live_texts = [t for part, live in zip(texts, lives) for t, alive in zip(part, live) if alive]
    fresh = FieldPostings.build(analyzer.term_counts(t) for t in live_texts)
    assert sorted(merged.terms) == sorted(fresh.terms)
    for term in fresh.terms:
        i, j = merged.terms.index(term), fresh.terms.index(term)
        span, fresh_span = slice(merged.indptr[i], merged.indptr[i + 1]), slice(fresh.indptr[j], fresh.indptr[j + 1])
        assert merged.docs[span].tolist() == fresh.docs[fresh_span].tolist(), term  # ascending rows
        assert merged.tfs[span].tolist() == fresh.tfs[fresh_span].tolist(), term
    assert merged.lengths.tolist() == fresh.lengths.tolist()
    assert merged.docs.dtype == np.int32 and merged.tfs.dtype == np.float32
