from __future__ import annotations

from pathlib import Path

import pytest

from llm_fakes import FakeLLM
from ragline.errors import ConfigError
from ragline.ingest.chunkers import build_chunker
from ragline.ingest.context import build_contextualizer
from ragline.ingest.llm_context import LLMContextualizer, fit_document, tidy
from ragline.models.llm import CachedLLM, LLMResponseCache
from ragline.types import Document

POLICY = """# Travel Policy

## Receipts

Submit receipts within 30 days of the trip. A card slip is not a receipt.

## Limits

Flights shorter than 6 hours are booked in economy class.
"""


def context_llm(n_ctx: int = 4096) -> FakeLLM:
    """Answers with the call's number, so that each context is recognisable."""
    fake = FakeLLM(lambda *request: f"  Context\n number {len(fake.calls)}. ", n_ctx=n_ctx)
    return fake


@pytest.fixture(autouse=True)
def cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGLINE_CACHE", str(tmp_path / "cache"))


def policy_and_chunks(size: int = 12) -> tuple[Document, list[Document]]:
    document = Document("travel", POLICY, "Travel Policy")
    return document, build_chunker(f"fixed:size={size}").chunk(document)


def test_prompt_puts_the_whole_document_before_the_chunk() -> None:
    fake = context_llm()
    document, chunks = policy_and_chunks()
    LLMContextualizer(fake).contextualize(document, chunks)
    assert len(fake.calls) == len(chunks) > 1
    for messages, chunk in zip(fake.calls, chunks):
        [message] = messages
        assert message["role"] == "user"
        prompt = message["content"]
        assert prompt.startswith(f"<document>\n{POLICY}\n</document>\n")
        assert prompt.index("</document>") < prompt.index(f"<chunk>\n{chunk.text}\n</chunk>")
    # The document part is a prefix shared by all the document's chunks (what a prompt cache reuses).
    prefixes = {m[0]["content"].split("</document>")[0] for m in fake.calls}
    assert len(prefixes) == 1

    assert "Do not repeat these instructions." in fake.calls[0][0]["content"]  # the default, for small models
    LLMContextualizer(fake, prompt="anthropic").contextualize(document, chunks[:1])
    anthropic = fake.calls[-1][0]["content"]
    assert anthropic.startswith(f"<document>\n{POLICY}\n</document>\n")
    assert anthropic.endswith("Answer only with the succinct context and nothing else.")


def test_index_text_is_the_context_then_the_chunk_and_text_is_unchanged() -> None:
    document, chunks = policy_and_chunks()
    out, vectors = LLMContextualizer(context_llm()).contextualize(document, chunks)
    assert vectors is None
    assert [c.text for c in out] == [c.text for c in chunks]
    assert [c.id for c in out] == [c.id for c in chunks]
    assert [c.index_text for c in out] == [f"Context number {i}. {c.text}" for i, c in enumerate(chunks, 1)]

    with_breadcrumb, _ = LLMContextualizer(context_llm(), breadcrumb=True).contextualize(document, chunks)
    assert with_breadcrumb[-1].index_text == f"[Travel Policy > Limits] Context number {len(chunks)}. {chunks[-1].text}"


def test_contexts_are_cached_on_disk_across_instances() -> None:
    document, chunks = policy_and_chunks()
    first_llm, second_llm = context_llm(), context_llm()
    first, _ = LLMContextualizer(first_llm).contextualize(document, chunks)
    second, _ = LLMContextualizer(second_llm).contextualize(document, chunks)  # a new cache object, same file
    assert len(first_llm.calls) == len(chunks)
    assert second_llm.calls == []
    assert [c.index_text for c in second] == [c.index_text for c in first]
    assert LLMResponseCache().count("fake-llm@1") == len(chunks)

    changed = Document("travel", POLICY.replace("30 days", "45 days"), "Travel Policy")
    LLMContextualizer(second_llm).contextualize(changed, build_chunker("fixed:size=12").chunk(changed))
    assert len(second_llm.calls) == len(chunks)  # another document text: every context asked again


def test_a_long_document_is_cut_around_the_chunk_which_stays_whole() -> None:
    text = " ".join(f"w{i:04d}" for i in range(2000))  # equal words: centred in characters is in words
    document = Document("long", text, "Long Title")
    chunks = build_chunker("fixed:size=50").chunk(document)
    middle = chunks[20]
    fake = context_llm(n_ctx=400)
    out, _ = LLMContextualizer(fake, max_tokens=40).contextualize(document, [middle])
    prompt = fake.calls[0][0]["content"]
    excerpt = prompt.split("<document>\n")[1].split("\n</document>")[0]
    assert fake.count_tokens(prompt) <= 400 - 40
    assert excerpt.startswith("Long Title\n[…]\nw") and excerpt.endswith("\n[…]")
    assert middle.text in excerpt
    before, after = excerpt.split(middle.text)
    assert abs(len(before.split()[3:]) - len(after.split()[:-1])) <= 1  # the window is centred on the chunk
    assert out[0].text == middle.text

    # A chunk at the start gets its window's unused half after it; a budget below the chunk gives the chunk.
    assert fit_document(document, chunks[0], fake, 100).startswith("w0000 w0001 ")
    assert fit_document(document, middle, fake, 10) == f"Long Title\n[…]\n{middle.text}\n[…]"
    assert fit_document(document, middle, fake, 5000) == text


def test_specs() -> None:
    contextualizer = build_contextualizer("llm:model=local:/models/a-b.gguf,prompt=small,max_tokens=32,prompt_cache=1")
    assert isinstance(contextualizer, LLMContextualizer)
    assert contextualizer.config() == {
        "llm": "local:/models/a-b.gguf",  # verbatim, though parse_spec reads a/b as a list
        "prompt": "small",
        "max_tokens": 32,
        "prompt_cache": True,
        "breadcrumb": False,
    }
    default = build_contextualizer("llm")
    assert isinstance(default, LLMContextualizer)
    assert default.config() == {
        "llm": "local:qwen2.5-coder-0.5b",
        "prompt": "small",
        "max_tokens": 64,
        "prompt_cache": False,
        "breadcrumb": False,
    }
    with pytest.raises(ConfigError, match="unknown prompt"):
        build_contextualizer("llm:prompt=long")
    with pytest.raises(ConfigError, match="unknown option"):
        build_contextualizer("llm:temperature=1")
    with pytest.raises(ConfigError, match="whole number"):
        build_contextualizer("llm:max_tokens=many")


def test_a_given_cached_llm_is_not_wrapped_twice() -> None:
    cached = CachedLLM(context_llm())
    assert LLMContextualizer(cached).llm is cached


@pytest.mark.models
def test_smollm2_writes_a_context_for_each_chunk() -> None:
    document = Document("travel", POLICY, "Travel Policy")
    chunks = build_chunker("fixed:size=20").chunk(document)
    assert len(chunks) == 2
    contextualizer = build_contextualizer("llm:model=local:smollm2-135m,max_tokens=24")
    try:
        out, _ = contextualizer.contextualize(document, chunks)
        again, _ = contextualizer.contextualize(document, chunks)
        llm = contextualizer.llm
        assert (llm.misses, llm.hits) == (2, 2)
    finally:
        contextualizer.close()
    for chunk, original in zip(out, chunks):
        assert chunk.text == original.text
        assert chunk.index_text.endswith(" " + original.text)
        context = chunk.index_text[: -len(original.text) - 1]
        assert context.strip() and "\n" not in context
    assert [c.index_text for c in again] == [c.index_text for c in out]


def test_tidy_makes_one_line_and_drops_a_sentence_cut_off_by_max_tokens() -> None:
    assert tidy("  The travel policy.\nIt covers fares and") == "The travel policy."
    assert tidy("It covers fares and") == "It covers fares and"  # nothing whole to keep: keep what there is
    assert tidy("Receipts (v5).  Limits apply! ") == "Receipts (v5). Limits apply!"
    assert tidy("") == ""
