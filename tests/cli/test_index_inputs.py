"""``ragline index`` on awkward inputs: ACLs that must not leak, links, id clashes, one file, unsupported types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--output", "json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1, lines
    return json.loads(lines[0])


def doc_ids(capsys: pytest.CaptureFixture[str], index: str, query: str, *flags: str) -> list[str]:
    return [hit["doc_id"] for hit in run_json(capsys, "search", query, "--index", index, *flags)["hits"]]


def index_json(capsys: pytest.CaptureFixture[str], source: Path, index: str, *flags: str) -> dict:
    return run_json(capsys, "index", str(source), "--index", index, "--embedder", "none", *flags)


def test_crlf_front_matter_keeps_its_acl(capsys, tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", str(tmp_path / "idx")
    docs.mkdir()
    (docs / "secret.md").write_bytes(b"---\r\nacl: [hr]\r\n---\r\nOSPREY secret\r\n")
    (docs / "public.md").write_bytes(b"---\r\nacl: [all]\r\n---\r\nOSPREY public notice\r\n")
    index_json(capsys, docs, index)
    assert doc_ids(capsys, index, "OSPREY", "--filter", "acl in [all]") == ["public"]
    assert sorted(doc_ids(capsys, index, "OSPREY", "--filter", "acl in [all, hr]")) == ["public", "secret"]


def test_a_front_matter_typo_removes_the_earlier_public_version(capsys, tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", str(tmp_path / "idx")
    docs.mkdir()
    (docs / "plan.md").write_text("---\nacl: [all]\n---\nOSPREY merger plan")
    index_json(capsys, docs, index)
    (docs / "plan.md").write_text("---\nacl: [hr\n---\nOSPREY merger plan")  # tightening the ACL, with a typo
    assert main(["index", str(docs), "--index", index, "--embedder", "none", "--output", "json"]) == 0
    captured = capsys.readouterr()
    again = json.loads(captured.out)
    assert again["skipped"] == 1 and again["deleted"] == 1
    assert "plan.md" in captured.err and "not valid YAML" in captured.err
    assert doc_ids(capsys, index, "OSPREY merger") == []


def test_links_out_of_the_folder_are_not_indexed_unless_followed(capsys, tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", str(tmp_path / "idx")
    docs.mkdir()
    (docs / "a.txt").write_text("inside text")
    (tmp_path / "passwd").write_text("root:x:0:0 OSPREY")
    (docs / "p.txt").symlink_to(tmp_path / "passwd")
    first = index_json(capsys, docs, index)
    assert first["skipped"] == 1 and doc_ids(capsys, index, "OSPREY") == []
    followed = index_json(capsys, docs, index, "--follow-links")
    assert followed["added"] == 1 and doc_ids(capsys, index, "OSPREY") == ["p"]
    again = index_json(capsys, docs, index)  # without the flag the linked file leaves the index
    assert again["deleted"] == 1 and doc_ids(capsys, index, "OSPREY") == []


def test_an_id_clash_is_reported_and_resyncs_stay_quiet(capsys, tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", str(tmp_path / "idx")
    docs.mkdir()
    (docs / "notes.md").write_text("markdown notes")
    (docs / "notes.txt").write_text("text notes")
    (docs / "other.txt").write_text("other")
    assert main(["index", str(docs), "--index", index, "--embedder", "none"]) == 0
    err = capsys.readouterr().err
    assert "notes.md" in err and "notes.txt" in err and "share the document id" in err
    again = index_json(capsys, docs, index)
    assert (again["added"], again["updated"], again["unchanged"], again["skipped"]) == (0, 0, 1, 2)


def test_index_accepts_one_file_and_lists_unsupported_types(capsys, tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", str(tmp_path / "idx")
    docs.mkdir()
    (docs / "policy.md").write_text("# Policy\n\nRemote work twice a week.")
    (docs / "budget.ods").write_text("a,b")
    (docs / "memo.doc").write_bytes(b"PK\x03\x04")
    (docs / "guide.rst").write_text("Guide\n=====\n\nReStructured guide text.\n")
    folder = index_json(capsys, docs, index)
    assert folder["added"] == 2 and folder["unsupported"] == {".doc": 1, ".ods": 1}
    (tmp_path / "extra.txt").write_text("Extra one-off file about badges.")
    single = index_json(capsys, tmp_path / "extra.txt", index)
    assert (single["added"], single["deleted"], single["documents"]) == (1, 0, 3)
    assert doc_ids(capsys, index, "badges") == ["extra"]


def test_index_help_lists_every_supported_format(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["index", "--help"])
    out = capsys.readouterr().out
    suffixes = (".txt", ".md", ".rst", ".html", ".pdf", ".docx", ".pptx", ".xlsx", ".csv", ".eml", ".msg")
    assert all(suffix in out for suffix in suffixes) and "--follow-links" in out


@pytest.mark.models
def test_cjk_documents_with_an_english_only_embedder_are_warned_about_and_still_found(capsys, tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", str(tmp_path / "idx")
    docs.mkdir()
    (docs / "zh.md").write_text("# 报销政策\n\n差旅报销需要在三十天内提交收据。", encoding="utf-8")
    (docs / "en.md").write_text("# Travel\n\nReceipts are due within thirty days.", encoding="utf-8")
    assert main(["index", str(docs), "--index", index, "--vector-index", "flat", "--output", "json"]) == 0
    err = capsys.readouterr().err
    assert "1 of 2 documents contain Chinese" in err and "--embedder multilingual-e5-small" in err
    assert doc_ids(capsys, index, "报销收据", "--retriever", "bm25") == ["zh"]
    assert main(["index", str(docs), "--index", str(tmp_path / "bm25"), "--embedder", "none"]) == 0
    assert "multilingual" not in capsys.readouterr().err  # BM25 only: nothing to warn about
