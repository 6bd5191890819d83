"""Principals: users and groups from a file, `--as USER` on the CLI, and the same rule as the ACL filter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main
from ragline.errors import ConfigError, InputError
from ragline.principals import ANYONE, Principal, load_principals, resolve_principal


def write_principals(tmp_path: Path) -> Path:
    path = tmp_path / "principals.toml"
    path.write_text('[users]\nalice = ["all", "hr"]\nbob = ["all"]\n"o\'neil" = ["Domain Users"]\n')
    return path


def test_principals_load_from_toml_yaml_and_json(tmp_path: Path) -> None:
    users = load_principals(write_principals(tmp_path))
    assert users["alice"] == Principal("alice", ("all", "hr")) and users["o'neil"].groups == ("Domain Users",)
    (tmp_path / "p.yaml").write_text("users:\n  bob: [all]\n")
    (tmp_path / "p.json").write_text(json.dumps({"users": {"bob": ["all"]}}))
    assert load_principals(tmp_path / "p.yaml") == load_principals(tmp_path / "p.json") == {"bob": users["bob"]}


@pytest.mark.parametrize(
    ("text", "message"),
    [("users = 3", "users"), ('[users]\nbob = "all"', "users.bob"), ("[users\n", "cannot parse")],
)
def test_a_bad_principals_file_names_the_field(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(InputError, match=message):
        load_principals(tmp_path / "bad.toml")


@pytest.mark.parametrize(
    ("name", "text", "named"),
    [
        ("p.yaml", "users:\n  bob: [hr]\n  alice: [all]\n  bob: [all]\n", "'bob' twice \\(lines 2 and 4\\)"),
        ("p.json", '{"users": {"bob": ["hr"], "alice": ["all"], "bob": ["all"]}}', "'bob' is given twice"),
        ("p.toml", '[users]\nbob = ["hr"]\nbob = ["all"]\n', "line 3"),  # tomllib does not name the key
    ],
)
def test_a_user_given_twice_is_refused_in_every_format(tmp_path: Path, name: str, text: str, named: str) -> None:
    """Planted fault: plain ``yaml.safe_load``/``json.loads`` keep the last entry, so bob silently lost hr (or, in
    the other order, gained it)."""
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=named) as raised:
        load_principals(tmp_path / name)
    assert name in str(raised.value)


def test_resolving_a_principal(tmp_path: Path) -> None:
    path = write_principals(tmp_path)
    assert resolve_principal(path, "bob", None).groups == ("all",)
    assert resolve_principal(None, None, ["hr"]).groups == ("hr",)
    assert resolve_principal(None, None, None) is ANYONE and ANYONE.restriction() is None
    with pytest.raises(ConfigError, match="not both"):
        resolve_principal(path, "bob", ["hr"])
    with pytest.raises(ConfigError, match="not in"):
        resolve_principal(path, "mallory", None)
    with pytest.raises(ConfigError, match="needs --principals"):
        resolve_principal(None, "bob", None)


def test_can_read_is_the_filter_rule() -> None:
    bob = Principal("bob", ("all",))
    assert bob.can_read(["all", "hr"]) and bob.can_read("all") and not bob.can_read(["hr"]) and not bob.can_read(None)


def test_search_and_ask_as_a_user_of_the_principals_file(capsys, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pay.md").write_text("---\nacl: [hr]\n---\n# Pay\n\nBand 4 pays 80k to 95k a year.\n")
    (docs / "meals.md").write_text("---\nacl: [all]\n---\n# Meals\n\nBand 4 staff get 70 dollars for meals.\n")
    index, people = str(tmp_path / "idx"), str(write_principals(tmp_path))
    assert main(["index", str(docs), "--index", index, "--embedder", "none"]) == 0
    capsys.readouterr()

    def ids(user: str) -> list[str]:
        argv = ["search", "band 4", "--index", index, "--principals", people, "--as", user, "--output", "json"]
        assert main(argv) == 0
        return sorted(h["doc_id"] for h in json.loads(capsys.readouterr().out)["hits"])

    assert ids("alice") == ["meals", "pay"] and ids("bob") == ["meals"]
    assert main(["ask", "What does band 4 pay?", "--index", index, "--principals", people, "--as", "bob",
                 "--reader", "extractive", "--output", "json"]) == 0  # fmt: skip
    answer = json.loads(capsys.readouterr().out)
    assert all(s["doc_id"] == "meals" for s in answer["sources"]) and "95k" not in answer["answer"]
    assert main(["search", "band 4", "--index", index, "--principals", people, "--as", "bob", "--groups", "hr"]) == 2
    assert "not both" in capsys.readouterr().err
