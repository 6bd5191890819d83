"""The smallest pipeline config the doctor's tests index with: whole documents, BM25, no embedder."""

from __future__ import annotations


def tiny_config(reader: str = "extractive", k: int = 3, retrieve: str = "", more: str = "", name: str = "tiny") -> str:
    """The TOML text; ``retrieve``: more lines of ``[retrieve]``; ``more``: more sections before ``[read]``."""
    return (
        f'schema = 1\nname = "{name}"\n[ingest]\nchunker = "none"\n[index]\nembedder = "none"\n'
        f'[retrieve]\nretriever = "bm25"\nk = {k}\n{retrieve}\n{more}\n[read]\nreader = "{reader}"\n'
    )
