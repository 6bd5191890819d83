"""``ragline mcp`` driven by the MCP SDK's own client: ``stdio_client`` spawns ``python -m ragline mcp``.

The index holds an HR-only document (``acl: [hr]``) with a word no other document has ("zorbquist")
and a document for everyone (``acl: [all]``). The server acts as a principal in ``all`` only, through
each of the three ways of naming one (``--groups``, ``--principals --as``, ``--keys``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

import ragline  # noqa: E402
from ragline.cli import main  # noqa: E402
from ragline.server.keys import add_key  # noqa: E402

from .conftest import free_port  # noqa: E402

pytestmark = pytest.mark.slow  # each test starts a server process (seconds)

SECRET = "zorbquist"  # only in the HR document
SRC = str(Path(ragline.__file__).resolve().parents[1])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mcp")
    docs = root / "docs"
    docs.mkdir()
    (docs / "pay.md").write_text(
        f"---\nacl: [hr]\n---\n# Pay\n\nBand 4 salaries follow the {SECRET} pay table: 80k to 95k a year.\n"
    )
    (docs / "meals.md").write_text(
        "---\nacl: [all]\n---\n# Meals\n\nBand 4 staff get 70 dollars a day for meals on travel.\n"
    )
    index = root / "idx"
    assert main(["index", str(docs), "--index", str(index), "--embedder", "none"]) == 0
    people = root / "people.toml"
    people.write_text('[users]\nbob = ["all"]\nhanna = ["all", "hr"]\n')
    return {"root": root, "index": index, "people": people}


def run_session(
    world: dict[str, Path],
    who: list[str],
    body: Callable[[ClientSession], Awaitable[Any]],
    env: dict | None = None,
    reader: str = "extractive",
) -> Any:
    """Spawn ``ragline mcp`` over the test index acting as ``who``, and run ``body`` in one client session."""
    environ = {"PYTHONPATH": SRC, **{k: os.environ[k] for k in ("RAGLINE_CACHE",) if k in os.environ}, **(env or {})}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragline", "mcp", "--index", str(world["index"]), "--reader", reader, *who],
        env=environ,
    )

    async def go() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)

    return anyio.run(go)


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def test_lists_the_four_tools_with_json_schemas(world) -> None:
    """The tools and their argument schemas (planted fault: `lookup` unregistered -> the set differs)."""

    async def body(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {t.name: t for t in run_session(world, ["--groups", "all"], body)}
    assert set(tools) == {"search", "ask", "lookup", "status"}
    assert tools["search"].input_schema["required"] == ["query"]
    assert set(tools["search"].input_schema["properties"]) == {"query", "k"}
    assert tools["ask"].input_schema["required"] == ["question"]
    assert tools["lookup"].input_schema["required"] == ["doc_id"]


@pytest.mark.parametrize("who", ["groups", "principals", "keys"])
def test_search_and_ask_never_return_hr_text_to_a_principal_without_hr(world, who: str) -> None:
    """A principal in `all` only gets the meals document and never the HR word, by search or ask, for each way
    of naming it (planted fault: `search` and `ask` called the engine as the unrestricted principal -> the HR
    word came back; a second planted fault: `--keys` resolved to the file's first key, hanna -> it came back)."""
    env = None
    if who == "groups":
        flags = ["--groups", "all"]
    elif who == "principals":
        flags = ["--principals", str(world["people"]), "--as", "bob"]
    else:
        keys = world["root"] / f"keys-{who}.json"
        add_key(keys, "hanna", ["all", "hr"])
        env = {"RAGLINE_API_KEY": add_key(keys, "bob", ["all"])}
        flags = ["--keys", str(keys)]

    async def body(session: ClientSession) -> Any:
        # the HR document is the best match for both without the filter (the control test below)
        found = await session.call_tool("search", {"query": "band 4 salaries pay table", "k": 5})
        answered = await session.call_tool("ask", {"question": "What are band 4 salaries on the pay table?"})
        return found, answered

    found, answered = run_session(world, flags, body, env)
    assert not found.is_error and not answered.is_error, (text_of(found), text_of(answered))
    hits = json.loads(text_of(found))["hits"]
    assert {h["doc_id"] for h in hits} == {"meals"}
    for result in (found, answered):
        assert SECRET not in text_of(result) and "80k" not in text_of(result)
        assert SECRET not in json.dumps(result.structured_content)
    assert all(s["doc_id"] == "meals" for s in json.loads(text_of(answered))["sources"])


def test_a_principal_with_hr_does_get_hr_text(world) -> None:
    """The control of the test above: the same question as hanna (all, hr) gets the HR word, so its absence
    for bob is the filter's doing (planted fault: the fixture's HR document not indexed -> fails)."""

    async def body(session: ClientSession) -> Any:
        return await session.call_tool("ask", {"question": "What are band 4 salaries on the pay table?"})

    answered = run_session(world, ["--principals", str(world["people"]), "--as", "hanna"], body)
    assert SECRET in text_of(answered)


def test_lookup_of_a_hidden_document_reads_as_an_absent_one(world) -> None:
    """`lookup` (and the document resource) of the HR document as bob answer exactly as a document that does
    not exist; the meals document opens, its text once (planted faults: lookup, then the resource, read
    the document as the unrestricted principal -> the HR text came back, the resource read as "read")."""

    async def body(session: ClientSession) -> Any:
        out = [await session.call_tool("lookup", {"doc_id": d}) for d in ("pay", "nosuchdoc", "meals")]
        opened = await session.read_resource("ragline://documents/meals")
        resources = [opened.contents[0].text]
        for d in ("pay", "nosuchdoc"):
            try:
                await session.read_resource(f"ragline://documents/{d}")
                resources.append("read")
            except mcp.MCPError as error:
                resources.append(str(error).replace(d, "ID"))
        return out, resources

    (hidden, absent, visible), resources = run_session(world, ["--groups", "all"], body)
    assert hidden.is_error and absent.is_error
    assert text_of(hidden).replace("pay", "ID") == text_of(absent).replace("nosuchdoc", "ID")
    assert SECRET not in text_of(hidden)
    assert not visible.is_error and "70 dollars" in text_of(visible)
    assert resources[0].count("70 dollars") == 1
    assert resources[1] == resources[2] != "read"


def test_bad_arguments_are_tool_errors_and_the_session_goes_on(world) -> None:
    """A missing, empty or mistyped argument is a tool result with isError and a message naming the field;
    the same session then answers a good call (planted fault: no minimum length on `query` -> the empty
    query came back as a success)."""

    async def body(session: ClientSession) -> Any:
        bad = [
            await session.call_tool("search", {}),
            await session.call_tool("search", {"query": ""}),
            await session.call_tool("search", {"query": "meals", "k": "many"}),
            await session.call_tool("ask", {"question": 42}),
        ]
        return bad, await session.call_tool("search", {"query": "meals"})

    bad, good = run_session(world, ["--groups", "all"], body)
    for result, field in zip(bad, ("query", "query", "k", "question"), strict=True):
        assert result.is_error, text_of(result)
        assert field in text_of(result)
    assert not good.is_error and json.loads(text_of(good))["hits"][0]["doc_id"] == "meals"


def test_a_ragline_error_is_a_tool_error_and_the_session_goes_on(world) -> None:
    """A pipeline without a reader asked a question: the engine's ConfigError comes back as a tool error with its
    message, and `search` still answers (planted fault: `ask` let RaglineError through -> the SDK's generic
    "Error executing tool" text without the ragline message)."""

    async def body(session: ClientSession) -> Any:
        return await session.call_tool("ask", {"question": "meals?"}), await session.call_tool(
            "search", {"query": "meals"}
        )

    asked, found = run_session(world, ["--groups", "all"], body, reader="none")
    assert asked.is_error and "ConfigError: this pipeline has no reader" in text_of(asked), text_of(asked)
    assert not found.is_error and json.loads(text_of(found))["hits"][0]["doc_id"] == "meals"


def test_without_a_principal_it_refuses_to_start(world, capsys) -> None:
    """No --groups, --as or --keys: a clear error, no unrestricted server (planted fault: the ANYONE check
    removed -> the command went on to serve)."""
    assert main(["mcp", "--index", str(world["index"])]) == 2
    assert "acts as one principal" in capsys.readouterr().err


def test_streamable_http_serves_the_same_tools_under_the_same_filter(world) -> None:
    """Over `--transport streamable-http` the SDK's HTTP client searches as bob and gets the meals document,
    not the HR one (planted fault: `search` called the engine as the unrestricted principal -> HR came back)."""
    port = free_port()
    args = ["--index", str(world["index"]), "--reader", "extractive", "--groups", "all"]
    server = subprocess.Popen(
        [sys.executable, "-m", "ragline", "mcp", *args, "--transport", "streamable-http", "--port", str(port)],
        env={**os.environ, "PYTHONPATH": SRC},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    async def go() -> Any:
        for _ in range(600):  # until the port accepts (a bounded wait for start-up, not a timing assertion)
            try:
                await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                break
            except OSError:
                await anyio.sleep(0.05)
        async with (
            streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool("search", {"query": "band 4 salaries pay table"})

    try:
        found = anyio.run(go)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert not found.is_error, text_of(found)
    assert {h["doc_id"] for h in json.loads(text_of(found))["hits"]} == {"meals"}
