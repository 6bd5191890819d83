"""The smallest pipeline config the doctor's tests index with (whole documents, BM25, no embedder), and the
probe-file questions they share (TOML, composed by each test)."""

from __future__ import annotations


def tiny_config(reader: str = "extractive", k: int = 3, retrieve: str = "", more: str = "", name: str = "tiny") -> str:
    """The TOML text; ``retrieve``: more lines of ``[retrieve]``; ``more``: more sections before ``[read]``."""
    return (
        f'schema = 1\nname = "{name}"\n[ingest]\nchunker = "none"\n[index]\nembedder = "none"\n'
        f'[retrieve]\nretriever = "bm25"\nk = {k}\n{retrieve}\n{more}\n[read]\nreader = "{reader}"\n'
    )


BAND4 = """[[question]]
id = "band4"
text = "What does salary band 4 pay per month?"
groups = ["all"]
forbidden = ["salary-bands"]
answer = "6,200 euros"
type = "permission"
"""
STIPEND = """[[question]]
id = "stipend"
text = "How large is the home office stipend?"
answer = "$650"
gold = ["remote-2026"]
type = "version"
distractors = ["$400"]
"""
LEAVE = """[[question]]
id = "leave"
text = "How many days of annual leave do employees get?"
answer = "25 days"
gold = ["leave"]
type = "literal"
"""
