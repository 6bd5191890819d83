"""``ragline demo`` (and ``make demo``): the Orrin Grid knowledge base indexed, searched, answered, measured.

1. Builds (once; cached) the built-in index: 100-word chunks with breadcrumbs, BM25 + MiniLM.
2. One question of each type, asked as its user (ACL filter inside retrieval): the top sources, the
   extractive reader's answer with its citation, and the grade (right answer from a gold document).
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
from ragline.corpora.builtin import orrin_index
from ragline.eval import chunking
from ragline.eval.answers import grade_question
from ragline.eval.typed import acl_filter, hit_by_type
from ragline.retrieve.registry import build_retriever


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
    extractive = RAGPipeline(index, build_reader("extractive"), retriever="hybrid")

    shown = Table(title="One question of each type, asked as its user: sources (✓ gold document) and answer")
    for column in ("type", "question (user's groups)", "top 3 sources", "extractive answer [cited source]", "grade"):
        shown.add_column(column, overflow="fold")
    for qtype in dict.fromkeys(q.type for q in corpus.questions):
        q = next(q for q in corpus.questions if q.type == qtype)
        answer, context = extractive.answer(q.text, acl_filter(q))
        sources = "\n".join(
            ("✓ " if s.doc_id in q.gold_doc_ids else "  ") + f"[{s.n}] {escape(s.chunk_id)}"
            for s in context.sources[:3]
        )
        said = "(abstains)" if answer.abstained else answer.text + "".join(f" [{c.n}]" for c in answer.citations)
        grade = grade_question(q, answer, context).outcome
        colour = {"correct": "green", "wrong": "red"}.get(grade, "yellow")
        asked = f"{escape(q.text)}\n[dim]({escape(', '.join(q.user_groups))})[/]"
        shown.add_row(qtype, asked, sources, escape(said), f"[{colour}]{grade}[/]")
    console.print(shown)

    if llm if llm is not None else os.environ.get("RAGLINE_DEMO_LLM", "1") != "0":
        _llm_answers(console, index, corpus)

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
    chunk_table = Table(title="Chunking (BM25): Hit@1 by type; split = evidence sentences cut by a chunk boundary")
    for column in ("chunker", "context", "chunks", "split", *types, "all"):
        chunk_table.add_column(column, justify="left" if column in ("chunker", "context") else "right")
    for row in rows:
        cells = [row["by_type"][t]["hit@1"] for t in [*types, "all"]]
        chunk_table.add_row(row["chunker"], row["context"], str(row["chunks"]), f"{row['split_evidence']:.0%}",
                            *("—" if c is None else f"{c:.2f}" for c in cells))  # fmt: skip
    console.print(chunk_table)
    console.print("[dim]dense, hybrid and late chunking: ragline experiment chunking (BENCHMARKS.md has the table)[/]")
    console.print(f"[dim]done in {time.perf_counter() - started:.0f} s[/]")
    return 0


def _llm_answers(console: Console, index, corpus) -> None:  # type: ignore[no-untyped-def]
    """Two questions answered by the local LLM, streamed, with their cited sources."""
    from ragline.errors import RaglineError

    try:
        pipeline = RAGPipeline(index, build_reader("llm:max_tokens=64"), retriever="hybrid")
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
