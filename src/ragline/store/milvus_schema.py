"""The schema of a ragline collection on Milvus (see ``ragline.store.milvus``) and its vector index parameters."""

from __future__ import annotations

import logging
from typing import Any

from ragline.errors import ConfigError
from ragline.index.store import IndexSettings

MAX_TEXT = 65535  # bytes of a VARCHAR field
MAX_ACL, MAX_GROUP = 1024, 512
ANALYZER = {"tokenizer": "standard", "filter": ["lowercase"]}  # Milvus's own; see docs/scale.md for the gap


def import_pymilvus() -> Any:
    try:
        import pymilvus
    except ImportError:
        raise ConfigError("the Milvus store needs pymilvus: pip install 'ragline[scale]' (make setup)") from None
    logging.getLogger("pymilvus").setLevel(logging.CRITICAL)  # errors are raised, not logged twice
    return pymilvus


def vector_index_params(spec: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(index type, build params, search params) of a ``vector_index`` spec: flat, or hnsw:m=..,ef_search=.."""
    from ragline.specs import parse_spec

    name, params = parse_spec(spec)
    if name == "flat" and not params:
        return "FLAT", {}, {}
    if name == "hnsw":
        unknown = set(params) - {"m", "ef_construction", "ef_search"}
        if unknown:
            raise ConfigError(f"--vector-index hnsw takes m, ef_construction, ef_search; not {sorted(unknown)}")
        build = {"M": int(params.get("m", 32)), "efConstruction": int(params.get("ef_construction", 200))}
        return "HNSW", build, {"ef": int(params.get("ef_search", 128))}
    raise ConfigError(f"--vector-index {spec!r} has no Milvus equivalent; use flat or hnsw:m=M,ef_search=EF")


def collection_schema(client: Any, settings: IndexSettings, dim: int | None) -> tuple[Any, Any]:
    """(schema, index parameters) of a collection with ``settings``; ``dim``: the embedder's, None without one."""
    pymilvus = import_pymilvus()
    DataType = pymilvus.DataType  # noqa: N806
    if list(settings.fields) != ["body"]:
        raise ConfigError(f"the Milvus store indexes one text field (body), not {list(settings.fields)}")
    if settings.bm25.variant != "lucene":
        raise ConfigError(f"Milvus scores Lucene BM25 (k1, b); BM25 variant {settings.bm25.variant!r} is not offered")
    schema = client.create_schema(auto_id=False, description="ragline collection")
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=1024)
    schema.add_field("doc", DataType.VARCHAR, max_length=1024)
    schema.add_field("hash", DataType.VARCHAR, max_length=128)
    schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT, enable_analyzer=True, analyzer_params=ANALYZER)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field("acl", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=MAX_ACL, max_length=MAX_GROUP)
    schema.add_field("meta", DataType.JSON)
    schema.add_field("payload", DataType.VARCHAR, max_length=MAX_TEXT)
    schema.add_function(
        pymilvus.Function(
            name="bm25",
            function_type=pymilvus.FunctionType.BM25,
            input_field_names=["text"],
            output_field_names=["sparse"],
        )
    )
    index_params = client.prepare_index_params()
    bm25 = {"bm25_k1": settings.bm25.k1, "bm25_b": settings.bm25.b}
    index_params.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25", params=bm25)
    if settings.embedder:
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
        kind, build, _ = vector_index_params(settings.vector_index)
        index_params.add_index("dense", index_type=kind, metric_type="COSINE", params=build)
    return schema, index_params
