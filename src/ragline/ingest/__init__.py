"""Getting documents in: loaders for folders of files and JSON Lines corpora."""

from ragline.ingest.loaders import LoadReport, iter_jsonl, load_folder, load_jsonl_corpus

__all__ = ["LoadReport", "iter_jsonl", "load_folder", "load_jsonl_corpus"]
