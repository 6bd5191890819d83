"""``PipelineConfig``: one description of a whole pipeline, from ingestion to the reader.

    ingest -> index -> retrieve -> transform -> fuse -> rerank -> expand -> guard -> compress -> order -> read

Each stage names registered components (``ragline.components``) by spec string or by table, so a
config is data: it loads from TOML or YAML, round-trips through ``to_dict``/``from_dict``, is stamped
whole in every result's provenance, and an experiment is a list of configs. Named pipelines ship in
``pipelines/*.toml`` (in a checkout, and inside the installed package): ``load_config("default")``
finds one by name, ``load_config("my.toml")`` reads a file. ``SCHEMA`` versions the layout; a config
of another schema is refused with a message that says what to change.

A minimal file (every key has a default; see ``pipelines/default.toml`` for all of them)::

    schema = 1
    [retrieve]
    retriever = "hybrid:fuser=rrf"
    [read]
    reader = "extractive"
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ragline.errors import ConfigError, InputError

SCHEMA = 1
FILTER_PLACEMENTS = ("inside", "after")  # "after" is unsafe: only `ragline doctor` runs it
FRESHNESS_CHECKS = ("check", "off")
DATE_ORDERS = ("order", "off")
Spec = str | dict[str, Any]  # "bm25:k1=1.2" or {"name": "bm25", "k1": 1.2}


@dataclass(frozen=True)
class IngestStage:
    chunker: str = "sentence-pack:tokens=128,overlap=1"  # chosen by the chunking experiment (BENCHMARKS.md)
    context: str = "breadcrumb"


@dataclass(frozen=True)
class IndexStage:
    analyzer: str = "english"
    fields: dict[str, float] = field(default_factory=lambda: {"body": 1.0})
    embedder: str = "minilm"  # "none": BM25 only
    vector_index: str = "hnsw"
    bm25: dict[str, Any] = field(default_factory=dict)  # BM25Params overrides (variant, k1, b, ...)

    def settings(self, ingest: IngestStage | None = None, embed: bool = True) -> Any:
        """The ``IndexSettings`` of this stage (``embed=False``: no vectors, whatever the embedder)."""
        from ragline.index import BM25Params, IndexSettings
        from ragline.index.segment import check_fields
        from ragline.text import get_analyzer

        embedder = None if not embed or self.embedder.lower() == "none" else self.embedder
        return IndexSettings(
            analyzer=get_analyzer(self.analyzer),
            fields=check_fields(dict(self.fields)),
            bm25=BM25Params(**self.bm25),
            embedder=embedder,
            vector_index=self.vector_index,
            chunker=ingest.chunker if ingest else "none",
            context=ingest.context if ingest else "none",
        )


@dataclass(frozen=True)
class RetrieveStage:
    retriever: Spec = "hybrid"
    k: int = 5  # hits handed on (to the reranker, or to the reader when there is none)
    versions: str = "current"  # current | as-of=DATE | all (ragline.answer.version_policy)
    # Where the ACL filter runs: "inside" retrieval (forbidden chunks are never candidates). "after" (the
    # filter applied to the top-k, so restricted text reaches the reranker and the reader) exists only so
    # that `ragline doctor` can measure the leak; every other command refuses it (``require_safe``).
    filter: str = "inside"
    freshness: str = "check"  # check: report cited sources changed on disk since indexing | off
    dates: str = "order"  # order: "the most recent/oldest X" read from the newest/oldest dated X | off


@dataclass(frozen=True)
class TransformStage:
    transforms: tuple[Spec, ...] = ()  # query transforms; each query's hits are fused with `fuser`
    fuser: str = "rrf"


@dataclass(frozen=True)
class RerankStage:
    reranker: Spec | None = None
    depth: int = 50  # first-stage candidates the reranker sees (its recall ceiling)


@dataclass(frozen=True)
class ExpandStage:
    expander: Spec | None = None  # e.g. "section:max_chars=2000" (small-to-big)


@dataclass(frozen=True)
class GuardStage:
    guard: Spec | None = None  # an injection firewall over retrieved text, e.g. "firewall:policy=drop"


@dataclass(frozen=True)
class CompressStage:
    compressor: Spec | None = None  # sentence selection before the context, e.g. "overlap" or "cross"
    budget: int = 200  # tokens of source text kept over all hits (each hit keeps its best sentence)


@dataclass(frozen=True)
class OrderStage:
    order: str = "rank"  # rank | ends | reverse (lost in the middle)
    budget: int = 1500  # context tokens


@dataclass(frozen=True)
class ReadStage:
    reader: Spec = "extractive"  # "none": retrieval only (``ragline eval`` then scores retrieval)

    @property
    def enabled(self) -> bool:
        return not (isinstance(self.reader, str) and self.reader.strip().lower() == "none")


_STAGES = {
    "ingest": IngestStage,
    "index": IndexStage,
    "retrieve": RetrieveStage,
    "transform": TransformStage,
    "rerank": RerankStage,
    "expand": ExpandStage,
    "guard": GuardStage,
    "compress": CompressStage,
    "order": OrderStage,
    "read": ReadStage,
}


@dataclass(frozen=True)
class PipelineConfig:
    """The whole pipeline; ``from_dict(c.to_dict()) == c``."""

    name: str = "default"
    description: str = ""
    ingest: IngestStage = field(default_factory=IngestStage)
    index: IndexStage = field(default_factory=IndexStage)
    retrieve: RetrieveStage = field(default_factory=RetrieveStage)
    transform: TransformStage = field(default_factory=TransformStage)
    rerank: RerankStage = field(default_factory=RerankStage)
    expand: ExpandStage = field(default_factory=ExpandStage)
    guard: GuardStage = field(default_factory=GuardStage)
    compress: CompressStage = field(default_factory=CompressStage)
    order: OrderStage = field(default_factory=OrderStage)
    read: ReadStage = field(default_factory=ReadStage)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema": SCHEMA, "name": self.name, "description": self.description}
        for stage in _STAGES:
            values = asdict(getattr(self, stage))
            out[stage] = {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "pipeline config") -> PipelineConfig:
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a table of stages, got {type(data).__name__}")
        schema = data.get("schema", SCHEMA)
        if schema != SCHEMA:
            raise ConfigError(f"{where}: schema {schema!r}, this ragline reads schema {SCHEMA}; update the file")
        unknown = sorted(set(data) - {"schema", "name", "description", *_STAGES})
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; stages are {', '.join(_STAGES)}")
        stages = {name: _stage(kind, data.get(name) or {}, f"{where} [{name}]") for name, kind in _STAGES.items()}
        return cls(name=str(data.get("name", "default")), description=str(data.get("description", "")), **stages)

    def with_overrides(self, **stages: dict[str, Any]) -> PipelineConfig:
        """A copy with some stage keys replaced: ``c.with_overrides(read={"reader": "llm"})``."""
        changed = {name: replace(getattr(self, name), **values) for name, values in stages.items() if values}
        return replace(self, **changed)

    def to_toml(self) -> str:
        return dumps_toml(self.to_dict())

    def fingerprint(self) -> str:
        import hashlib

        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:12]


def _stage(kind: type, values: Any, where: str) -> Any:
    if not isinstance(values, dict):
        raise ConfigError(f"{where}: expected a table, got {type(values).__name__}")
    known = {f.name: f for f in fields(kind)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; it takes {', '.join(known)}")
    given = dict(values)
    if "transforms" in given:
        if not isinstance(given["transforms"], list):
            raise ConfigError(f"{where}: transforms must be a list of specs")
        given["transforms"] = tuple(given["transforms"])
    if "versions" in given:
        from ragline.answer.version_policy import VersionPolicy

        given["versions"] = str(VersionPolicy.parse(str(given["versions"])))  # checked here, named in the error
    for key, allowed in (("filter", FILTER_PLACEMENTS), ("freshness", FRESHNESS_CHECKS), ("dates", DATE_ORDERS)):
        if key in given and given[key] not in allowed:
            raise ConfigError(f"{where}: {key} must be one of {', '.join(allowed)}, got {given[key]!r}")
    for key in ("k", "depth", "budget"):
        if key in given and (not isinstance(given[key], int) or isinstance(given[key], bool) or given[key] < 1):
            raise ConfigError(f"{where}: {key} must be a whole number >= 1, got {given[key]!r}")
    return kind(**given)


def require_safe(config: PipelineConfig, command: str) -> PipelineConfig:
    """``config`` unchanged, or ``ConfigError`` when its ACL filter runs after top-k (``[retrieve] filter``).

    Filtering after top-k hands restricted chunks to the reranker and the reader; only ``ragline doctor``
    builds that arm, to measure the leak. ``command`` names who refuses, for the message.
    """
    if config.retrieve.filter != "inside":
        raise ConfigError(
            f"pipeline {config.name!r}: [retrieve] filter = {config.retrieve.filter!r} lets restricted chunks "
            f'reach the reranker and the reader; `ragline {command}` runs only filter = "inside" (set it, or '
            "remove the key). `ragline doctor` measures the unsafe placement"
        )
    return config


# -- loading -------------------------------------------------------------------------------------------
def pipeline_names() -> list[str]:
    """The named pipelines that ship with ragline (``pipelines/*.toml``)."""
    return sorted(p.name[: -len(".toml")] for p in _shipped().iterdir() if p.name.endswith(".toml"))


def load_config(source: str | Path) -> PipelineConfig:
    """A config from a file (``.toml``, ``.yaml``/``.yml``, ``.json``) or a shipped pipeline's name."""
    path = Path(source)
    if path.is_file():
        return PipelineConfig.from_dict(_read(path.read_bytes(), path.suffix.lower(), str(path)), str(path))
    name = str(source)
    if path.suffix or "/" in name:
        raise ConfigError(f"no pipeline config file {name}")
    shipped = _shipped() / f"{name}.toml"
    if not shipped.is_file():
        raise ConfigError(f"no pipeline config {name!r}: not a file, nor one of {', '.join(pipeline_names())}")
    return PipelineConfig.from_dict(_read(shipped.read_bytes(), ".toml", name), f"pipeline {name!r}")


def _shipped() -> Path:
    """The folder of named pipelines: inside an installed package (the build copies the repository's
    ``pipelines/`` there), else the repository's own ``pipelines/`` (a checkout or an editable install).

    A path beside this module, not ``importlib.resources`` (the package is never zipped): importing that
    and its readers cost every command ~1.5 ms.
    """
    packaged = Path(__file__).parent / "pipelines"
    return packaged if packaged.is_dir() else Path(__file__).parents[2] / "pipelines"


def _read(data: bytes, suffix: str, where: str) -> Any:
    try:
        text = data.decode("utf-8")
        if suffix in (".yaml", ".yml"):  # a key given twice is refused, not the last one kept
            from ragline.ingest.files import bounded_yaml

            return bounded_yaml(text, where, "the pipeline config", "fix it before it is used", first_line=1)
        if suffix == ".json":
            from ragline.ingest.files import unique_keys

            return json.loads(text, object_pairs_hook=unique_keys)
        return tomllib.loads(text)  # TOML refuses a repeated key itself
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not UTF-8 text") from None
    except InputError as error:  # the YAML reader's refusals (a repeated key, an alias bomb) name the problem
        raise ConfigError(f"{where}: {error.reason}") from None
    except (tomllib.TOMLDecodeError, ValueError) as error:
        raise ConfigError(f"{where}: cannot parse: {error}") from None
    except Exception as error:  # yaml.YAMLError, without importing yaml at module level
        raise ConfigError(f"{where}: cannot parse: {error}") from None


# -- writing -------------------------------------------------------------------------------------------
def dumps_toml(data: dict[str, Any]) -> str:
    """TOML for a config dict (scalars, lists, inline tables; one table per stage). None is left out."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict) and v is not None]
    for key, table in data.items():
        if isinstance(table, dict):
            lines += ["", f"[{key}]"]
            lines += [f"{k} = {_toml_value(v)}" for k, v in table.items() if v is not None]
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = [f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    raise ConfigError(f"cannot write {type(value).__name__} {value!r} as TOML")
