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


def follow_up_conversation(served: Server) -> tuple[str, str, set[str]]:
    """A pair written by the conversation evaluation's generator on the served world (the follow-up omits what
    the first turn named) whose first turn and whose follow-up, asked whole, the server answers from a gold
    document."""
    from ragline.eval.conversation import follow_ups

    client = served.client("employee")
    for conversation in follow_ups(served.corpus.questions):
        first, later = conversation.turns[:2]
        if conversation.kind != "pair" or later.question.user_groups != ["all"]:
            continue
        answered = [client.post("/v1/ask", json={"question": t.question.text, "stream": False}).json()
                    for t in (first, later)]  # fmt: skip
        if all(not a["abstained"] and {c["doc_id"] for c in a["citations"]} & set(t.question.gold_doc_ids)
               for a, t in zip(answered, (first, later), strict=True)):  # fmt: skip
            return first.text, later.text, set(later.question.gold_doc_ids)
    pytest.fail("no follow-up pair whose whole question the server answers")


def test_a_three_message_conversation_is_answered_from_the_document_the_follow_up_needs(served: Server) -> None:
    """The follow-up ("... that policy?") alone names no document; with the first turn the answer cites the
    one it needs, and the extension says which standalone question was asked. Planted fault checked:
    ``conversation_of`` keeping only the last message (the answer cites another policy's document)."""
    first, follow_up, gold = follow_up_conversation(served)
    client = openai.OpenAI(base_url=served.url + "/v1", api_key=served.keys["employee"])
    opening = client.chat.completions.create(model="ragline", messages=[{"role": "user", "content": first}])
    messages = [
        {"role": "user", "content": first},
        {"role": "assistant", "content": opening.choices[0].message.content},
        {"role": "user", "content": follow_up},
    ]
    reply = client.chat.completions.create(model="ragline", messages=messages)
    extension = reply.model_extra["ragline"]
    assert not extension["abstained"]
    assert {c["doc_id"] for c in extension["citations"]} & gold
    assert extension["conversation"]["message"] == follow_up
    assert extension["conversation"]["question"] != follow_up
    streamed = list(client.chat.completions.create(model="ragline", messages=messages, stream=True))
    assert {c["doc_id"] for c in streamed[-1].model_extra["ragline"]["citations"]} & gold
    alone = client.chat.completions.create(model="ragline", messages=[{"role": "user", "content": follow_up}])
    assert not {c["doc_id"] for c in alone.model_extra["ragline"]["citations"]} & gold  # the history was needed
