"""What every probe shares: the index of the configured pipeline, its variants, and one graded question.

A ``DoctorRun`` holds the pipeline config under examination, the index its ingest and index stages
build over the probe file's documents, and the probe file. ``pipeline(**overrides)`` builds the
configured pipeline or a variant of it (one fix switched on or off) over the same index, so every arm
of a probe answers the same questions from the same chunks.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragline.config import PipelineConfig
from ragline.corpora.base import Question
from ragline.doctor.probefile import ProbeFile
from ragline.doctor.rules import Verdict
from ragline.index.filters import acl_filter

Log = Callable[[str], None]


@dataclass(frozen=True)
class Probe:
    """A failure mode ``ragline doctor`` measures, as the registry holds it (role ``probe``).

    A probe is one module of ``ragline.doctor`` that registers a factory returning one of these:
    ``run(doctor_run)`` gives its report row, ``rank`` orders the rows, ``llm_calls(doctor_run)`` bounds its
    LLM calls (None: one per question and arm), and ``embedded_only`` says why it cannot run on a store other
    than the embedded index ('' when it runs on any store).
    """

    name: str
    run: Callable[[DoctorRun], ProbeResult]
    rank: int
    fix: str = ""
    llm_calls: Callable[[DoctorRun], int] | None = None
    embedded_only: str = ""


@dataclass
class ProbeResult:
    """One row of the doctor's table, with the arms behind it."""

    name: str
    status: str  # pass | flag
    figure: str  # the configured pipeline's number, in words
    fix: str  # the fix that helps
    rule: str = ""
    arms: dict[str, dict[str, Any]] = field(default_factory=dict)  # unfixed | fixed | configured -> figures
    plot: dict[str, Any] | None = None  # {"title", "labels", "series": {name: [values]}}
    reason: str | None = None  # why the probe could not run (status flag)
    seconds: float = 0.0
    model: str = ""  # the reader (and its LLM) whose answers the probe judged

    @classmethod
    def judged(cls, name: str, verdict: Verdict, figure: str, fix: str, **rest: Any) -> ProbeResult:
        return cls(name, verdict.status, figure, fix, rule=verdict.rule, **rest)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "status": self.status,
            "figure": self.figure,
            "fix": self.fix,
            "rule": self.rule,
            "arms": self.arms,
            "plot": self.plot,
            "seconds": round(self.seconds, 1),
            "model": self.model,
        }
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class DoctorRun:
    config: PipelineConfig
    probes: ProbeFile
    index: Any = None
    log: Log | None = None
    quick: bool = False  # a smoke run: a few questions of each type (``quick_sample``)
    store: str = ""  # the store ``index`` was opened from (``doctor --store``), named without its password
    work: Path | None = None  # where probes build their indexes; None: a temporary folder that close() removes

    def __post_init__(self) -> None:
        # The indexes built here can be the whole probe corpus with its vectors: a run that made its own
        # folder removes it (close(), or the finalizer when a caller forgets), so runs do not pile up in /tmp.
        self._temporary = tempfile.TemporaryDirectory(prefix="ragline-doctor-") if self.work is None else None
        self.folder = Path(self._temporary.name) if self._temporary is not None else Path(str(self.work))
        if self.index is None:
            self.index = build_index(self.config, self.probes, self.folder / "index")

    def close(self) -> None:
        """Remove the temporary folder this run made (a ``work`` folder the caller gave is the caller's)."""
        if self._temporary is not None:
            self._temporary.cleanup()

    def say(self, text: str) -> None:
        if self.log is not None:
            self.log(text)

    def pipeline(self, reader: bool = True, **stages: dict[str, Any]) -> Any:
        """The configured pipeline with ``stages`` overridden (``retrieve={"retriever": "hybrid"}``)."""
        from ragline.answer.pipeline import RAGPipeline

        config = self.config.with_overrides(**stages)
        return RAGPipeline.from_config(config, self.index, reader=reader)

    @staticmethod
    def reader_calls_llm(spec: Any) -> int:
        """1 when the reader ``spec`` calls an LLM (an ``llm`` reader, or an agent reading or decomposing with one)."""
        named = reader_model(spec)
        return int("llm (" in named or "LLM decomposer" in named)

    @property
    def on_store(self) -> bool:
        """Whether the probes run on a store other than the embedded index (``doctor --store milvus://...``)."""
        from ragline.store import is_embedded

        return bool(self.store) and not is_embedded(self.index)

    @property
    def has_vectors(self) -> bool:
        return bool(self.index.settings.embedder)

    def documents(self) -> list[Any]:
        """The probe file's documents (Orrin's, or the folder's)."""
        if self.probes.corpus:
            from ragline.corpora.orrin import DEFAULT_SEED, build_orrin

            return list(build_orrin(self.probes.seed or DEFAULT_SEED).documents)
        from ragline.freshness import load_source

        return list(load_source(self.probes.documents, max_bytes=50_000_000).documents)


def build_index(config: PipelineConfig, probes: ProbeFile, path: Path) -> Any:
    """The index ``config`` would build over the probe file's documents (Orrin's is cached between runs)."""
    from ragline.index import Index
    from ragline.ingest.pipeline import IngestConfig, chunk_documents

    settings = config.index.settings(config.ingest)
    ingest = IngestConfig(config.ingest.chunker, config.ingest.context)
    if probes.corpus:
        from ragline.corpora.builtin import orrin_index
        from ragline.corpora.orrin import DEFAULT_SEED

        return orrin_index(settings, ingest, probes.seed or DEFAULT_SEED)[0]
    from ragline.freshness import load_source, record_source

    report = load_source(probes.documents, max_bytes=50_000_000)
    index = Index.create(path, settings)
    chunks, vectors = chunk_documents(report.documents, ingest, None)
    index.add(chunks, vectors)
    index.commit()
    record_source(path, probes.documents)
    return index


def absent_gold(index: Any, probes: ProbeFile) -> list[str]:
    """The gold documents of the probe file's questions that ``index`` (an index or any store) does not hold:
    neither as chunks (their ``doc_id``) nor whole (under their own id, as ``--chunker none`` indexes them)."""
    from ragline.index.filters import Compare
    from ragline.store import as_collection

    gold = sorted({d for q in probes.questions for d in q.gold_doc_ids})
    if not gold:
        return []
    collection = as_collection(index)
    held = {d.document_id for d in collection.filter_documents(Compare("doc_id", "in", tuple(gold)))}
    return [d for d in gold if d not in held and collection.get(d) is None]


def reader_model(spec: Any) -> str:
    """The reader a spec names, with the LLM it calls: ``llm (local:qwen2.5-coder-0.5b)``, ``agent (extractive)``."""
    from ragline.models.llm.load import DEFAULT_LLM
    from ragline.specs import parse_spec

    name, params = parse_spec(spec, "reader") if isinstance(spec, str) else (str(spec.get("name", "")), dict(spec))
    if name == "llm":
        return f"llm ({params.get('model') or DEFAULT_LLM})"
    if name == "agent":
        inner = reader_model(str(params.get("reader", "extractive")))
        return f"agent ({inner}" + (", LLM decomposer)" if params.get("decomposer") == "llm" else ")")
    return name


def filter_of(question: Question) -> Any:
    """The ACL filter of the user asking ``question``."""
    return acl_filter(question.user_groups)


def hit_at(hits: list[Any], gold: list[str]) -> float:
    """1.0 when a hit belongs to a gold document."""
    return 1.0 if any(h.document_id in gold for h in hits) else 0.0


def grade(question: Question, answer: Any, context: Any) -> str:
    """correct | wrong | abstained (an answer counts only if right and cited from a gold document).

    A conflict note appended to the answer (``ragline.answer.versions.annotate_conflicts``) names the
    other value on purpose; the reader's own answer is graded.
    """
    from ragline.answer.versions import reader_answer
    from ragline.eval.answers import grade_question

    answer = reader_answer(answer)
    return str(grade_question(question, answer, context).outcome)


def rate(values: dict[str, float]) -> float | None:
    return round(sum(values.values()) / len(values), 3) if values else None


def cannot_run(name: str, fix: str, reason: str) -> ProbeResult:
    return ProbeResult(name, "flag", "—", fix, reason=reason, rule="the probe could not run")


def outcomes(pipeline: Any, questions: list[Question]) -> dict[str, str]:
    """Each question's outcome (correct | wrong | abstained) under ``pipeline``, asked as its user."""
    out = {}
    for q in questions:
        answer, context = pipeline.answer(q.text, filter_of(q))
        out[q.id] = grade(q, answer, context)
    return out


def scores(graded: dict[str, str], outcome: str = "correct") -> dict[str, float]:
    return {qid: float(o == outcome) for qid, o in graded.items()}


def compared(
    name: str,
    fix: str,
    what: str,
    unfixed: dict[str, str],
    fixed: dict[str, str],
    configured: dict[str, str],
    started: float,
    outcome: str = "correct",
    extra: Any = None,
    not_wrong: bool = False,
) -> ProbeResult:
    """A quality probe's row: ``paired_rule`` on ``outcome`` (1 good), the three arms' rates, a bar plot.

    ``not_wrong``: the rule scores "not wrong" (correct or abstained) instead, for probes whose failure
    is a confident wrong answer where abstaining was the honest output.
    """
    from ragline.doctor.rules import paired_rule

    arms = {
        arm: {o: rate(scores(g, o)) for o in ("correct", "wrong", "abstained")} | {"n": len(g)}
        for arm, g in (("unfixed", unfixed), ("fixed", fixed), ("configured", configured))
    }
    if not_wrong:
        verdict = paired_rule(
            {q: 1.0 - v for q, v in scores(fixed, "wrong").items()},
            {q: 1.0 - v for q, v in scores(configured, "wrong").items()},
        )
        verdict = Verdict(verdict.status, "not wrong (correct or abstained): " + verdict.rule)
    else:
        verdict = paired_rule(scores(fixed, outcome), scores(configured, outcome))
    series = {o: [arms[a][o] for a in ("unfixed", "configured", "fixed")] for o in ("correct", "wrong", "abstained")}
    result = ProbeResult.judged(
        name,
        verdict,
        f"{what}: {rate(scores(configured, outcome))} correct, {rate(scores(configured, 'wrong'))} wrong",
        fix,
        arms=arms,
        plot={"title": what, "labels": ["unfixed", "configured", "fixed"], "series": series},
    )
    if extra:
        result.arms["configured"].update(extra)
    result.seconds = time.perf_counter() - started
    return result
