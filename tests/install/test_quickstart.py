"""README's quickstart, run as written: the commands of its first screen and its Python lines.

``pip install`` itself runs in test_wheel.py and test_installs.py (the wheel into new virtualenvs) and
``ragline demo`` in test_wheel.py (from the installed wheel); every other line runs here, in a new folder
holding a ``docs/`` of two policies.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from .wheel import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
START, END = "<!-- --8<-- [start:quickstart] -->", "<!-- --8<-- [end:quickstart] -->"

DOCS = {
    "pay-bands.md": "# Pay bands\n\n## Band 4\n\nEmployees in band 4 are senior specialists. "
    "Band 4 pays 60,000 euros a year.\n",
    "leave.md": "# Annual leave\n\nEvery employee has 27 days of annual leave a year.\n",
}


def quickstart() -> tuple[list[list[str]], str]:
    """The quickstart's shell commands (comments dropped) and its Python block."""
    section = README[README.index(START) : README.index(END)]
    shell = re.search(r"```bash\n(.*?)```", section, re.S)
    python = re.search(r"```python\n(.*?)```", section, re.S)
    assert shell and python
    commands = [shlex.split(line, comments=True) for line in shell[1].splitlines() if line.strip()]
    return commands, python[1]


def test_the_quickstart_is_on_the_first_screen_and_names_the_four_steps() -> None:
    """Planted fault: the quickstart moved below the long reference (line 150) fails this test."""
    first = README.splitlines()[:40]
    assert START in first and END in first and any("pip install" in line for line in first)
    commands, python = quickstart()
    assert [c[:2] for c in commands if c[0] == "ragline"][:2] == [["ragline", "index"], ["ragline", "ask"]]
    assert {"serve", "demo"} <= {c[1] for c in commands if c[0] == "ragline"}
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (install,) = [c for c in commands if c[0] == "pip"]
    named = re.fullmatch(r"ragline\[([\w,]+)\]", install[2])
    assert named and set(named[1].split(",")) <= extras.keys()
    assert len([line for line in python.splitlines() if line.strip()]) <= 6


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(url: str, key: str | None = None, body: dict | None = None) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


@pytest.mark.slow
@pytest.mark.models
def test_every_quickstart_command_runs_as_written(tmp_path: Path) -> None:
    """index, ask (the local LLM), keys, serve (then /health and a search with the key), the Python lines.

    Planted fault: `ragline ask` given the default pipeline's reader as a name that does not exist
    (`pipelines/default.toml` reader = "llm2") made `ask` exit 2 and this test fail.
    """
    for name, text in DOCS.items():
        (tmp_path / "docs").mkdir(exist_ok=True)
        (tmp_path / "docs" / name).write_text(text)
    env = {**os.environ, "RAGLINE_INDEX": "", "COLUMNS": "160"}
    env.pop("RAGLINE_INDEX")
    commands, python = quickstart()
    key = ""
    for command in commands:
        if command[0] == "pip" or command[1] == "demo":
            continue  # test_wheel.py, test_installs.py
        argv = [sys.executable, "-m", "ragline", *command[1:]]
        if command[1] == "serve":
            _serve(argv, tmp_path, env, key)
            continue
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, (command, done.stderr[-2000:])
        if command[1] == "index":
            assert (tmp_path / "ragline-index").is_dir()
        if command[1] == "ask":
            assert "ragline-index" in done.stderr and "built-in" not in done.stderr
            assert "pay-bands" in done.stdout and "60,000" in done.stdout
        if command[1] == "keys":
            key = done.stdout.strip()
    assert key
    script = tmp_path / "quickstart.py"
    script.write_text(python)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "60,000" in done.stdout and "pay-bands" in done.stdout


def _serve(argv: list[str], cwd: Path, env: dict[str, str], key: str) -> None:
    port = _free_port()
    server = subprocess.Popen([*argv, "--port", str(port)], cwd=cwd, env=env, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            try:
                status, _ = _call(f"{base}/health")
                break
            except OSError:
                assert time.monotonic() < deadline, "ragline serve did not answer /health"
                time.sleep(0.5)
        assert status == 200
        status, body = _call(f"{base}/v1/search", key, {"query": "What does band 4 pay?"})
        assert status == 200 and b"pay-bands" in body, body[:500]
    finally:
        server.terminate()
        server.wait(timeout=60)
