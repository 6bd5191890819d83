"""Stale index: a document is edited on disk, the index is not synced, and the question is asked.

The probe copies the gold documents of every literal and paraphrase question whose answer is written in
its gold document into a folder, indexes it with the configured pipeline, then rewrites each answer value
in its file (no sync) and asks. A *silent stale answer* states the old value, which the file no longer
holds, with no warning; a question the pipeline does not answer with the old value cannot go stale and
counts as no failure (so the rate is over every question asked, in both arms). *Unfixed*:
no freshness check; *fixed*: the cited sources are re-read (``ragline.freshness.stale_sources``) and a
changed one is reported with the answer; *configured*: ``[retrieve] freshness`` of the config.
Rule: ``rate_rule`` on silent stale answers of the configured arm.
"""

from __future__ import annotations

import time

from ragline.components import register
from ragline.doctor.base import DoctorRun, Probe, ProbeResult, build_index, cannot_run
from ragline.doctor.probefile import ProbeFile
from ragline.doctor.rules import rate_rule

NAME = "stale index"
EMBEDDED_ONLY = (
    "it re-reads the source files `ragline index` recorded in an embedded index, "
    "and a store records none (ask and search skip the freshness check on a store too)"
)
FIX = "freshness check: re-read the cited files, report changed ones (`ragline index` to sync)"
REPLACEMENT = "withdrawn pending review"  # the edited value: no question's answer


def run(r: DoctorRun) -> ProbeResult:
    from ragline.answer.pipeline import RAGPipeline
    from ragline.freshness import stale_sources

    started = time.perf_counter()
    documents = {d.id: d for d in r.documents()}
    questions = [
        q
        for q in r.probes.of_type("literal", "paraphrase")
        if len(q.gold_doc_ids) == 1 and q.answer and q.answer in getattr(documents.get(q.gold_doc_ids[0]), "text", "")
    ]
    if not questions:
        return cannot_run(NAME, FIX, "no literal or paraphrase question whose answer is written in its gold document")
    folder = r.folder / "stale-documents"
    folder.mkdir(parents=True, exist_ok=True)
    for doc_id in {q.gold_doc_ids[0] for q in questions}:
        (folder / f"{doc_id}.md").write_text(documents[doc_id].text, encoding="utf-8")
    index = build_index(r.config, ProbeFile(str(folder), documents=folder), r.folder / "stale-index")
    for q in questions:  # the edit nobody synced
        path = folder / f"{q.gold_doc_ids[0]}.md"
        path.write_text(path.read_text(encoding="utf-8").replace(q.answer, REPLACEMENT), encoding="utf-8")
    pipeline = RAGPipeline.from_config(r.config, index)
    silent = {"unfixed": 0, "fixed": 0}
    for q in questions:
        answer, context = pipeline.answer(q.text)
        states_old = not answer.abstained and any(a.lower() in answer.text.lower() for a in q.answers)
        cited = {c.chunk_id for c in answer.citations}
        hits = [s.hit for s in context.sources if s.hit.doc_id in cited] or [s.hit for s in context.sources]
        warned = bool(stale_sources(index, hits, roots=[folder]))
        silent["unfixed"] += states_old
        silent["fixed"] += states_old and not warned
    index.close()
    n = len(questions)
    configured = silent["fixed"] if r.config.retrieve.freshness == "check" else silent["unfixed"]
    arms = {arm: {"silent_stale": round(v / n, 3), "n": n} for arm, v in silent.items()}
    arms["configured"] = {"silent_stale": round(configured / n, 3), "n": n, "freshness": r.config.retrieve.freshness}
    return ProbeResult.judged(
        NAME,
        rate_rule(configured, n),
        f"{configured}/{n} answers state an edited value without a warning",
        FIX,
        arms=arms,
        seconds=time.perf_counter() - started,
        plot={
            "title": "silent stale answers",
            "labels": ["unfixed", "configured", "fixed"],
            "series": {
                "rate": [
                    arms["unfixed"]["silent_stale"],
                    arms["configured"]["silent_stale"],
                    arms["fixed"]["silent_stale"],
                ]
            },
        },
    )


@register("probe", "stale index")
def probe() -> Probe:
    """Answers that state a value edited on disk since indexing, with and without the freshness check."""
    return Probe(NAME, run, rank=20, fix=FIX, embedded_only=EMBEDDED_ONLY)
