"""The doctor's HTML report in headless Chromium: the table of probes and one SVG plot per probe.

It runs the doctor on a tiny folder corpus (two probes), renders the page, checks what a reader sees and
writes a screenshot to ``$RAGLINE_ARTIFACTS``, else ``tests/artifacts/``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ragline.cli import main
from tiny_pipeline import tiny_config

from .test_probes_tiny import probe_file  # noqa: F401 (the fixture)

playwright = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"]
pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no chromium: `make setup` installs Debian's as root"),
]


def artifacts() -> Path:
    folder = Path(os.environ.get("RAGLINE_ARTIFACTS") or Path(__file__).parents[1] / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_the_html_report_shows_the_table_and_a_plot_per_probe(tmp_path: Path, probe_file: Path) -> None:  # noqa: F811
    config = tmp_path / "weak-tiny.toml"
    config.write_text(tiny_config("extractive:threshold=0,support=off", retrieve='versions = "all"\nfreshness = "off"'))
    page_path = tmp_path / "doctor.html"
    only = "stale index,conflicting evidence"
    code = main(["doctor", "--config", str(config), "--probes", str(probe_file), "--only", only,
                 "--html", str(page_path), "--output", "json"])  # fmt: skip
    assert code == 0
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(page_path.as_uri())
        rows = page.locator("#probes tbody tr")
        assert rows.count() == 2
        assert {rows.nth(i).locator("td").first.inner_text() for i in range(2)} == set(only.split(","))
        assert page.locator(".plots svg").count() == 2
        assert page.locator(".plots svg rect").count() > 0  # bars drawn, not an empty frame
        shot = artifacts() / "doctor-report.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert shot.stat().st_size > 0
