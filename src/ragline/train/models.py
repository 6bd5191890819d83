"""Where trained models live, and how a config names one: ``trained:NAME`` is ``$RAGLINE_CACHE/models/NAME``.

A trained model is a folder holding the weights, the tokenizer and ``card.json`` (what it was trained on,
the steps, the loss, the dev figures, the commit). A name that no folder holds is an error that says which
command trains it; any other model string is a packaged name (``minilm``), a local folder or a hub id.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from ragline.errors import ConfigError, ModelError
from ragline.paths import cache_root

TRAINED_PREFIX = "trained:"
CARD_FILE = "card.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def models_root() -> Path:
    return cache_root() / "models"


def check_name(name: str) -> str:
    """``name`` when it can name a model folder (letters, digits, ``.``, ``_``, ``-``); ConfigError if not."""
    if not _NAME.match(name or ""):
        raise ConfigError(f"model name {name!r}: use letters, digits, '.', '_' and '-' only (e.g. scifact)")
    return name


def trained_path(name: str) -> Path:
    return models_root() / check_name(name)


def read_card(folder: str | Path) -> dict[str, Any]:
    path = Path(folder) / CARD_FILE
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


# What each kind of trainer reads, for the hint of a missing model: a BEIR folder, or SQuAD-layout lines for a reader.
_EXAMPLE_DATASET = {"reader": "../shared/bench/reader_train/squad_v1.1_train.jsonl.gz"}


def resolve_model(model: str, kind: str = "reranker") -> str:
    """The folder or hub id that ``model`` names; ``trained:NAME`` must be a trained model of ``kind``."""
    if not model.startswith(TRAINED_PREFIX):
        if model.lower() in ("minilm", "all-minilm-l6-v2"):
            from ragline.models.registry import resolve_embedder

            return resolve_embedder(model).path
        return model
    name = model[len(TRAINED_PREFIX) :]
    folder = trained_path(name)
    if not (folder / CARD_FILE).is_file():
        example = _EXAMPLE_DATASET.get(kind, "../shared/bench/scifact")
        hint = " (or `make squad-reader`)" if kind == "reader" and name == "squad" else ""
        raise ModelError(
            f"no trained {kind} {name!r}: {folder} holds no {CARD_FILE}; train it with "
            f"`ragline train {kind} DATASET --name {name}`{hint} (e.g. DATASET = {example})"
        )
    card_kind = read_card(folder).get("kind")
    if card_kind and card_kind != kind:
        article = "an" if kind[0] in "aeiou" else "a"
        raise ModelError(
            f"trained model {name!r} at {folder} is a {card_kind}, not {article} {kind}: name {article} {kind}"
        )
    return str(folder)


def settings_key(settings: dict[str, Any]) -> str:
    """The short hash that names a training run's settings (its checkpoint and its card's ``id``).

    A base that is itself ``trained:NAME`` adds that model's card id: a model trained on top of it is out of
    date once the base is trained again with other settings, though its own settings did not change.
    """
    data = dict(settings)
    base = str(data.get("base", ""))
    if base.startswith(TRAINED_PREFIX):
        data["base_id"] = read_card(trained_path(base[len(TRAINED_PREFIX) :])).get("id")
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
