"""A query encoder on onnxruntime: the torch model exported once, kept in the ORT format.

The general route of ``query_encoders.py``, for a mean-pooled transformer the numpy encoder does not cover.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ragline.errors import ModelError
from ragline.models.encoder_check import TOLERANCE, difference_to_torch, mean_pooled, torch_probe_vectors


class OnnxQueryEncoder:
    """The mean-pooled output of a sentence-transformers BERT model, run by onnxruntime.

    Loads in well under a second, against 4-6 s for torch and sentence-transformers. The export is made
    once from the torch model (``export``, needs the ``onnx`` package), checked against torch's vectors on
    the probe texts of ``query_encoders.py``, and kept under ``$RAGLINE_CACHE/onnx`` named by the weights'
    sha256 and the input length, so it can never stand for other weights. It is kept in onnxruntime's own
    ORT format (a flatbuffer: a session starts about a third faster than from the ONNX protobuf), with
    only the hardware-independent "basic" graph optimizations, and checked against torch again in that
    form. Only a model that is a transformer, mean pooling and normalization (like all-MiniLM-L6-v2) is
    exported.
    """

    def __init__(self, path: Path, tokenizer_file: Path, max_seq_length: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        if path.suffix == ".ort":
            options.add_session_config_entry("session.load_model_format", "ORT")
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.enable_truncation(max_seq_length)
        self.tokenizer.enable_padding()

    @staticmethod
    def path_for(embedder: Any) -> Path:
        from ragline.paths import cache_root

        name = f"{embedder.spec.name}-{embedder.weights_sha256}-len{embedder.max_seq_length}.ort"
        return cache_root() / "onnx" / name

    @classmethod
    def cached(cls, embedder: Any) -> OnnxQueryEncoder | None:
        """The encoder of an export already in the cache, None when there is none or onnxruntime is missing."""
        if importlib.util.find_spec("onnxruntime") is None or not mean_pooled(embedder):
            return None
        path = cls.path_for(embedder)
        if not path.is_file():
            return None
        try:
            return cls(path, Path(embedder.spec.path) / "tokenizer.json", embedder.max_seq_length)
        except Exception:  # a damaged cache file: torch still answers, and the next load exports again
            path.unlink(missing_ok=True)
            return None

    @classmethod
    def export(cls, embedder: Any) -> OnnxQueryEncoder | None:
        """Export the loaded torch model once, check it, and keep it; None where that cannot be done."""
        if any(importlib.util.find_spec(m) is None for m in ("onnx", "onnxruntime")) or not mean_pooled(embedder):
            return None
        path = cls.path_for(embedder)
        path.parent.mkdir(parents=True, exist_ok=True)
        onnx_file = path.with_name(f".{path.stem}.{os.getpid()}.partial.onnx")
        partial = path.with_name(f".{path.stem}.{os.getpid()}.partial.ort")
        tokenizer = Path(embedder.spec.path) / "tokenizer.json"
        try:
            _export_mean_pooled(embedder.model, onnx_file)
            expected = torch_probe_vectors(embedder)
            _save_ort_format(onnx_file, partial)
            for form in (onnx_file, partial):  # the graph as exported, then as it is kept
                encoder = cls(form, tokenizer, embedder.max_seq_length)
                difference = difference_to_torch(encoder, expected)
                if difference > TOLERANCE:
                    raise ModelError(f"the ONNX export of {embedder.spec.name} differs from torch by {difference:.2e}")
            os.replace(partial, path)
            return encoder
        except Exception as error:  # torch keeps answering: an export is a speed-up, never a requirement
            from ragline.progress import stderr

            stderr.print(f"note: no ONNX query encoder for {embedder.spec.name} ({error}); queries use torch")
            return None
        finally:
            onnx_file.unlink(missing_ok=True)
            partial.unlink(missing_ok=True)

    def encode(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        return self.session.run(None, feed)[0]


def _save_ort_format(onnx_file: Path, target: Path) -> None:
    """Convert an ONNX graph to the ORT format, with the "basic" optimizations (valid on any CPU)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(target)
    options.add_session_config_entry("session.save_model_format", "ORT")
    onnxruntime.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])


def _export_mean_pooled(model: Any, path: Path) -> None:
    """Write the transformer of sentence-transformers ``model`` with mean pooling as one ONNX graph."""
    import torch

    class MeanPooled(torch.nn.Module):
        def __init__(self, transformer: Any) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            tokens = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            return (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = torch.ones(2, 8, dtype=torch.long)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            MeanPooled(model[0].auto_model.eval()),
            (sample, torch.ones_like(sample), torch.zeros_like(sample)),
            str(path),
            input_names=names,
            output_names=["pooled"],
            dynamic_axes={**{n: {0: "batch", 1: "tokens"} for n in names}, "pooled": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
