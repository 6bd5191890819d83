"""OpenAI-compatible chat completions (``/v1/chat/completions``, ``/v1/models``) over the served pipeline.

The whole ``messages`` list is read: the last user message, condensed with the earlier user turns into a
standalone question (``ragline.answer.conversation``), is the question; the answer is RAG over the collection
as the key's principal (its filter inside every retrieval), and the extension field's ``conversation`` says
which question was asked.
Any model name is accepted (``/v1/models`` lists ``ragline``). The citations are in the message
(``[n]`` markers and a "Sources" list) and, structured, in a ``ragline`` extension field; a streamed
reply sends OpenAI's ``chat.completion.chunk`` events, the extension in the last one, then ``[DONE]``.
"""

# No `from __future__ import annotations`: FastAPI reads the dependency annotations (local to the
# app's maker) at definition time.
import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import FastAPI, HTTPException
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from ragline.server.engine import Engine
from ragline.server.shapes import MAX_QUESTION, ServerSettings, answer_json, error_json, in_thread

MODEL = "ragline"


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str = Field(max_length=50)
    text: str | None = Field(None, max_length=100_000)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list[ContentPart] | None = Field(None)


class ChatRequest(BaseModel):
    # Sampling settings of other servers (temperature, top_p, ...) are accepted and ignored.
    model_config = ConfigDict(extra="allow")
    model: str = Field(MODEL, max_length=200)
    messages: list[ChatMessage] = Field(min_length=1, max_length=200)
    stream: bool = False


def message_text(message: ChatMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(p.text or "" for p in message.content or [] if p.type == "text")


def conversation_of(request: ChatRequest) -> list[dict[str, str]]:
    """The user and assistant turns as text, up to the last user message (the question); 422 when there is none."""
    turns = [{"role": m.role, "content": message_text(m).strip()} for m in request.messages]
    turns = [t for t in turns if t["role"] in ("user", "assistant") and t["content"]]
    while turns and turns[-1]["role"] != "user":
        turns.pop()
    if not turns:
        raise HTTPException(422, "messages: no user message with text; the last user message is the question")
    if len(turns[-1]["content"]) > MAX_QUESTION:
        raise HTTPException(422, f"messages: the last user message is over {MAX_QUESTION} characters")
    return turns


def with_conversation(result: dict[str, Any], condensed: Any) -> dict[str, Any]:
    if condensed is not None:
        result["conversation"] = condensed.to_dict()
    return result


def sources_note(result: dict[str, Any]) -> str:
    """The cited sources as lines under the answer, for clients that show only the message."""
    if result["abstained"] or not result["citations"]:
        return ""
    lines = [f"[{c['n']}] {c['title'] or c['doc_id']} ({c['doc_id']})" for c in result["citations"]]
    return "\n\nSources:\n" + "\n".join(lines)


def add_openai_routes(app: FastAPI, engine: Engine, Key: Any, settings: ServerSettings) -> None:
    @app.get("/v1/models", tags=["openai"])
    def models(key: Key) -> dict[str, Any]:
        """The one model this server answers as (any name is accepted in a request)."""
        return {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "ragline"}]}

    @app.post("/v1/chat/completions", tags=["openai"], responses={200: {"content": {"text/event-stream": {}}}})
    async def chat(body: ChatRequest, key: Key) -> Any:
        """OpenAI chat completions: the conversation's last user message, condensed with the earlier turns into a
        standalone question, answered by RAG with citations."""
        turns = conversation_of(body)
        condensed = (
            await asyncio.wait_for(asyncio.to_thread(engine.standalone, turns), settings.timeout_s)
            if len(turns) > 1
            else None
        )
        question = condensed.question if condensed else turns[-1]["content"]
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())

        def make() -> Any:
            prepared = None if engine.agent else engine.prepare(key.principal, question)
            return engine.stream_answer(key.principal, question, prepared)

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }

        if not body.stream:
            result, text = None, ""
            async for kind, item in in_thread(make, settings.timeout_s):
                if kind == "error":
                    raise HTTPException(504 if isinstance(item, TimeoutError) else 400, error_json(item)["message"])
                if not isinstance(item, str):
                    result = with_conversation(answer_json(engine, *item), condensed)
                    text = result["answer"] or "The sources do not answer this question."
            assert result is not None
            return {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": body.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text + sources_note(result)},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                "ragline": result,
            }

        async def events() -> AsyncIterator[str]:
            import json

            def line(data: dict[str, Any]) -> str:
                return f"data: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"

            yield line(chunk({"role": "assistant", "content": ""}))
            said = False
            async for kind, item in in_thread(make, settings.timeout_s):
                if kind == "error":
                    yield line({"error": error_json(item)})
                    break
                if isinstance(item, str):
                    said = said or bool(item)
                    yield line(chunk({"content": item}))
                else:
                    result = with_conversation(answer_json(engine, *item), condensed)
                    tail = ("" if said else "The sources do not answer this question.") + sources_note(result)
                    if tail:
                        yield line(chunk({"content": tail}))
                    yield line(chunk({}, "stop", ragline=result))
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})
