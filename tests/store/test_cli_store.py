import json

import pytest

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


DOCS = {
    "cats.md": "---\nacl: [all]\n---\n# Cats\nCats sleep for most of the day. A cat purrs when it is content.\n",
    "dogs.md": "---\nacl: [all]\n---\n# Dogs\nDogs bark at strangers. A dog needs a daily walk and a bowl of water.\n",
    "birds.md": "---\nacl: [all]\n---\n# Birds\nBirds migrate south in winter. Many birds sing at dawn.\n",
    "fish.md": "---\nacl: [all]\n---\n# Fish\nFish breathe through gills. A goldfish can live for twenty years.\n",
    "hr.md": "---\nacl: [hr]\n---\n# Salaries\nThe dog trainer earns forty thousand a year.\n",
}


def _json(capsys, args):
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def both_stores(tmp_path, milvus_uri, capsys):
    """The same folder indexed into an embedded index (exact vector search) and into a Milvus collection."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    index = tmp_path / "index"
    _json(capsys, ["index", str(folder), "--index", str(index), "--vector-index", "flat", "--output", "json"])
    _json(capsys, ["index", str(folder), "--store", milvus_uri, "--output", "json"])
    return index, milvus_uri


@pytest.mark.models
@pytest.mark.slow
def test_search_and_ask_on_milvus_give_the_embedded_index_hits_for_exact_dense_search(both_stores, capsys):
    """Planted: build_retriever not mapping dense to store-dense on a store, and Milvus dense search dropping
    its filter (the hr chunk came back), failed here."""
    index, uri = both_stores
    for question, groups in (
        ("which animal barks at strangers?", []),
        ("what does the dog trainer earn?", ["--groups", "all"]),
    ):
        common = ["--retriever", "dense", "--output", "json", *groups]
        embedded = _json(capsys, ["search", question, "--index", str(index), *common])
        milvus = _json(capsys, ["search", question, "--store", uri, *common])
        assert milvus["provenance"]["index"] == uri and milvus["provenance"]["retriever"]["name"] == "store-dense"
        assert [h["chunk_id"] for h in milvus["hits"]] == [h["chunk_id"] for h in embedded["hits"]]
        assert [h["score"] for h in milvus["hits"]] == pytest.approx([h["score"] for h in embedded["hits"]], abs=1e-4)
        if groups:  # the ACL inside retrieval on the store too
            assert milvus["hits"] and "hr#0" not in {h["chunk_id"] for h in milvus["hits"]}
        ask = ["--reader", "extractive", *common]
        answer_embedded = _json(capsys, ["ask", question, "--index", str(index), *ask])
        answer_milvus = _json(capsys, ["ask", question, "--store", uri, *ask])
        assert [s["chunk_id"] for s in answer_milvus["sources"]] == [s["chunk_id"] for s in answer_embedded["sources"]]
        assert answer_milvus["answer"] == answer_embedded["answer"]
    assert _json(capsys, ["status", "--store", uri, "--output", "json"])["documents"] == len(DOCS)


@pytest.mark.models
@pytest.mark.slow
def test_serve_over_a_milvus_store_answers_with_keys(both_stores, tmp_path):
    """Planted: build_retriever not mapping hybrid to store-hybrid on a store failed here."""
    from fastapi.testclient import TestClient

    from ragline.cli import build_parser
    from ragline.cli.serve import build_server
    from ragline.server.keys import add_key

    _, uri = both_stores
    keys = tmp_path / "keys.json"
    staff, hr = add_key(keys, "staff", ["all"]), add_key(keys, "hr", ["all", "hr"])
    args = build_parser().parse_args(["serve", "--store", uri, "--keys", str(keys), "--reader", "extractive"])
    with TestClient(build_server(args)) as client:
        assert client.post("/v1/search", json={"query": "dog"}).status_code == 401  # no key, no answer
        asked = {"query": "what does the dog trainer earn?", "k": 5}
        seen = client.post("/v1/search", json=asked, headers={"Authorization": f"Bearer {staff}"}).json()
        assert seen["retriever"] == "store-hybrid" and seen["hits"]
        assert "hr#0" not in {h["chunk_id"] for h in seen["hits"]}
        seen_hr = client.post("/v1/search", json=asked, headers={"Authorization": f"Bearer {hr}"}).json()
        assert "hr#0" in {h["chunk_id"] for h in seen_hr["hits"]}
        reply = client.post("/v1/ask", json={"question": "how long can a goldfish live?", "stream": False},
                            headers={"Authorization": f"Bearer {staff}"})  # fmt: skip
        assert reply.status_code == 200 and reply.json()["sources"]
        status = client.get("/v1/status", headers={"Authorization": f"Bearer {staff}"}).json()
        assert status["index"] == uri and status["documents"] == len(DOCS) - 1  # the hr chunk is not counted
