"""The local backend (llama.cpp in-process via xllamacpp) and the LLM specs of ``load_llm``.

Spec parsing runs without a model. The tests marked ``models`` load SmolLM2-135M (about a second) and keep
replies to a few tokens; the one marked ``slow`` too loads the default Qwen2.5-Coder-0.5B.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.errors import ConfigError, ModelError
from ragline.models.gguf import PACKAGED_GGUF
from ragline.models.llm import DEFAULT_LLM, LLM, HttpLLM, LocalLLM, load_llm

CAPITAL = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]


def test_openai_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with load_llm("openai:http://127.0.0.1:8080/v1?model=qwen&timeout=30&retries=0") as llm:
        assert isinstance(llm, HttpLLM)
        assert (llm.base_url, llm.model, llm.timeout_s, llm.retries) == ("http://127.0.0.1:8080/v1", "qwen", 30.0, 0)
        assert llm._client.headers["Authorization"] == "Bearer sk-test"
        assert llm.id == "openai:http://127.0.0.1:8080/v1?model=qwen"  # the key is never part of the id
    monkeypatch.delenv("OPENAI_API_KEY")
    with load_llm("openai:http://127.0.0.1:8080/v1") as llm:
        assert "Authorization" not in llm._client.headers


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("gpt-4", ConfigError, "unknown LLM spec"),
        ("local:", ConfigError, "unknown LLM spec"),
        ("openai:127.0.0.1:8080", ConfigError, "expected a URL"),
        ("openai:http://127.0.0.1:8080/v1?modle=x", ConfigError, "unknown field"),
        ("openai:http://127.0.0.1:8080/v1?timeout=soon", ConfigError, "soon"),
        ("local:llama-70b", ModelError, "packaged ones are qwen2.5-coder-0.5b, smollm2-135m"),
        ("local:/no/such/model.gguf", ModelError, "no GGUF model file"),
    ],
)
def test_bad_specs(spec: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        load_llm(spec)


def test_default_is_the_packaged_qwen() -> None:
    assert DEFAULT_LLM == "local:qwen2.5-coder-0.5b" and "qwen2.5-coder-0.5b" in PACKAGED_GGUF


def test_a_file_that_is_no_model_is_a_model_error(tmp_path: Path) -> None:
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ModelError, match="could not load"):
        LocalLLM(fake)
    with pytest.raises(ModelError, match="damaged"):
        LocalLLM(fake, expected_sha256="0" * 64)


@pytest.fixture
def smollm2() -> Iterator[LLM]:
    llm = load_llm("local:smollm2-135m", n_ctx=1024)
    try:
        yield llm
    finally:
        llm.close()


@pytest.mark.models
def test_local_answers_deterministically(smollm2: LLM) -> None:
    assert smollm2.id == f"smollm2-135m@sha256:{PACKAGED_GGUF['smollm2-135m'].sha256}"
    first = smollm2.chat(CAPITAL, max_tokens=8)
    assert "Paris" in first
    assert smollm2.chat(CAPITAL, max_tokens=8) == first
    assert "".join(smollm2.stream(CAPITAL, max_tokens=8)) == first
    assert smollm2.chat(CAPITAL, max_tokens=8, stop=["Paris"]) == first.split("Paris")[0]
    assert smollm2.count_tokens("hello world") == 2


@pytest.mark.models
def test_close_stops_the_server() -> None:
    llm = load_llm("local:smollm2-135m", n_ctx=256)
    assert isinstance(llm, LocalLLM)
    address = llm.address
    llm.close()
    llm.close()  # twice is fine
    with pytest.raises(ModelError, match="closed"):
        llm.chat(CAPITAL, max_tokens=2)
    probe = HttpLLM(f"{address}/v1", retries=0, timeout_s=2)
    with pytest.raises(ModelError, match="connection failed"):
        probe.chat(CAPITAL, max_tokens=2)
    probe.close()


@pytest.mark.models
@pytest.mark.slow
def test_packaged_qwen_joins_to_the_pinned_hash_and_answers(tmp_path: Path) -> None:
    # Joins the ~400 MB model into a temporary folder (2-4 s here), checks its hash independently of the
    # join's own check, loads it (~1 s) and asks for a few tokens. The file is deleted at the end rather
    # than left to pytest's temporary folders (which keep the last three runs).
    try:
        with load_llm("local:qwen2.5-coder-0.5b", models_dir=tmp_path, n_ctx=512) as llm:
            path = tmp_path / PACKAGED_GGUF["qwen2.5-coder-0.5b"].filename
            with path.open("rb") as file:
                assert hashlib.file_digest(file, "sha256").hexdigest() == PACKAGED_GGUF["qwen2.5-coder-0.5b"].sha256
            assert llm.id == f"qwen2.5-coder-0.5b@sha256:{PACKAGED_GGUF['qwen2.5-coder-0.5b'].sha256}"
            question = [{"role": "user", "content": "What is 2 + 2? Reply with the number only."}]
            assert "4" in llm.chat(question, max_tokens=4)
    finally:
        for leftover in tmp_path.iterdir():
            leftover.unlink()
