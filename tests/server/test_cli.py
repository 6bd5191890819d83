"""`ragline keys` and `ragline serve`'s refusals, through the command's entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main
from ragline.server.keys import KeyRing


def test_keys_add_prints_the_key_alone_once_and_list_and_revoke(tmp_path: Path, capsys) -> None:
    keys = tmp_path / "keys.json"
    assert main(["keys", "add", "alice", "--groups", "all,hr", "--keys", str(keys)]) == 0
    key = capsys.readouterr().out
    assert key.count("\n") == 1 and key.startswith("rlk_")
    assert key.strip() not in keys.read_text()
    entry = KeyRing(keys).authenticate(key.strip())
    assert entry is not None and entry.groups == ("all", "hr") and not entry.admin
    assert main(["keys", "list", "--keys", str(keys), "--output", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)["keys"]
    assert [k["name"] for k in listed] == ["alice"] and "sha256" not in listed[0]
    assert main(["keys", "revoke", "alice", "--keys", str(keys)]) == 0
    assert KeyRing(keys).authenticate(key.strip()) is None
    assert main(["keys", "revoke", "alice", "--keys", str(keys)]) == 2  # none live: an error that says so


def test_serve_refuses_to_start_without_keys(tmp_path: Path, capsys) -> None:
    assert main(["serve", "--index", str(tmp_path)]) == 2
    assert "--keys FILE" in capsys.readouterr().err
    assert main(["serve", "--keys", str(tmp_path / "missing.json")]) == 2
    assert "ragline keys add" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["", "a b", "../x"])
def test_a_key_name_must_be_plain(tmp_path: Path, name: str) -> None:
    assert main(["keys", "add", name, "--groups", "all", "--keys", str(tmp_path / "k.json")]) == 2
