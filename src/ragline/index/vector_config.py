"""How a dense vector index is built and searched: ``VectorIndexConfig`` and its spec syntax.

A spec is ``kind[:key=value,...]`` (``"hnsw:m=16,ef_search=64"``, ``"ivfpq:nlist=256,pq_m=16"``); the
kinds and what their parameters mean are described in ``vectors.py``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragline.errors import ConfigError

KINDS = ("flat", "hnsw", "ivf", "ivfpq")
METRICS = ("cosine", "ip")
IVF_KINDS = ("ivf", "ivfpq")

# Below this fraction of allowed rows, filtered search is exact. Measured (benchmarks/ann.py, 100k
# vectors, ef_search 128): HNSW with a selector keeps recall@10 0.98 at 5% allowed but falls to 0.87
# at 2%, where exact search is also faster (2,133 vs 1,265 queries/s); faiss alone returns fewer than
# 10 results for 36% of queries at 1%.
EXACT_SEARCH_BELOW = 0.05

# faiss ClusteringParameters.min_points_per_centroid: k-means with fewer points per centroid is unreliable.
MIN_POINTS_PER_CENTROID = 39


@dataclass(frozen=True, slots=True)
class VectorIndexConfig:
    """How to build and search a :class:`VectorIndex`; parse a spec such as ``"hnsw:m=16,ef_search=64"``.

    ``nlist=None`` means ``round(4 * sqrt(n))`` for the n training vectors; ``pq_m=None`` means the largest
    divisor of the dimension not above a quarter of it (4 dimensions per sub-quantizer). ``threads=None``
    leaves faiss's OpenMP default (OMP_NUM_THREADS, else all cores).
    """

    kind: str = "flat"
    metric: str = "cosine"
    m: int = 32
    ef_construction: int = 200
    ef_search: int = 128
    nlist: int | None = None
    nprobe: int = 16
    pq_m: int | None = None
    pq_bits: int = 8
    exact_search_below: float = EXACT_SEARCH_BELOW
    threads: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"unknown vector index kind {self.kind!r}; valid kinds: {', '.join(KINDS)}")
        if self.metric not in METRICS:
            raise ConfigError(f"unknown vector metric {self.metric!r}; valid metrics: {', '.join(METRICS)}")
        for name in ("m", "ef_construction", "ef_search", "nprobe", "pq_bits"):
            require_int(name, getattr(self, name), minimum=2 if name == "m" else 1)
        for name in ("nlist", "pq_m", "threads"):
            if getattr(self, name) is not None:
                require_int(name, getattr(self, name), minimum=1)
        if self.pq_bits > 16:
            raise ConfigError(f"vector index pq_bits must be at most 16, got {self.pq_bits}")
        if not 0.0 <= self.exact_search_below <= 1.0:
            raise ConfigError(f"exact_search_below must be within [0, 1], got {self.exact_search_below}")

    @classmethod
    def parse(cls, spec: str) -> VectorIndexConfig:
        """``kind[:key=value,...]``, e.g. ``"ivfpq:nlist=256,pq_m=16"``; ``none`` for an automatic value."""
        kind, _, rest = spec.strip().partition(":")
        known = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {"kind": kind.strip()}
        for item in filter(None, (part.strip() for part in rest.split(","))):
            key, sep, text = (s.strip() for s in item.partition("="))
            if not sep or key not in known or key == "kind":
                valid = ", ".join(k for k in known if k != "kind")
                raise ConfigError(f"bad vector index spec {spec!r} at {item!r}: want key=value, keys: {valid}")
            values[key] = _parse_value(key, text, spec)
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def require_int(name: str, value: object, minimum: int) -> None:
    """Refuse a vector index parameter that is not an integer of at least ``minimum``."""
    if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"vector index {name} must be an integer >= {minimum}, got {value!r}")


def _parse_value(key: str, text: str, spec: str) -> Any:
    if text.lower() in ("none", "auto"):
        return None
    try:
        return float(text) if key == "exact_search_below" else text if key == "metric" else int(text)
    except ValueError:
        raise ConfigError(f"bad vector index spec {spec!r}: {key}={text!r} is not a number") from None


def as_config(config: VectorIndexConfig | str | None) -> VectorIndexConfig:
    """A config as given, parsed from a spec, or the default (None)."""
    if config is None:
        return VectorIndexConfig()
    return VectorIndexConfig.parse(config) if isinstance(config, str) else config
