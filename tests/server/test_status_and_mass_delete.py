"""`/v1/status` (and the MCP `status` tool, through the same ``Engine.status``) per principal, and the
mass-delete guard of the admin sync endpoint (the guard of `ragline index`, shared)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from ragline.config import load_config  # noqa: E402
from ragline.errors import ConfigError  # noqa: E402
from ragline.freshness import record_source, stale_files  # noqa: E402
from ragline.index import Index, IndexSettings  # noqa: E402
from ragline.principals import ANYONE, Principal  # noqa: E402
from ragline.server.engine import Engine  # noqa: E402

from .conftest import Server  # noqa: E402

HR_ONLY = "---\nacl: [hr]\n---\n# Salary review\n\nDana's salary review is due in March.\n"
PUBLIC = "---\nacl: [all]\n---\n# Meals\n\nThe canteen serves lunch from noon.\n"


def folder_engine(tmp_path: Path, files: dict[str, str]) -> tuple[Engine, Path]:
    """An engine over an on-disk index synced from a folder of ``files``, with the freshness check installed."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    index = Index.create(tmp_path / "index", IndexSettings(chunker="none"))
    index.commit()
    index.close()  # the served handle reads; sync_folder writes with its own handle
    index = Index.open(tmp_path / "index")
    config = load_config("extractive").with_overrides(retrieve={"retriever": "bm25"})
    engine = Engine(index, config, stale_files=stale_files)
    engine.sync_folder(folder)
    record_source(tmp_path / "index", folder)  # as `ragline index` records it
    return engine, folder


def test_status_names_and_counts_only_what_the_principal_may_read(tmp_path: Path) -> None:
    """A principal in `all` is told of neither the changed hr-only file nor a file new on disk, and its document
    count leaves the hr document out; hr and an unrestricted principal see theirs (planted fault: ``status``
    ignoring the principal, as before -> the employee's count was 2)."""
    engine, folder = folder_engine(tmp_path, {"review.md": HR_ONLY, "meals.md": PUBLIC})
    (folder / "review.md").write_text(HR_ONLY + "\nIt moved to April.\n")
    (folder / "secret-plan.md").write_text("---\nacl: [hr]\n---\n# Layoffs\n\nThe layoff plan.\n")
    employee, hr = Principal("erin", ("all",)), Principal("harper", ("all", "hr"))

    mine = engine.status(employee)
    assert mine["documents"] == 1 and mine["deleted"] is None
    assert mine["stale_files"] == []
    assert "review" not in str(mine) and "secret-plan" not in str(mine)

    theirs = engine.status(hr)
    assert theirs["documents"] == 2
    assert [s["path"] for s in theirs["stale_files"]] == ["review.md"]  # a new file's ACL is not known yet

    everything = engine.status(ANYONE)
    assert everything["documents"] == 2 and everything["deleted"] == 0
    assert sorted(s["path"] for s in everything["stale_files"]) == ["review.md", "secret-plan.md"]


def test_http_status_counts_per_key(served: Server) -> None:
    """Over HTTP, the key in `all` counts fewer chunks than the key in `all` and `hr` (the corpus has hr-only
    documents) and gets no tombstone count (planted fault: the endpoint calling ``status`` with the
    unrestricted principal -> both counts equal)."""
    employee = served.client("employee").get("/v1/status").json()
    hr = served.client("hr").get("/v1/status").json()
    assert 0 < employee["documents"] < hr["documents"]
    assert employee["deleted"] is None


def test_sync_refuses_a_mass_delete_unless_allowed(tmp_path: Path) -> None:
    """Syncing a folder that lost 3 of its 4 files is refused with nothing written, and goes through with
    ``allow_mass_delete`` (planted fault: the ``check_deletions`` call removed from ``sync_folder`` -> the first
    sync deleted 3 documents and raised nothing)."""
    files = {f"note{i}.md": f"---\nacl: [all]\n---\n# Note {i}\n\nNote number {i}.\n" for i in range(4)}
    engine, folder = folder_engine(tmp_path, files)
    generation = engine.index.generation
    for i in range(1, 4):
        (folder / f"note{i}.md").unlink()
    with pytest.raises(ConfigError, match=r"delete 3 of the 4 documents.*allow_mass_delete: true"):
        engine.sync_folder(folder)
    assert engine.index.generation == generation and engine.status(ANYONE)["documents"] == 4
    done = engine.sync_folder(folder, allow_mass_delete=True)
    assert done["deleted"] == 3 and done["documents"] == 1


def test_sync_endpoint_passes_allow_mass_delete(tmp_path: Path, served: Server) -> None:
    """Over HTTP the refusal is a 400 naming the field, and ``allow_mass_delete: true`` lets another folder
    replace the served one (planted fault: the endpoint not passing the field on -> the second request 400).
    Runs last in this module: it empties the shared server's index of the Orrin corpus."""
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "only.md").write_text(PUBLIC)
    admin = served.client("admin")
    before = admin.get("/v1/status").json()["documents"]
    refused = admin.post("/v1/index/sync", json={"folder": str(folder)})
    assert refused.status_code == 400, refused.text
    assert "allow_mass_delete" in refused.json()["error"]["message"]
    assert admin.get("/v1/status").json()["documents"] == before
    allowed = admin.post("/v1/index/sync", json={"folder": str(folder), "allow_mass_delete": True})
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["documents"] == 1
