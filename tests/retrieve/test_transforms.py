"""RM3 feedback, thesaurus expansion, and the transformed retriever that fuses their queries."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.components import build
from ragline.errors import ConfigError, InputError
from ragline.index.store import Index, IndexSettings
from ragline.retrieve.fusion import fuse, rank
from ragline.types import Document

DOCS = [
    Document("a", "Aspirin lowers fever and eases headache pain in adults.", title="Aspirin"),
    Document("b", "Aspirin and ibuprofen: fever, headache and inflammation compared.", title="Painkillers"),
    Document("c", "Ibuprofen reduces inflammation; headache relief is similar to aspirin.", title="Ibuprofen"),
    Document("d", "The automobile industry builds cars with combustion engines.", title="Cars"),
    Document("e", "Electric cars need batteries; an automobile battery lasts ten years.", title="Batteries"),
    Document("f", "Inflammation markers rise with infection and fall with ibuprofen.", title="Markers"),
]


@pytest.fixture(scope="module")
def index() -> Index:
    index = Index.create(None, IndexSettings())
    index.add(DOCS)
    index.commit()
    return index


def test_rm3_adds_the_feedback_documents_words_that_the_query_lacks(index: Index):
    rm3 = build("query_transform", "rm3:fb_docs=2,fb_terms=3", index=index)
    terms = rm3.expansion_terms("aspirin fever")
    words = [w for w, _ in terms]
    assert len(words) == 3 and "aspirin" not in words and "fever" not in words
    assert "headache" in words  # in both feedback documents: the highest P(w|R)
    probabilities = [p for _, p in terms]
    assert probabilities == sorted(probabilities, reverse=True)
    queries = rm3.transform("aspirin fever")
    assert queries[0] == ("aspirin fever", 1.0) and queries[1] == (" ".join(words), 0.5)
    assert rm3.transform("zeppelin") == [("zeppelin", 1.0)]  # nothing retrieved: the query alone
    with pytest.raises(ConfigError, match="rm3"):
        build("query_transform", "rm3:fb_docs=0", index=index)


def test_synonyms_expand_with_the_other_words_of_the_group(index: Index, tmp_path: Path):
    file = tmp_path / "thesaurus.txt"
    file.write_text("# cars\ncar, automobile, motor vehicle\npainkiller, analgesic\n")
    synonyms = build("query_transform", f"synonyms:file={file},weight=0.3", index=index)
    assert synonyms.transform("battery of electric cars") == [
        ("battery of electric cars", 1.0),
        ("battery of electric cars automobile motor vehicle", 0.3),
    ]
    assert synonyms.transform("aspirin") == [("aspirin", 1.0)]
    (tmp_path / "bad.txt").write_text("car\n")
    with pytest.raises(InputError, match="bad.txt:1"):
        build("query_transform", f"synonyms:file={tmp_path / 'bad.txt'}", index=index)


def test_transformed_retriever_fuses_each_querys_run_with_its_weight(index: Index):
    query = "aspirin fever"
    retriever = build("retriever", 'transformed:transforms="rm3:fb_docs=2,fb_terms=3",fuser=rrf', index=index)
    queries = build("query_transform", "rm3:fb_docs=2,fb_terms=3", index=index).transform(query)
    bm25 = build("retriever", "bm25", index=index)
    runs = [dict(bm25.rank(q, 1000)) for q, _ in queries]
    expected = rank(fuse("rrf", runs, weights=[w for _, w in queries]), 5)
    assert retriever.rank(query, 5) == expected
    assert "f" in dict(retriever.rank(query, 6)) and "f" not in dict(bm25.rank(query, 6))  # found by feedback
    assert build("retriever", "transformed", index=index).rank(query, 3) == bm25.rank(query, 3)
