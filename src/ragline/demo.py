"""``ragline demo`` (and ``make demo``): the Orrin Grid knowledge base indexed, searched, answered, measured.

1. Builds (once; cached) the built-in index: the default pipeline's chunks, BM25 + MiniLM.
2. One question of each type, asked as its user (ACL filter inside retrieval) of the default pipeline
   (``pipelines/default.toml``; its reader is the extractive one when RAGLINE_DEMO_LLM=0 or the LLM
   cannot load): the top sources, the answer with its citations, and the grade (right answer from a
   gold document) with why a wrong one is wrong (wrong value, uncited, cut, ...).
3. Two answers from the local LLM (Qwen2.5-Coder-0.5B), streamed, with numbered citations.
4. Hit@1 / Hit@3 by question type for BM25, dense and hybrid retrieval.
5. The chunking table (BM25 part, computed live in seconds; the full table is in BENCHMARKS.md).
"""

from __future__ import annotations

import os
import sys
import time

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragline.answer.pipeline import RAGPipeline, build_reader
from ragline.answer.prompt import supported_only
from ragline.corpora.builtin import orrin_index
from ragline.eval import chunking
from ragline.eval.answers import grade_question, grade_reason, match_for
from ragline.eval.typed import acl_filter, hit_by_type
from ragline.retrieve.registry import build_retriever
from ragline.types import Answer


def main(llm: bool | None = None) -> int:
    """The tour; ``llm`` False skips the local LLM's answers (default: unless ``RAGLINE_DEMO_LLM=0``)."""
    console = Console(width=max(Console().width, 140))  # tables of ids need room, even in a log
    started = time.perf_counter()
    index, corpus = orrin_index()
    console.rule(f"[bold]ragline demo[/]: the {corpus.company} knowledge base")
    console.print(
        f"{len(corpus.documents)} documents in {len(index)} chunks, {len(corpus.questions)} typed questions; "
        f"index {index.path}"
    )
    pipeline, reader = _default_pipeline(console, index)
    shown = Table(
        title="One question of each type, asked as its user of the default pipeline: sources "
        "(✓ gold document), answer, grade and why"
    )
    for column in ("type", "question (user's groups)", "top 3 sources", f"{reader} answer [cited source]", "grade"):
        shown.add_column(column, overflow="fold")
    for qtype in dict.fromkeys(q.type for q in corpus.questions):
        q = next(q for q in corpus.questions if q.type == qtype)
        answer, context = pipeline.answer(q.text, acl_filter(q))
        sources = "\n".join(
            ("✓ " if s.doc_id in q.gold_doc_ids else "  ") + f"[{s.n}] {escape(s.chunk_id)}"
            for s in context.sources[:3]
        )
        said = said_with_citations(answer)
        stage = answer.details.get("stage")  # a cascade's stage that answered: graded as that reader's answers are
        said += f"\n(by the {stage} stage)" if stage else ""
        grade = grade_question(q, answer, context, match=match_for(stage or reader))
        why = grade_reason(grade, answer, context)
        colour = {"correct": "green", "wrong": "red"}.get(grade.outcome, "yellow")
        asked = f"{escape(q.text)}\n[dim]({escape(', '.join(q.user_groups))})[/]"
        verdict = f"[{colour}]{grade.outcome}[/]" + (f"\n{escape(why)}" if why != grade.outcome else "")
        shown.add_row(qtype, asked, sources, escape(said), verdict)
    console.print(shown)

    if llm if llm is not None else os.environ.get("RAGLINE_DEMO_LLM", "1") != "0":
        _llm_answers(console, index, corpus, getattr(pipeline.reader, "llm", None))

    scores = {name: hit_by_type(build_retriever(name, index), corpus.questions) for name in chunking.RETRIEVERS}
    table = Table(title="Retrieval by question type: Hit@1 / Hit@3 (leaks: a forbidden document in the top 3)")
    table.add_column("type")
    table.add_column("n", justify="right")
    for name in chunking.RETRIEVERS:
        table.add_column(name, justify="right")
    for qtype in [*dict.fromkeys(q.type for q in corpus.questions), "all"]:
        row = [qtype, str(scores["bm25"][qtype]["questions"])]
        for name in chunking.RETRIEVERS:
            s = scores[name][qtype]
            hits = "n/a" if s["hit@1"] is None else f"{s['hit@1']:.2f} / {s['hit@3']:.2f}"
            row.append(hits + (f"  [red]{s['leaks']} leaks[/]" if s["leaks"] else ""))
        table.add_row(*row)
    console.print(table)

    rows = chunking.run(corpus, contexts=("none", "breadcrumb"), retrievers=("bm25",))
    types = [t for t in rows[0]["by_type"] if t != "all"]
    chunk_table = Table(
        title="Chunking (BM25): Hit@1 by type; split = evidence sentences no chunk holds whole, "
        "cut = evidence sentences some chunk holds only a part of"
    )
    for column in ("chunker", "context", "chunks", "split", "cut", *types, "all"):
        chunk_table.add_column(column, justify="left" if column in ("chunker", "context") else "right")
    for row in rows:
        cells = ["—" if c is None else f"{c:.2f}" for c in (row["by_type"][t]["hit@1"] for t in [*types, "all"])]
        shares = (f"{row['split_evidence']:.0%}", f"{row['cut_evidence']:.0%}")
        chunk_table.add_row(row["chunker"], row["context"], str(row["chunks"]), *shares, *cells)
    console.print(chunk_table)
    console.print("[dim]dense, hybrid and late chunking: ragline experiment chunking (BENCHMARKS.md has the table)[/]")
    console.print(f"[dim]done in {time.perf_counter() - started:.0f} s[/]")
    return 0


def said_with_citations(answer: Answer) -> str:
    """The answer and the numbers of the sources whose sentence states it ("$60 [1]"); an LLM may name more
    sources, which the support check rejected: they are shown only when none is supported."""
    if answer.abstained:
        return "(abstains)"
    return answer.text + "".join(f" [{c.n}]" for c in supported_only(list(answer.citations)))


def _default_pipeline(console: Console, index):  # type: ignore[no-untyped-def]
    """The default pipeline over ``index`` and its reader's name; the extractive reader in its place
    when RAGLINE_DEMO_LLM=0 or the configured reader cannot be built (no LLM wheel)."""
    from ragline.config import load_config
    from ragline.errors import RaglineError

    config = load_config("default")
    spec = config.read.reader
    name = (spec if isinstance(spec, str) else str(spec.get("name", ""))).split(":")[0]
    if os.environ.get("RAGLINE_DEMO_LLM", "1") != "0" or "llm" not in str(spec):  # no LLM: nothing to opt out of
        try:
            return RAGPipeline.from_config(config, index), name
        except RaglineError as error:
            console.print(f"[yellow]the default reader is unavailable ({escape(str(error))}): extractive reads[/]")
    return RAGPipeline.from_config(config.with_overrides(read={"reader": "extractive"}), index), "extractive"


def _llm_answers(console: Console, index, corpus, llm=None) -> None:  # type: ignore[no-untyped-def]
    """Two questions answered by the local LLM (``llm``: the model already loaded), streamed, with their
    cited sources."""
    from ragline.errors import RaglineError

    try:
        pipeline = RAGPipeline(index, build_reader("llm:max_tokens=64", llm=llm), retriever="hybrid")
    except RaglineError as error:
        console.print(f"[yellow]LLM answers skipped: {escape(str(error))}[/]")
        return
    console.rule("the local LLM answers (Qwen2.5-Coder-0.5B, offline), citing numbered sources")
    for qtype in ("literal", "version"):
        q = next(q for q in corpus.questions if q.type == qtype)
        context = pipeline.context(q.text, acl_filter(q))
        console.print(f"[bold]Q ({qtype}):[/] {escape(q.text)}")
        console.print("[bold]A:[/] ", end="")
        answer = None
        for piece in pipeline.reader.stream(q.text, context):
            if isinstance(piece, str):
                console.out(piece, end="", highlight=False)
            else:
                answer = piece
        console.out("")
        for c in answer.citations if answer else []:
            how = "attributed by ragline" if answer.details.get("attributed") else "cited"
            console.print(escape(f"   [{c.n}] {c.chunk_id} ({how}; supports the answer: {c.supported})"))
        grade = grade_question(q, answer, context, match="contains").outcome if answer else "?"
        console.print(f"   gold: {escape(str(q.answer))} -> {grade}\n")


if __name__ == "__main__":
    sys.exit(main())
