"""``make demo``: the Orrin Grid knowledge base, indexed, searched by question type, measured.

Builds (once; cached) a hybrid index of the fictional energy company's 87 documents, shows what
each retriever finds for one question of each type, asked as the question's user (ACL filter inside
retrieval), and prints Hit@1 / Hit@3 by question type for BM25, dense and hybrid retrieval.
"""

from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.table import Table

from ragline.corpora.builtin import orrin_index
from ragline.eval.typed import acl_filter, hit_by_type
from ragline.retrieve.registry import build_retriever

RETRIEVERS = ("bm25", "dense", "hybrid")


def main() -> int:
    console = Console(width=max(Console().width, 140))  # tables of ids need room, even in a log
    started = time.perf_counter()
    index, corpus = orrin_index()
    console.rule(f"[bold]ragline demo[/]: {corpus.company} knowledge base")
    console.print(
        f"{len(corpus.documents)} documents, {len(corpus.questions)} typed questions; index at {index.path} "
        f"(BM25 + {index.manifest.get('embedder', {}).get('id', 'no embeddings')})"
    )
    retrievers = {name: build_retriever(name, index) for name in RETRIEVERS}

    shown = Table(title="One question of each type: top 3 sources per retriever (✓ = gold document)")
    shown.add_column("type")
    shown.add_column("question (asked as)", overflow="fold", max_width=48)
    for name in RETRIEVERS:
        shown.add_column(name, overflow="fold")
    for qtype in dict.fromkeys(q.type for q in corpus.questions):
        q = next(q for q in corpus.questions if q.type == qtype)
        cells = []
        for retriever in retrievers.values():
            hits = retriever.search(q.text, 3, acl_filter(q))
            cells.append("\n".join(("✓ " if h.doc_id in q.gold_doc_ids else "  ") + h.doc_id for h in hits) or "—")
        shown.add_row(qtype, f"{q.text}\n[dim]({', '.join(q.user_groups)})[/]", *cells)
    console.print(shown)

    scores = {name: hit_by_type(r, corpus.questions) for name, r in retrievers.items()}
    table = Table(title="Retrieval by question type: Hit@1 / Hit@3 (leaks: a forbidden document in the top 3)")
    table.add_column("type")
    table.add_column("n", justify="right")
    for name in RETRIEVERS:
        table.add_column(name, justify="right")
    for qtype in [*dict.fromkeys(q.type for q in corpus.questions), "all"]:
        row = [qtype, str(scores["bm25"][qtype]["questions"])]
        for name in RETRIEVERS:
            s = scores[name][qtype]
            hits = "n/a" if s["hit@1"] is None else f"{s['hit@1']:.2f} / {s['hit@3']:.2f}"
            row.append(hits + (f"  [red]{s['leaks']} leaks[/]" if s["leaks"] else ""))
        table.add_row(*row)
    console.print(table)
    console.print(f"[dim]done in {time.perf_counter() - started:.1f} s; rerun: make demo[/]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
