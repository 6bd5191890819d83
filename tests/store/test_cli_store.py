import json

from ragline.cli import main
from ragline.store import open_store


def test_index_store_syncs_a_folder_into_milvus(tmp_path, milvus_uri, capsys):
    (tmp_path / "a.md").write_text("# Cats\nCats sleep a lot.\n")
    (tmp_path / "b.md").write_text("# Dogs\nDogs bark.\n")
    args = ["index", str(tmp_path), "--store", milvus_uri, "--embedder", "none", "--output", "json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    (tmp_path / "b.md").unlink()
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert first["added"] >= 2 and second["deleted"] >= 1 and second["added"] == 0
    with open_store(milvus_uri, create=False) as collection:
        assert collection.settings.vector_index == "flat"
        assert {d.metadata.get("doc_id") for d in collection.documents()} == {"a"}
