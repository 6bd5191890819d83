"""Getting documents in: loaders for folders of files, single files and JSON Lines corpora."""

from ragline.ingest.loaders import KeptIds, LoadReport, iter_jsonl, load_folder, load_jsonl_corpus, load_path

__all__ = ["KeptIds", "LoadReport", "iter_jsonl", "load_folder", "load_jsonl_corpus", "load_path"]
