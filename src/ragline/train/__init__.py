"""Models trained here: a cross-encoder reranker fine-tuned from the packaged MiniLM on a dataset's train
split, with hard negatives mined by a first-stage retriever (``reranker.py``), the training examples and
dev slice (``data.py``), and where trained models live and how a config names them (``models.py``)."""
