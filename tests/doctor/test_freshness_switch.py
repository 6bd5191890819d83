"""``[retrieve] freshness = "off"`` skips the stale-source check of ``ragline ask`` and ``ragline search``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main
from tiny_pipeline import tiny_config


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    capsys.readouterr()
    assert main([*argv, "--output", "json"]) == 0
    return json.loads(capsys.readouterr().out.strip())


@pytest.mark.parametrize("mode", ["check", "off"])
def test_freshness_off_skips_the_stale_source_check(
    mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "leave.md").write_text("# Leave\n\nEmployees get 25 days of annual leave.\n")
    (docs / "travel.md").write_text("# Travel\n\nThe per diem is 40 dollars a day.\n")
    config = tmp_path / f"fresh-{mode}.toml"
    config.write_text(tiny_config(name=f"fresh-{mode}", retrieve=f'freshness = "{mode}"'))
    index = str(tmp_path / "idx")
    assert main(["index", str(docs), "--index", index, "--config", str(config)]) == 0
    (docs / "leave.md").write_text("# Leave\n\nEmployees get 30 days of annual leave.\n")  # not synced
    asked = _run(capsys, "ask", "How many days of annual leave?", "--index", index, "--config", str(config))
    searched = _run(capsys, "search", "annual leave", "--index", index, "--config", str(config))
    expected = ["leave"] if mode == "check" else []
    assert asked["citations"]
    assert [s["doc_id"] for s in asked["stale_sources"]] == expected
    assert [s["doc_id"] for s in searched["stale_sources"]] == expected
