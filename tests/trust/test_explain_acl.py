"""``explain`` and ``--principals`` fail closed: a caller learns nothing about a document it may not read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main
from ragline.errors import ConfigError
from ragline.explain import explain
from ragline.index import Index
from ragline.principals import ANYONE, principal_from_groups
from ragline.types import Document


@pytest.fixture
def folder(tmp_path: Path) -> tuple[Path, str, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "hr_review.md").write_text("---\nacl: [hr]\n---\nDana's salary review: band 4, raise approved.\n")
    (docs / "notice.md").write_text("---\nacl: [all]\n---\nThe office closes early on Friday.\n")
    (tmp_path / "people.toml").write_text('[users]\nalice = ["all", "hr"]\nbob = ["all"]\n')
    index = str(tmp_path / "idx")
    assert main(["index", str(docs), "--index", index, "--embedder", "none", "--output", "json"]) == 0
    return docs, index, tmp_path / "people.toml"


def _explain(capsys: pytest.CaptureFixture[str], index: str, doc_id: str, *who: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["explain", "dana salary", doc_id, "--index", index, *who, "--output", "json"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("who", [("--groups", "all"), ("--principals", "PEOPLE", "--as", "bob")])
def test_explain_answers_the_same_for_a_hidden_and_an_absent_id(capsys, folder, who) -> None:
    """Planted fault: explain without the principal's visibility check (the code before this test) returns
    tf and ``matched`` for the hr-only chunk, and an unknown id gets its own message."""
    _, index, people = folder
    who = tuple(str(people) if w == "PEOPLE" else w for w in who)
    replies = {doc_id: _explain(capsys, index, doc_id, *who)
               for doc_id in ("hr_review#0", "hr_review", "no_such#0", "no_such")}  # fmt: skip
    for doc_id, (code, out, err) in replies.items():
        assert code == 2 and out == "", (doc_id, out)
        assert "tf" not in err and "dana" not in err.lower()
    # The same message but for the id it echoes: hidden and absent ids cannot be told apart.
    assert replies["hr_review#0"][2].replace("hr_review", "X") == replies["no_such#0"][2].replace("no_such", "X")
    assert replies["hr_review"][2].replace("hr_review", "X") == replies["no_such"][2].replace("no_such", "X")
    code, out, _ = _explain(capsys, index, "notice#0", *who)  # a readable chunk is still explained
    assert code == 0 and json.loads(out)["doc_id"] == "notice#0"


def test_explain_for_a_reader_of_the_document(capsys, folder) -> None:
    _, index, people = folder
    code, out, _ = _explain(capsys, index, "hr_review#0", "--principals", str(people), "--as", "alice")
    assert code == 0 and json.loads(out)["bm25"]["matched"]
    code, _, err = _explain(capsys, index, "hr_review", "--groups", "hr")
    assert code == 2 and "hr_review#0" in err  # the document's readable chunks are named


def test_python_explain_checks_the_principal(folder) -> None:
    """Planted fault: ``explain`` ignoring ``principal`` explains the hidden chunk."""
    _, index_path, _ = folder
    index = Index.open(index_path)
    with pytest.raises(ConfigError) as hidden:
        explain(index, "dana", "hr_review#0", principal=principal_from_groups(["all"]))
    with pytest.raises(ConfigError) as absent:
        explain(index, "dana", "nothing#0", principal=principal_from_groups(["all"]))
    assert str(hidden.value).replace("hr_review", "X") == str(absent.value).replace("nothing", "X")
    assert explain(index, "dana", "hr_review#0", principal=ANYONE)["bm25"]["matched"]
    assert explain(index, "dana", "hr_review#0", principal=principal_from_groups(["hr"]))["bm25"]["matched"]


def test_explain_ranks_only_among_readable_documents(tmp_path: Path) -> None:
    """Planted fault: the ranks computed without the principal's restriction count the hidden document."""
    index = Index.create(None)
    index.add([Document("secret", "osprey osprey osprey", metadata={"acl": ["hr"]}),
               Document("open", "osprey and more words here", metadata={"acl": ["all"]})])  # fmt: skip
    index.commit()
    assert explain(index, "osprey", "open")["bm25"]["rank"] == 2
    assert explain(index, "osprey", "open", principal=principal_from_groups(["all"]))["bm25"]["rank"] == 1


@pytest.mark.parametrize("command", [["search", "salary"], ["ask", "salary?", "--reader", "extractive"],
                                     ["explain", "salary", "hr_review#0"]])  # fmt: skip
def test_principals_without_as_is_an_error(capsys, folder, command) -> None:
    """Planted fault: ``--principals FILE`` without ``--as`` resolving to the unrestricted principal (the
    hr document came first)."""
    _, index, people = folder
    capsys.readouterr()
    assert main([*command, "--index", index, "--principals", str(people), "--output", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "--as USER" in captured.err


def test_collection_statistics_are_withheld_from_a_principal_who_cannot_read_everything(tmp_path: Path) -> None:
    """df would tell a principal how many hidden documents hold a query term ("osprey": 3 documents, of which
    it may read 1). Planted fault: ``bm25_explanation`` returning the statistics to every principal (the code
    before this test): bob's df for "osprey" is then 3."""
    index = Index.create(None)
    index.add([Document(f"secret{i}", "osprey nests in the north", metadata={"acl": ["hr"]}) for i in range(2)]
              + [Document("open", "osprey and more words here", metadata={"acl": ["all"]})])  # fmt: skip
    index.commit()
    bob, both = principal_from_groups(["all"]), principal_from_groups(["all", "hr"])
    hidden = explain(index, "osprey", "open", principal=bob)
    lexical = hidden["bm25"]
    assert lexical["statistics"].startswith("withheld") and lexical["n_docs"] is None
    assert all(c["df"] is None and c["idf"] is None and c["contribution"] is None for c in lexical["contributions"])
    assert all(f["avg_len"] is None for f in lexical["fields"]) and lexical["exact_score"] is None
    assert lexical["matched"] and lexical["score"] > 0 and lexical["rank"] == 1
    assert [c["tf"] for c in lexical["contributions"]] == [1.0]
    whole = explain(index, "osprey", "open", principal=both)["bm25"]
    assert whole["statistics"] == "collection-wide" and whole["n_docs"] == 3
    assert whole["contributions"][0]["df"] == 3 and whole["score"] == lexical["score"]


def test_explain_command_prints_withheld_statistics(capsys, folder) -> None:
    """The text output of a principal who cannot read the hr document (planted fault: printing ``avg_len`` with
    a number format when it is withheld raises)."""
    _, index, _ = folder
    capsys.readouterr()
    assert main(["explain", "office salary", "notice#0", "--index", index, "--groups", "all"]) == 0
    assert "withheld" in capsys.readouterr().out
