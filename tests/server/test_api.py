"""The HTTP API against a real server: keys, ACL from the key, streaming, documents, limits, logs, OpenAI."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from ragline.server.keys import read_keys, revoke_key
from ragline.server.shapes import ServerSettings

from .conftest import Server, facilities_workbook, make_server

OPEN = {("GET", "/health")}


def permission_questions(served: Server) -> list:
    return [q for q in served.corpus.questions if q.type == "permission" and "hr" in q.user_groups]


def sse_events(text: str) -> list[tuple[str, dict]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_every_endpoint_but_health_rejects_a_missing_or_wrong_key(served: Server) -> None:
    spec = httpx.get(served.url + "/openapi.json").json()
    routes = [(m.upper(), p) for p, item in spec["paths"].items() for m in item]
    assert len(routes) >= 10
    for method, path in routes:
        url = path.replace("{doc_id}", "hr-salary-bands").replace("{run_id}", "x")
        for headers in ({}, {"Authorization": "Bearer rlk_wrong"}, {"X-API-Key": "nope"}):
            response = httpx.request(method, served.url + url, headers=headers, json={})
            if (method, path) in OPEN:
                assert response.status_code == 200
            else:
                assert response.status_code == 401, (method, path, headers, response.text)
                assert "ragline keys add" in response.json()["error"]["message"]


def test_the_acl_comes_from_the_key_and_a_request_filter_cannot_widen_it(served: Server) -> None:
    questions = permission_questions(served)
    hr, employee = served.client("hr"), served.client("employee")
    answered = 0
    for q in questions:
        as_hr = hr.post("/v1/ask", json={"question": q.text, "stream": False}).json()
        answered += not as_hr["abstained"]
        forbidden = {
            d for e in served.corpus.questions if e.text == q.text and e.expected_abstain for d in e.forbidden_doc_ids
        }
        assert forbidden
        for flt in (None, "acl in [hr]", "acl = hr or acl = all"):
            as_employee = employee.post("/v1/ask", json={"question": q.text, "stream": False, "filter": flt}).json()
            assert as_employee["abstained"], q.text
            assert q.answer not in json.dumps(as_employee)
            assert not forbidden & {s["doc_id"] for s in as_employee["sources"]}
        hits = employee.post("/v1/search", json={"query": q.text, "filter": "acl in [hr]"}).json()["hits"]
        assert hits == []
    assert answered >= 1  # the HR key does read the restricted pages


def test_ask_streams_pieces_then_the_answer_with_citations_and_sources(served: Server) -> None:
    hr = served.client("hr")
    for q in permission_questions(served):
        with hr.stream("POST", "/v1/ask", json={"question": q.text}) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            events = sse_events(response.read().decode())
        final = dict(events)["answer"]
        if final["abstained"]:
            continue
        kinds = [e for e, _ in events]
        assert kinds[0] == "piece" and kinds[-2:] == ["answer", "done"]
        assert "".join(d["text"] for e, d in events if e == "piece") == final["answer"]
        assert final["citations"] and final["sources"][0]["retriever"] == "bm25"
        cited = final["citations"][0]
        doc = hr.get(f"/v1/documents/{cited['doc_id']}").json()
        assert cited["chunk_id"] in [c["chunk_id"] for c in doc["chunks"]]
        return
    pytest.fail("no permission question answered for the HR key")


def test_a_restricted_document_is_not_found_for_a_key_without_its_group(served: Server) -> None:
    assert served.client("employee").get("/v1/documents/hr-salary-bands").status_code == 404
    assert served.client("hr").get("/v1/documents/hr-salary-bands").status_code == 200
    assert served.client("employee").get("/v1/documents/no-such-doc").status_code == 404


def test_bad_input_is_a_4xx_that_names_the_field(served: Server) -> None:
    client = served.client("employee")
    bad_filter = client.post("/v1/search", json={"query": "pay", "filter": "year >>= 3"})
    assert bad_filter.status_code == 400 and "filter" in bad_filter.json()["error"]["message"]
    too_many = client.post("/v1/search", json={"query": "pay", "k": 0})
    assert too_many.status_code == 422 and "k" in too_many.json()["error"]["message"]
    big = client.post("/v1/search", content=b"x" * (11 * 1024 * 1024), headers={"Content-Type": "application/json"})
    assert big.status_code == 413


def test_indexing_needs_an_admin_key_and_the_new_document_is_served(served: Server, tmp_path: Path) -> None:
    text = b"# Bicycle Storage\n\nBicycles are stored in the basement cage at the Quillon depot."
    files = {"files": ("bicycles.md", text, "text/markdown")}
    assert served.client("hr").post("/v1/index/upload", files=files).status_code == 403
    before = served.client("admin").get("/v1/status").json()
    done = served.client("admin").post("/v1/index/upload", files=files)
    assert done.status_code == 200, done.text
    assert done.json()["added"] >= 1 and done.json()["generation"] == before["generation"] + 1
    hits = served.client("employee").post("/v1/search", json={"query": "bicycle basement cage"}).json()["hits"]
    # an uploaded file without an acl is hidden from callers with groups (the index's default_acl is None)
    assert all(h["doc_id"] != "bicycles.md" for h in hits)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "lockers.md").write_text("---\nacl: [all]\n---\n# Lockers\n\nLockers are in the Quillon depot lobby.\n")
    synced = served.client("admin").post("/v1/index/sync", json={"folder": str(folder), "prune": False})
    assert synced.status_code == 200, synced.text
    hits = served.client("employee").post("/v1/search", json={"query": "lockers depot lobby"}).json()["hits"]
    assert hits and hits[0]["doc_id"].startswith("lockers")
    assert served.client("admin").post("/v1/index/sync", json={"folder": "relative/x"}).status_code == 404


def test_status_reports_documents_generation_and_the_principal(served: Server) -> None:
    status = served.client("employee").get("/v1/status").json()
    assert status["documents"] > 0 and status["generation"] >= 1 and "settings" in status
    assert status["principal"] == {"name": "erin", "groups": ["all"]} and status["admin"] is False
    assert status["stale_files"] is None  # no freshness check installed in this server


def test_a_revoked_key_stops_working_at_once(served: Server) -> None:
    from ragline.server.keys import add_key

    key = add_key(served.keys_file, "temp", ["all"])
    client = httpx.Client(base_url=served.url, headers={"X-API-Key": key})
    assert client.get("/v1/status").status_code == 200
    revoke_key(served.keys_file, "temp")
    assert client.get("/v1/status").status_code == 401


def test_the_keys_file_holds_no_key(served: Server) -> None:
    text = served.keys_file.read_text()
    assert all(key not in text for key in served.keys.values())
    assert {k.name for k in read_keys(served.keys_file)} >= {"erin", "harper", "ada"}


def test_the_rate_limit_answers_429_with_retry_after(tmp_path: Path) -> None:
    handle, server, thread = make_server(tmp_path, ServerSettings(rate_per_minute=3))
    try:
        client = handle.client("employee")
        codes = [client.get("/v1/status").status_code for _ in range(5)]
        assert codes[:3] == [200, 200, 200] and 429 in codes[3:]
        limited = client.get("/v1/status")
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert handle.client("hr").get("/v1/status").status_code == 200  # another key has its own budget
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_logs_are_json_lines_without_question_or_answer_text(served: Server) -> None:
    import io

    from ragline.server.logs import configure

    buffer = io.StringIO()
    configure("info", buffer)
    try:
        q = permission_questions(served)[0]
        served.client("hr").post("/v1/ask", json={"question": q.text, "stream": False})
        served.client("hr").get("/v1/documents/hr-salary-bands")
    finally:
        configure("info")
    err = buffer.getvalue()
    lines = [json.loads(line) for line in err.splitlines()]
    assert any(line.get("route") == "/v1/ask" and line["key"] == "harper" for line in lines)
    assert any(line.get("route", "").startswith("/v1/documents/{doc_id") for line in lines)
    assert q.text not in err and q.answer not in err and "hr-salary-bands" not in err


def test_the_checked_in_openapi_spec_is_the_served_one(served: Server) -> None:
    checked_in = json.loads((Path(__file__).parents[2] / "docs" / "openapi.json").read_text())
    assert httpx.get(served.url + "/openapi.json").json() == checked_in, (
        "docs/openapi.json is out of date: regenerate it with `python -m ragline.server.spec > docs/openapi.json`"
    )


def test_a_cited_sheet_is_named_in_the_answer_its_sources_and_the_document(served: Server, tmp_path: Path) -> None:
    """The JSON of an answer from a workbook names the sheet (optional key ``sheet``), and so do the document's
    chunks the page opens. Planted fault checked: citations_json not adding the anchor (no "sheet" key)."""
    folder = facilities_workbook(tmp_path / "sheets")
    synced = served.client("admin").post("/v1/index/sync", json={"folder": str(folder), "prune": False})
    assert synced.status_code == 200, synced.text
    employee = served.client("employee")
    with employee.stream("POST", "/v1/ask", json={"question": "Who is the keeper of the lockers at Quillon?"}) as r:
        final = dict(sse_events(r.read().decode()))["answer"]
    assert final["answer"] == "Tamsin Reyes", final
    (citation,) = final["citations"]
    assert (citation["doc_id"], citation["sheet"]) == ("facilities", "Lockers")
    assert next(s for s in final["sources"] if s["n"] == citation["n"])["sheet"] == "Lockers"
    chunks = employee.get("/v1/documents/facilities").json()["chunks"]
    assert [c["sheet"] for c in chunks] == ["Notes", "Lockers"]


def test_ask_with_history_answers_the_standalone_question_as_the_caller(served: Server) -> None:
    """``history`` makes a follow-up a standalone question; the caller's groups still bound retrieval: an
    employee asking a follow-up about a restricted subject gets nothing from it. Planted faults checked:
    the route ignoring ``history`` (the follow-up is answered as written: no ``conversation``, other sources);
    ``prepare`` with no principal filter (the HR answer reaches the employee)."""
    hr = next(q for q in served.corpus.questions if q.type == "permission" and "hr" in q.user_groups)
    history = [{"role": "user", "content": hr.text}, {"role": "assistant", "content": "I don't know."}]
    follow_up = "And what about that band for a department manager?"
    restricted = {d.id for d in served.corpus.documents if "all" not in (d.metadata.get("acl") or [])}
    assert restricted
    for role in ("employee", "hr"):
        body = {"question": follow_up, "history": history, "stream": False}
        result = served.client(role).post("/v1/ask", json=body).json()
        assert result["conversation"]["message"] == follow_up
        assert "band" in result["conversation"]["question"]
        cited = {c["doc_id"] for c in result["citations"]}
        if role == "employee":
            assert not {s["doc_id"] for s in result["sources"]} & restricted and not cited & restricted
        else:
            assert {s["doc_id"] for s in result["sources"]} & restricted
