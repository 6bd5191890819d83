"""The docs: generated reference pages current, and the site built in strict mode."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .wheel import REPO


def test_generated_reference_pages_match_the_code() -> None:
    """Planted fault: a new `ragline demo` flag added without `make docs-gen` fails this test."""
    done = subprocess.run(
        [sys.executable, str(REPO / "tools/gen_docs.py"), "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_docs_site_builds_in_strict_mode(tmp_path) -> None:
    """Planted fault: a link to a page that does not exist (docs/index.md -> missing.md) fails the build."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "cli" / "index.html").is_file()
    assert "keys.json" in (tmp_path / "site" / "index.html").read_text()  # the quickstart, from README.md
