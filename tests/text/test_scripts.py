"""CJK detection and the warning for CJK documents under an English-only embedder."""

from __future__ import annotations

import pytest

from ragline.text.scripts import cjk_embedder_warning, english_only_embedder, has_cjk

ENGLISH = ["COVID-19 vaccines reduce hospital admissions.", "Café au lait, naïve résumé."]
CHINESE = "我们使用Python进行数据分析。"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", False),
        ("plain ASCII text", False),
        ("Ünïcödé, ελλάδα, Жизнь, عربي, हिन्दी, ภาษาไทย", False),
        ("。、・「」", False),  # CJK punctuation alone is no CJK text
        ("数据", True),
        ("ひらがな", True),
        ("カタカナ", True),
        ("한국어", True),
        ("text with one 字 inside", True),
        ("\U00020000", True),  # Extension B, outside the BMP
    ],
)
def test_has_cjk(text: str, expected: bool) -> None:
    assert has_cjk(text) is expected


@pytest.mark.parametrize(
    "name",
    ["minilm", "MiniLM", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "/models/all-MiniLM-L12-v2/"],
)
def test_minilm_family_is_english_only(name: str) -> None:
    assert english_only_embedder(name)


@pytest.mark.parametrize(
    "name",
    [None, "", "none", "multilingual-e5-small", "intfloat/multilingual-e5-base", "/models/bge-m3", "my-minilm-zh"],
)
def test_other_embedders_are_not_called_english_only(name: str | None) -> None:
    assert not english_only_embedder(name)


def test_warning_names_the_multilingual_embedder_and_counts_documents() -> None:
    warning = cjk_embedder_warning([*ENGLISH, CHINESE, "東京タワー"], "minilm")
    assert warning is not None
    assert "--embedder multilingual-e5-small" in warning
    assert "2 of 4 documents" in warning
    assert "'minilm'" in warning
    assert "slower" in warning  # why it is not switched silently


def test_half_width_kana_counts_as_cjk() -> None:
    # The analyzer normalizes (NFKC) before it looks for CJK, so the warning does too.
    assert cjk_embedder_warning(["ｶﾀｶﾅ"], "all-MiniLM-L6-v2") is not None


@pytest.mark.parametrize(
    ("texts", "embedder"),
    [
        (ENGLISH, "minilm"),  # no CJK text
        ([], "minilm"),
        ([CHINESE], "multilingual-e5-small"),  # a multilingual embedder
        ([CHINESE], None),  # BM25 only: the analyzer handles CJK
        ([CHINESE], "none"),
    ],
)
def test_no_warning(texts: list[str], embedder: str | None) -> None:
    assert cjk_embedder_warning(texts, embedder) is None


def test_texts_may_be_a_generator() -> None:
    assert cjk_embedder_warning((t for t in [CHINESE]), "minilm") is not None
