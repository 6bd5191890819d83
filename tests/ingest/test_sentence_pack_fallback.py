"""The default chunker on an install without the MiniLM tokenizer (no ``dense`` extra)."""

from __future__ import annotations

import pytest

from ragline.errors import ConfigError
from ragline.ingest import sentence_pack
from ragline.ingest.chunkers import build_chunker
from ragline.types import Document


def test_sentence_pack_counts_words_when_the_tokenizer_is_missing(monkeypatch) -> None:
    """Planted fault: ``_count`` without the fallback raised "unit=tokens needs the tokenizers package", so
    ``ragline index --embedder none`` failed on a core install (the wheel-install test caught it)."""

    def missing() -> None:
        raise ConfigError("unit=tokens needs the tokenizers package: pip install 'ragline[dense]'")

    monkeypatch.setattr(sentence_pack, "_minilm_tokenizer", missing)
    sentence_pack._tokenizer_available.cache_clear()
    try:
        text = " ".join(f"Sentence number {n} says one short thing." for n in range(60))
        chunker = build_chunker("sentence-pack:tokens=40,overlap=0")
        with pytest.warns(UserWarning, match="counts words"):
            chunks = chunker.chunk(Document("d", text, "D"))
        assert len(chunks) > 1
        assert all(len(c.text.split()) <= 40 for c in chunks)
        assert all(c.text.endswith(".") for c in chunks)  # whole sentences still
    finally:
        sentence_pack._tokenizer_available.cache_clear()
