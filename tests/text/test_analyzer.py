"""Analyzers: the presets do what their documentation says, fail loudly on bad names, and serialize."""

from __future__ import annotations

import pytest
import Stemmer

from ragline.errors import ConfigError
from ragline.index import Index, IndexSettings
from ragline.text import PRESETS, Analyzer, get_analyzer
from ragline.types import Document

# Lucene's EnglishAnalyzer stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), written out independently.
LUCENE_STOPWORDS = (
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with"
).split()

ENGLISH_LIKE = ["english", "english-porter", "chinese", "cjk-bigram"]  # presets with Lucene stopwords
STEMMING = {"english": "english", "english-porter": "porter", "chinese": "english", "cjk-bigram": "english"}


def test_lucene_stopword_list_has_33_words() -> None:
    assert len(set(LUCENE_STOPWORDS)) == 33


@pytest.mark.parametrize("preset", ENGLISH_LIKE)
def test_every_lucene_stopword_is_removed(preset: str) -> None:
    analyzer = get_analyzer(preset)
    assert analyzer(" ".join(LUCENE_STOPWORDS)) == []
    assert analyzer(" ".join(w.upper() for w in LUCENE_STOPWORDS)) == []  # after lowercasing


def test_simple_keeps_stopwords_and_does_not_stem() -> None:
    assert get_analyzer("simple")("The Running of THE dogs") == ["the", "running", "of", "the", "dogs"]


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Running DOGS", ["run", "dog"]),
        ("The cat's toys", ["cat", "toy"]),  # possessive 's removed, then stemmed
        ("John\u2019s books", ["john", "book"]),  # typographic apostrophe too
        ("it's the dogs' bowl", ["dog", "bowl"]),  # "it" is a stopword; plural possessive keeps the word
        ("fairly generously", ["fair", "generous"]),  # Snowball English (Porter gives fairli, gener)
        ("", []),
        ("   \n\t ", []),
        ("the of and", []),
        ("Covid-19 vaccines, 2024!", ["covid", "19", "vaccin", "2024"]),
    ],
)
def test_english_preset(text: str, terms: list[str]) -> None:
    assert get_analyzer("english")(text) == terms


def test_english_porter_uses_porter() -> None:
    assert get_analyzer("english-porter")("fairly generously") == ["fairli", "gener"]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_stemmer_is_the_named_snowball_algorithm(preset: str) -> None:
    words = ["connections", "relational", "hopefulness", "studies", "arguing", "generalizations"]
    analyzer = get_analyzer(preset)
    expected = Stemmer.Stemmer(STEMMING[preset]).stemWords(words) if preset in STEMMING else words
    assert analyzer(" ".join(words)) == expected


@pytest.mark.parametrize("preset", list(PRESETS))
def test_nfkc_full_width_letters_and_digits(preset: str) -> None:
    analyzer = get_analyzer(preset)
    assert analyzer("ＤＯＧＳ ２０２４ ｃａｔｓ") == analyzer("dogs 2024 cats")
    assert analyzer("ＤＯＧＳ") != []


@pytest.mark.parametrize("preset", list(PRESETS))
def test_nfkc_ligature(preset: str) -> None:
    analyzer = get_analyzer(preset)
    assert analyzer("\ufb01sh") == analyzer("fish")  # "ﬁ" ligature


@pytest.mark.parametrize("preset", list(PRESETS))
def test_duplicates_and_order_are_kept(preset: str) -> None:
    analyzer = get_analyzer(preset)
    terms = analyzer("zebra apple zebra")
    assert terms == [terms[0], terms[1], terms[0]]
    assert terms[0] != terms[1]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_empty_text(preset: str) -> None:
    assert get_analyzer(preset)("") == []
    assert get_analyzer(preset).analyze_many([]) == []
    assert get_analyzer(preset).analyze_many(["", "dog"]) == [[], get_analyzer(preset)("dog")]


# -- Chinese --------------------------------------------------------------------------------------------


def test_chinese_segments_han_text_with_jieba() -> None:
    terms = get_analyzer("chinese")("我们使用数据分析")
    # jieba's search mode: words plus the sub-words of long words
    assert terms == ["我们", "使用", "数据", "分析", "数据分析"]


def test_chinese_removes_chinese_stopwords() -> None:
    terms = get_analyzer("chinese")("数据的分析")
    assert "的" not in terms
    assert "数据" in terms and "分析" in terms


def test_chinese_keeps_english_words_stemmed() -> None:
    assert get_analyzer("chinese")("数据分析 running the dogs") == ["数据", "分析", "数据分析", "run", "dog"]


@pytest.mark.parametrize("preset", ["chinese", "cjk-bigram"])
def test_latin_glued_to_han_is_split(preset: str) -> None:
    # Chinese text rarely puts spaces around Latin words: "使用Python进行" must give "python", not "python进行".
    terms = get_analyzer(preset)("使用Python进行数据")
    assert "python" in terms
    assert all(not ("python" in t and t != "python") for t in terms), terms
    assert terms == get_analyzer(preset)("使用 Python 进行数据")


def test_cjk_bigram_gives_unigrams_and_bigrams() -> None:
    assert get_analyzer("cjk-bigram")("中文检索") == ["中", "文", "检", "索", "中文", "文检", "检索"]


def test_cjk_bigram_single_character_and_english() -> None:
    assert get_analyzer("cjk-bigram")("书") == ["书"]
    assert get_analyzer("cjk-bigram")("书 running") == ["书", "run"]


def test_cjk_bigram_runs_are_separate() -> None:
    # No bigram spans a gap between two Han runs.
    assert get_analyzer("cjk-bigram")("中文 检索") == ["中", "文", "中文", "检", "索", "检索"]


def test_cjk_bigram_removes_stopword_unigrams_only() -> None:
    terms = get_analyzer("cjk-bigram")("数据的")
    assert terms == ["数", "据", "数据", "据的"]


# -- configuration errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["klingon", "", "English", "bigram"])
def test_unknown_analyzer_name(name: str) -> None:
    with pytest.raises(ConfigError, match="unknown analyzer"):
        get_analyzer(name)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"stemmer": "klingon"}, "unknown stemmer"),
        ({"stemmer": ""}, "unknown stemmer"),
        ({"stopwords": "klingon"}, "unknown stopword list"),
        ({"stopwords": ""}, "unknown stopword list"),
        ({"tokenizer": "whitespace"}, "unknown tokenizer"),
    ],
)
def test_unknown_parts_raise_config_error(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Analyzer(**kwargs)


def test_from_dict_validates_too() -> None:
    data = get_analyzer("english").to_dict() | {"stemmer": "klingon"}
    with pytest.raises(ConfigError):
        Analyzer.from_dict(data)


def test_get_analyzer_passes_an_analyzer_through() -> None:
    custom = Analyzer(name="custom", stopwords="none", stemmer="porter")
    assert get_analyzer(custom) is custom


# -- serialization and identity -------------------------------------------------------------------------


@pytest.mark.parametrize("preset", list(PRESETS))
def test_round_trip(preset: str) -> None:
    analyzer = get_analyzer(preset)
    data = analyzer.to_dict()
    assert set(data) == {"name", "tokenizer", "lowercase", "stopwords", "stemmer", "min_token_length"}
    copy = Analyzer.from_dict(data)
    assert copy == analyzer
    assert hash(copy) == hash(analyzer)
    assert copy.to_dict() == data
    text = "Ｔhe runners' fairly quick 数据分析 cat's 中文"
    assert copy(text) == analyzer(text)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_round_trip_through_json(preset: str) -> None:
    import json

    analyzer = get_analyzer(preset)
    assert Analyzer.from_dict(json.loads(json.dumps(analyzer.to_dict()))) == analyzer


def test_presets_are_pairwise_different() -> None:
    presets = list(PRESETS.values())
    for i, a in enumerate(presets):
        for b in presets[i + 1 :]:
            assert a != b


def test_equality_ignores_caches() -> None:
    used, fresh = Analyzer(), Analyzer()
    used("running dogs")  # fills the stem cache
    assert used == fresh and hash(used) == hash(fresh)


def test_min_token_length() -> None:
    analyzer = Analyzer(name="min3", stopwords="none", stemmer=None, min_token_length=3)
    assert analyzer("a bb ccc dddd") == ["ccc", "dddd"]


def test_lowercase_false_keeps_case() -> None:
    analyzer = Analyzer(name="cased", lowercase=False, stopwords="none", stemmer=None)
    assert analyzer("Dogs dogs") == ["Dogs", "dogs"]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_deterministic_across_calls_and_instances(preset: str) -> None:
    text = "The Quick brown foxes' jumping over 数据分析 and 中文检索, fairly."
    a = get_analyzer(preset)
    b = Analyzer.from_dict(a.to_dict())
    first = a(text)
    for _ in range(3):
        assert a(text) == first
        assert b(text) == first
    assert a.analyze_many([text, text]) == [first, first]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_index_analyzes_queries_like_documents(preset: str) -> None:
    settings = IndexSettings(analyzer=get_analyzer(preset))
    index = Index.create(None, settings)
    docs = [
        Document("a", "Runners running fairly quickly 数据分析"),
        Document("b", "The cat's toys 中文检索"),
        Document("c", "ＦＵＬＬ width dogs"),
    ]
    index.add(docs)
    index.commit()
    analyzer = get_analyzer(preset)
    for doc in docs:
        # A document's own text as the query: the same terms, so it matches itself.
        assert doc.id in [hit.doc_id for hit in index.search(doc.text, k=3)]
        assert index.search_ids(doc.text, k=3) == [
            (index.segments[si].ids[row], score) for si, row, score in index.search_terms(analyzer(doc.text), k=3)
        ]
