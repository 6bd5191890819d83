"""The page in headless Chromium (Debian's, driven by Playwright): ask, watch the answer stream, open a citation.

Screenshots go to ``$RAGLINE_ARTIFACTS``, else ``tests/artifacts/``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .conftest import Server, facilities_workbook

playwright = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no chromium: `make setup` installs Debian's as root"),
]
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"]


def artifacts() -> Path:
    folder = Path(os.environ.get("RAGLINE_ARTIFACTS") or Path(__file__).parents[1] / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def log_in(page, served: Server, role: str) -> None:
    page.goto(served.url + "/")
    page.fill("#key", served.keys[role])
    page.click("#key-form button")
    page.wait_for_selector("#app:not([hidden])")


def ask_on_page(page, question: str) -> None:
    shown = int(page.get_attribute("#answer", "data-shown") or 0)
    page.fill("#question", question)
    page.click("#ask-form button")
    page.wait_for_selector(f"#answer[data-shown='{shown + 1}']")


def permission_pairs(served: Server) -> list[tuple[str, str]]:
    return [(q.text, q.answer) for q in served.corpus.questions if q.type == "permission" and "hr" in q.user_groups]


def test_ask_see_the_answer_stream_and_open_a_citation(served: Server, browser) -> None:
    page = browser.new_page()
    pieces = []
    page.on("response", lambda r: pieces.append(r.headers.get("content-type", "")) if "/v1/ask" in r.url else None)
    log_in(page, served, "hr")
    for pair in permission_pairs(served):
        ask_on_page(page, pair[0])
        if page.locator("#citations .cite").count():
            answer = pair[1]
            break
    else:
        pytest.fail("no permission question answered with a citation on the page")
    assert any(t.startswith("text/event-stream") for t in pieces)  # the page read the streamed answer
    assert answer in page.inner_text("#answer")
    assert page.locator("#sources tbody tr").count() >= 1 and "bm25" in page.inner_text("#sources")
    page.locator("#citations .cite").first.click()
    page.wait_for_selector("#doc-view[open] .chunk.cited mark")
    assert answer in page.inner_text("#doc-view .chunk.cited mark")
    page.screenshot(path=str(artifacts() / "answer-and-citation.png"), full_page=True)


def test_a_user_without_the_group_never_sees_the_restricted_answer(served: Server, browser) -> None:
    page = browser.new_page()
    log_in(page, served, "employee")
    for question, answer in permission_pairs(served):
        ask_on_page(page, question)
        assert answer not in page.content()
        assert "do not answer" in page.inner_text("#answer")
    page.screenshot(path=str(artifacts() / "restricted-question-as-employee.png"), full_page=True)


def test_the_page_asks_for_a_key_and_refuses_a_wrong_one(served: Server, browser) -> None:
    page = browser.new_page()
    page.goto(served.url + "/")
    assert page.is_visible("#key") and not page.is_visible("#question")
    page.fill("#key", "rlk_wrong")
    page.click("#key-form button")
    page.wait_for_selector("#login-error:has-text('not valid')")
    assert not page.is_visible("#question")


def test_a_citation_of_a_sheet_links_to_the_cited_sheet(served: Server, browser, tmp_path: Path) -> None:
    """The citation of an answer from a workbook shows "sheet Lockers", and following it opens the document at the
    cited chunk, whose label names the sheet. Planted fault checked: anchorLink returning "" (no link)."""
    folder = facilities_workbook(tmp_path / "sheets")
    synced = served.client("admin").post("/v1/index/sync", json={"folder": str(folder), "prune": False})
    assert synced.status_code == 200, synced.text
    page = browser.new_page()
    log_in(page, served, "employee")
    ask_on_page(page, "Who is the keeper of the lockers at Quillon?")
    assert "Tamsin Reyes" in page.inner_text("#answer")
    link = page.locator("#citations a.anchor")
    assert link.inner_text() == "sheet Lockers"
    link.click()
    page.wait_for_selector("#doc-view[open] .chunk.cited")
    assert "sheet Lockers" in page.inner_text("#doc-view .chunk.cited .hint")
    page.screenshot(path=str(artifacts() / "citation-of-a-sheet.png"), full_page=True)


def test_a_chat_of_two_turns_the_second_a_follow_up_both_cited(served: Server, browser) -> None:
    """The page keeps the conversation: the follow-up (it omits what the first turn named) is sent with the
    history and answered from the document it needs; the first turn stays above with its citations, and a
    citation of either turn opens its chunk. Planted fault checked: ``ask`` sending no ``history`` (the
    follow-up is answered as written: no "asked as" line, another document cited)."""
    from .test_openai import follow_up_conversation

    first, follow_up, gold = follow_up_conversation(served)
    page = browser.new_page()
    log_in(page, served, "employee")
    ask_on_page(page, first)
    assert page.locator("#citations .cite").count() >= 1
    ask_on_page(page, follow_up)
    assert page.locator("#chat .turn").count() == 1  # the first turn, archived above with its citations
    assert first in page.inner_text("#chat .turn[data-turn='1'] .turn-question")
    assert "asked as:" in page.inner_text("#standalone")
    cited = page.locator("#citations .hint").all_inner_texts()
    assert any(f"({doc})" in text for doc in gold for text in cited), cited
    page.locator("#citations .cite").first.click()
    page.wait_for_selector("#doc-view[open] .chunk.cited")
    page.click("#doc-view form button")
    page.locator("#chat .turn[data-turn='1'] .turn-citations .cite").first.click()
    page.wait_for_selector("#doc-view[open] .chunk.cited")
    page.screenshot(path=str(artifacts() / "chat-two-turns.png"), full_page=True)
