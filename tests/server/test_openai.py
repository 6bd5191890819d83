"""The official ``openai`` client against /v1/chat/completions: a cited answer, whole and streamed."""

from __future__ import annotations

import pytest

from .conftest import Server

openai = pytest.importorskip("openai")


def answered_question(served: Server) -> str:
    """A permission question the HR key's pipeline answers (found through the API, not written down)."""
    client = served.client("hr")
    for q in served.corpus.questions:
        asked = q.type == "permission" and "hr" in q.user_groups
        if asked and not client.post("/v1/ask", json={"question": q.text, "stream": False}).json()["abstained"]:
            return q.text
    pytest.fail("no permission question answered for the HR key")


def test_models_lists_ragline(served: Server) -> None:
    client = openai.OpenAI(base_url=served.url + "/v1", api_key=served.keys["employee"])
    assert [m.id for m in client.models.list()] == ["ragline"]


def test_the_openai_client_gets_a_cited_answer(served: Server) -> None:
    question = answered_question(served)
    client = openai.OpenAI(base_url=served.url + "/v1", api_key=served.keys["hr"])
    reply = client.chat.completions.create(
        model="any-name", messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": question}]
    )
    text = reply.choices[0].message.content
    extension = reply.model_extra["ragline"]
    assert extension["citations"] and not extension["abstained"]
    assert extension["answer"] in text and "Sources:\n[" in text
    assert extension["citations"][0]["doc_id"] in text


def test_the_openai_client_streams_a_cited_answer(served: Server) -> None:
    question = answered_question(served)
    client = openai.OpenAI(base_url=served.url + "/v1", api_key=served.keys["hr"])
    stream = client.chat.completions.create(model="ragline", messages=[{"role": "user", "content": question}],
                                            stream=True)  # fmt: skip
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"
    extension = chunks[-1].model_extra["ragline"]
    assert extension["answer"] in text and extension["citations"] and "Sources:" in text


def test_a_key_without_the_group_gets_no_restricted_answer(served: Server) -> None:
    question = answered_question(served)
    hr_answer = served.client("hr").post("/v1/ask", json={"question": question, "stream": False}).json()["answer"]
    client = openai.OpenAI(base_url=served.url + "/v1", api_key=served.keys["employee"])
    reply = client.chat.completions.create(model="ragline", messages=[{"role": "user", "content": question}])
    assert hr_answer not in reply.choices[0].message.content
    assert reply.model_extra["ragline"]["abstained"]


def test_a_wrong_key_is_refused(served: Server) -> None:
    client = openai.OpenAI(base_url=served.url + "/v1", api_key="rlk_wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="ragline", messages=[{"role": "user", "content": "hello"}])
