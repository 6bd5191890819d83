"""Live ids: the whole map and the lookup of a few ids agree with the segments and delete sets they read."""

from __future__ import annotations

import random

from ragline.index import Index, IndexSettings
from ragline.index.live_ids import find_live, live_id_map
from ragline.types import Document


def _expected(index: Index) -> dict[str, tuple[int, int]]:
    """The definition: every row not deleted, in segment-then-row order."""
    return {
        doc_id: (si, row)
        for si, (seg, dead) in enumerate(zip(index.segments, index.deleted))
        for row, doc_id in enumerate(seg.ids)
        if not dead[row]
    }


def test_the_whole_map_and_lookups_follow_adds_replacements_deletes_and_merges() -> None:
    rng = random.Random(5)
    index = Index.create(None, IndexSettings(max_segments=4))
    for round_ in range(12):
        index.add(Document(f"d{rng.randrange(60)}", f"text {round_} {i}") for i in range(rng.randint(1, 15)))
        index.delete([f"d{rng.randrange(60)}" for _ in range(rng.randint(0, 4))])
        index.commit()
        expected = _expected(index)
        assert list(live_id_map(index.segments, index.deleted).items()) == list(expected.items())
        asked = [f"d{i}" for i in rng.sample(range(70), 25)]  # some were never added
        assert find_live(index.segments, index.deleted, asked) == {i: expected[i] for i in asked if i in expected}
        assert find_live(index.segments, index.deleted, []) == {}
    assert len(index.segments) <= 4 and len(_expected(index)) == len(index)


def test_a_replaced_document_has_one_live_row_and_deletes_find_it_without_the_whole_map() -> None:
    index = Index.create(None, IndexSettings(max_segments=10))
    index.add([Document("a", "one"), Document("b", "two")])
    index.commit()
    index.add([Document("a", "one again")])  # replaces: row 0 of the first segment is deleted
    index.commit()
    assert find_live(index.segments, index.deleted, ["a", "b"]) == {"a": (1, 0), "b": (0, 1)}
    assert index._id_map is None  # neither commit built the whole map
    assert index.delete(["a", "zzz"]) == 1
    index.commit()
    assert index._id_map is None and [d.id for d in index.documents()] == ["b"]
