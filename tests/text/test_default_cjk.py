"""The default analyzer on text in both scripts: CJK runs become unigrams and bigrams, everything else
gets exactly the terms of the word tokenizer it had before (checked on SciFact and on random text)."""

from __future__ import annotations

import json
import random
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ragline.index import Index, IndexSettings
from ragline.ingest.loaders import load_folder
from ragline.text import Analyzer, get_analyzer
from ragline.text.scripts import has_cjk
from ragline.types import Document

# CJK letters by their Unicode names: an oracle independent of the code-point ranges in ragline.text.scripts.
CJK_NAMES = (
    "CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA", "KATAKANA", "HENTAIGANA", "HANGUL",
    "IDEOGRAPHIC ITERATION MARK", "IDEOGRAPHIC CLOSING MARK", "IDEOGRAPHIC NUMBER ZERO", "HANGZHOU NUMERAL",
    "VERTICAL KANA", "VERTICAL IDEOGRAPHIC ITERATION MARK", "MASU MARK",
)  # fmt: skip


def named_cjk(text: str) -> bool:
    return any(unicodedata.name(c, "").startswith(CJK_NAMES) for c in text)


# The english preset as it was before it became script-aware: the same recipe with word tokens.
WORD_ENGLISH = Analyzer(name="english", tokenizer="word")
NEW_DEFAULTS = [IndexSettings().analyzer, get_analyzer("english"), Analyzer()]


def test_every_default_path_gets_the_script_aware_analyzer() -> None:
    assert all(a == get_analyzer("english") for a in NEW_DEFAULTS)
    assert get_analyzer("english").tokenizer == "cjk-bigram"


def test_stamp_tells_new_english_indexes_from_old_ones() -> None:
    assert get_analyzer("english").to_dict() != WORD_ENGLISH.to_dict()
    assert get_analyzer("english").name == "english"  # the name users know stays


def test_english_porter_keeps_word_tokens_for_pyserini_parity() -> None:
    porter = get_analyzer("english-porter")
    assert porter.tokenizer == "word"
    assert porter("中文检索") == ["中文检索"]


# -- unchanged on text without CJK ------------------------------------------------------------------------


def test_first_300_scifact_documents_get_the_old_terms(bench: Path) -> None:
    with (bench / "scifact" / "corpus.jsonl").open(encoding="utf-8") as corpus:
        texts = [f"{d['title']} {d['text']}" for d in map(json.loads, (next(corpus) for _ in range(300)))]
    assert not any(has_cjk(t) for t in texts)
    assert any(not t.isascii() for t in texts)  # the non-ASCII path is exercised too
    new = get_analyzer("english")
    for text in texts:
        assert new(text) == WORD_ENGLISH(text)


# Pieces weighted towards what real text holds: words in Latin with accents, Greek, Cyrillic, Arabic,
# Devanagari, Thai; possessives, combining marks, CJK punctuation, full-width forms (NFKC maps them to
# ASCII), the neighbours of the CJK blocks; plus any code point at all.
PIECES = st.one_of(
    st.sampled_from(["dogs", "Running", "cat's", "Covid-19", "naïve", "ελλάδα", "Жизнь", "عربي", "हिन्दी", "ภาษาไทย"]),
    st.sampled_from(list(" '’s-_.,\n\t\u0301\u3000\u3001\u3002\u30fb\u30a0\uff21\uff41\uff11\u3099\u309b\u10ff\ua4ff")),
    st.characters(codec="utf-8"),
)
TEXT = st.lists(PIECES, max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_random_text_without_cjk_gets_the_old_terms(text: str) -> None:
    # Without CJK once normalized: half-width kana or ㌀ (NFKC: アパート) are CJK text, and analyzed as such.
    assume(not named_cjk(unicodedata.normalize("NFKC", text)))
    assert get_analyzer("english")(text) == WORD_ENGLISH(text)
    assert get_analyzer("cjk-bigram")(text) == Analyzer(name="cjk-bigram", tokenizer="word", stopwords="chinese")(text)


def test_cjk_detection_agrees_with_unicode_names_on_every_word_character() -> None:
    # Only word characters matter: tokens are word-character runs before CJK runs are split off.
    word = re.compile(r"\w")
    disagree = [
        f"U+{cp:04X} {unicodedata.name(chr(cp), '')}"
        for cp in range(0x110000)
        if not 0xD800 <= cp < 0xE000 and word.match(chr(cp)) and has_cjk(chr(cp)) != named_cjk(chr(cp))
    ]
    assert not disagree, f"{len(disagree)} code points disagree: {disagree[:10]}"


# -- CJK runs -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("中文检索", ["中", "文", "检", "索", "中文", "文检", "检索"]),
        ("猫", ["猫"]),
        ("中文 检索", ["中", "文", "中文", "检", "索", "检索"]),  # no bigram across a gap
        ("中文。检索", ["中", "文", "中文", "检", "索", "检索"]),  # nor across CJK punctuation
        ("使用Python进行", ["使", "用", "使用", "python", "进", "行", "进行"]),  # Latin glued to Han is cut
        ("Running 数据 dogs", ["run", "数", "据", "数据", "dog"]),  # English rules on the Latin words
        ("ＣＯＶＩＤ疫苗", ["covid", "疫", "苗", "疫苗"]),  # NFKC before the split
        ("すし", ["す", "し", "すし"]),  # Hiragana
        ("カタ・カナ", ["カ", "タ", "カタ", "カ", "ナ", "カナ"]),  # Katakana; ・ is punctuation
        ("ｶﾀｶﾅ", ["カ", "タ", "カ", "ナ", "カタ", "タカ", "カナ"]),  # half-width kana, normalized
        ("東京タワー", ["東", "京", "タ", "ワ", "ー", "東京", "京タ", "タワ", "ワー"]),  # mixed Han + kana run
        ("학교에서", ["학", "교", "에", "서", "학교", "교에", "에서"]),  # Hangul
        ("\U00020000\u4e00", ["\U00020000", "\u4e00", "\U00020000\u4e00"]),  # Extension B ideograph
    ],
)
def test_cjk_runs(text: str, terms: list[str]) -> None:
    assert get_analyzer("english")(text) == terms


def test_lucene_stopwords_still_removed_next_to_cjk() -> None:
    assert get_analyzer("english")("the 猫 of") == ["猫"]


# -- BM25 with default settings --------------------------------------------------------------------------------


def _search(index: Index, query: str) -> list[str]:
    return [hit.doc_id for hit in index.search(query, k=3)]


def test_chinese_documents_get_bm25_hits_with_default_settings() -> None:
    index = Index.create(None, IndexSettings())
    index.add(
        [
            Document("capital", "科埃瑞的首都是凯米恩。凯米恩坐落在贝乌琳河畔。"),
            Document("economy", "科埃瑞的主要出口产品是铜，货币是金币。"),
            Document("cat", "我的猫很可爱。"),
        ]
    )
    index.commit()
    assert _search(index, "科埃瑞的首都是哪里？")[0] == "capital"
    assert _search(index, "主要出口")[0] == "economy"
    assert _search(index, "猫") == ["cat"]  # a one-character query matches through the unigram


def test_mixed_zh_en_folder_gets_bm25_hits_with_default_settings(tmp_path: Path) -> None:
    (tmp_path / "zh.md").write_text("# 数据分析\n\n我们使用Python进行数据分析和可视化。", encoding="utf-8")
    (tmp_path / "en.md").write_text("# Vaccines\n\nCOVID-19 vaccines reduce hospital admissions.", encoding="utf-8")
    (tmp_path / "ja.txt").write_text("東京タワーは東京の観光名所です。", encoding="utf-8")
    (tmp_path / "ko.txt").write_text("서울은 한국의 수도입니다.", encoding="utf-8")
    loaded = load_folder(tmp_path)
    assert not loaded.errors
    index = Index.create(None, IndexSettings())
    index.add(loaded.documents)
    index.commit()
    ids = {doc.source.rsplit("/", 1)[-1]: doc.id for doc in loaded.documents}
    assert _search(index, "数据分析")[0] == ids["zh.md"]
    assert _search(index, "python")[0] == ids["zh.md"]  # the English word inside Chinese text
    assert _search(index, "vaccine")[0] == ids["en.md"]  # stemmed as before
    assert _search(index, "東京タワー")[0] == ids["ja.txt"]
    assert _search(index, "한국 수도")[0] == ids["ko.txt"]


def test_word_tokens_found_nothing_in_chinese_text() -> None:
    # What the default did before: a Han run is one token, so a query that is part of it misses.
    index = Index.create(None, IndexSettings(analyzer=WORD_ENGLISH))
    index.add([Document("capital", "科埃瑞的首都是凯米恩。")])
    index.commit()
    assert _search(index, "首都") == []


def test_cjk_text_analysis_is_deterministic() -> None:
    rng = random.Random(7)
    pool = "中文检索数据分析すしカタカナ학교에서 dogs running 。、"
    texts = ["".join(rng.choice(pool) for _ in range(40)) for _ in range(50)]
    fresh = Analyzer.from_dict(get_analyzer("english").to_dict())
    assert [get_analyzer("english")(t) for t in texts] == fresh.analyze_many(texts)
