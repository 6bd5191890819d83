"""Chunker ``llm``: boundaries the model proposes between numbered sentences, a size cap, a fallback, the cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_fakes import FakeLLM
from ragline.components import names
from ragline.errors import ConfigError
from ragline.ingest.chunkers import build_chunker
from ragline.ingest.llm_chunker import LLMChunker
from ragline.models.llm import CachedLLM, LLMResponseCache
from ragline.types import Document

TEXT = (
    "# Grid report\n\n"
    "The Delta crew maintains SS-495. Its lead is Mara Quinn. She joined in 2019.\n\n"
    "## Outages\n\n"
    "A storm cut power in March. Repairs took two days. The cause was a fallen line."
)


@pytest.fixture(autouse=True)
def cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))


def chunker(reply, tmp_path: Path, **options) -> tuple[LLMChunker, FakeLLM]:
    fake = FakeLLM(reply, structured=True)
    return LLMChunker(CachedLLM(fake, LLMResponseCache(tmp_path)), **options), fake


def texts(c: LLMChunker, text: str = TEXT) -> list[str]:
    return [chunk.text for chunk in c.chunk(Document("doc", text, "Grid report", {"acl": ["all"]}))]


def test_chunks_begin_at_the_sentences_the_model_names(tmp_path: Path) -> None:
    """Sentences: 1 heading, 2-4 crew, 5 heading, 6-8 outage. The model says 3 and 6: chunks begin at sentence 3
    and, since a heading never ends a chunk, at the "## Outages" heading (5), not at 6. Planted faults checked:
    reading the numbers 0-based shifts every chunk by a sentence; dropping the heading rule leaves "## Outages"
    at the end of the second chunk; no ``maxItems`` cap lets the schema take all 8 numbers."""
    c, fake = chunker(lambda *a: json.dumps({"starts": [3, 6]}), tmp_path)
    assert texts(c) == [
        "# Grid report\n\nThe Delta crew maintains SS-495.",
        "Its lead is Mara Quinn. She joined in 2019.",
        "## Outages\n\nA storm cut power in March. Repairs took two days. The cause was a fallen line.",
    ]
    prompt = fake.calls[0][-1]["content"].splitlines()
    assert prompt[0] == "1. # Grid report" and prompt[2] == "3. Its lead is Mara Quinn." and len(prompt) == 8
    starts = fake.schemas[0]["properties"]["starts"]
    assert starts["items"]["maximum"] == 8
    assert starts["maxItems"] == 2  # one start per 3 sentences at most: the model cannot list every sentence


def test_a_malformed_reply_falls_back_to_sentence_packing_and_is_counted(tmp_path: Path) -> None:
    """A reply cut by the token limit is no JSON: the window is sentence-packed at the cap, whole sentences,
    and ``fallbacks`` counts it. Planted fault checked: letting the JSONReplyError through fails the chunking."""
    c, _ = chunker(lambda *a: '{"starts": [3, ', tmp_path, max_words=12)
    chunks = texts(c)
    assert "".join(chunks).replace("\n", "").replace(" ", "") == TEXT.replace("\n", "").replace(" ", "")
    assert all(len(chunk.split()) <= 12 for chunk in chunks) and len(chunks) > 1
    assert c.cost.fallbacks == 1 and c.cost.llm_calls == 1


def test_a_chunk_over_the_cap_is_cut_again_between_sentences(tmp_path: Path) -> None:
    """The model proposes no boundary: one 30-word chunk, over max_words=12, is sentence-packed.
    Planted fault checked: skipping the cap returns the whole text as one chunk."""
    c, _ = chunker(lambda *a: json.dumps({"starts": []}), tmp_path, max_words=12)
    chunks = texts(c)
    assert len(chunks) > 1 and all(len(chunk.split()) <= 12 for chunk in chunks)
    assert c.cost.fallbacks == 0


def test_long_documents_are_read_a_window_at_a_time(tmp_path: Path) -> None:
    """window=4 over 8 sentences: the first request shows sentences 1-4; the next starts at the last start the
    model proposed (3), so the topic running over the window's edge is judged again. Planted fault checked:
    starting the next window after the first one (at 5) shows "1. ## Outages" second."""
    c, fake = chunker(lambda *a: json.dumps({"starts": [3]}), tmp_path, window=4)
    texts(c)
    assert [call[-1]["content"].splitlines()[0] for call in fake.calls[:2]] == [
        "1. # Grid report",
        "1. Its lead is Mara Quinn.",
    ]


def test_cost_counts_model_and_cached_calls_and_tokens(tmp_path: Path) -> None:
    """A second pass over the same document is answered by the response cache: no model call, no new tokens.
    Planted fault checked: counting every call as a model call gives llm_calls 2."""
    c, fake = chunker(lambda *a: json.dumps({"starts": [3, 6]}), tmp_path)
    texts(c)
    first = c.cost.to_dict()
    assert first["llm_calls"] == 1 and first["cached_calls"] == 0 and first["prompt_tokens"] > 20
    assert first["reply_tokens"] > 0
    texts(c)
    assert c.cost.llm_calls == 1 and c.cost.cached_calls == 1 and c.cost.prompt_tokens == first["prompt_tokens"]
    assert len(fake.calls) == 1


def test_registered_and_built_from_a_spec() -> None:
    assert "llm" in names("chunker")
    built = build_chunker("llm:model=local:smollm2-135m,max_words=80,window=20")
    assert (
        isinstance(built, LLMChunker)
        and built.spec == "llm:model=local:smollm2-135m,max_words=80,window=20,max_tokens=96,spacing=3"
    )
    assert built._llm is None  # nothing loaded until the first document
    with pytest.raises(ConfigError, match="max_words"):
        build_chunker("llm:max_words=1")
