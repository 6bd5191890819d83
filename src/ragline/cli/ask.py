"""``ragline ask QUESTION``: an answer with numbered citations, streamed, and the sources it read."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.text import Text

from ragline.answer.version_policy import POLICIES, versions_policy
from ragline.cli.common import (
    add_common,
    add_config_flag,
    add_principal_flags,
    add_store_flag,
    component_spec,
    emit_json,
    index_location,
    opened_store,
    positive_int,
    query_config,
    restricted_filter,
    snippet,
)
from ragline.errors import ModelError
from ragline.freshness import stale_sources
from ragline.index import Index
from ragline.progress import stderr
from ragline.provenance import provenance as make_provenance
from ragline.text import Analyzer
from ragline.types import section_below_title


def cmd_ask(args: argparse.Namespace) -> int:
    from ragline.anchors import anchor_of
    from ragline.answer.citations import citations_json
    from ragline.answer.pipeline import RAGPipeline
    from ragline.retrieve.base import empty_query_reason

    store = opened_store(args)
    location = index_location(args)
    if store is not None:
        index, answered_from = store
    elif location is not None:
        index = Index.open(location)
        answered_from = str(location)
    else:
        from ragline.corpora.builtin import orrin_index

        index, _ = orrin_index()
        answered_from = (
            f"the built-in Orrin Grid demo corpus ({index.path}), not your documents: no --index, "
            "$RAGLINE_INDEX or ./ragline-index; `ragline index DIR` indexes yours"
        )
    flt, flt_text = restricted_filter(args)
    config = query_config(args, index)
    if args.versions:
        config = config.with_overrides(retrieve={"versions": versions_policy(args.versions)})
    builtin = store is None and location is None
    where = answered_from if not builtin else str(index.path)
    provenance = make_provenance(config, index=where, builtin=builtin, filter=flt_text, generation=index.generation)
    if args.output != "json":
        stderr.print(Text(f"answered from {answered_from}", style="yellow" if builtin else "dim"))
    empty = empty_query_reason(args.question, index.settings.analyzer)
    if empty:  # no sources to read: the reader (maybe an LLM to load) is not needed
        if args.output == "json":
            emit_json(
                {
                    "question": args.question,
                    "answer": "",
                    "abstained": True,
                    "citations": [],
                    "sources": [],
                    "reason": empty,
                    "provenance": provenance,
                }
            )
        else:
            Console().print(Text(f"no answer: {empty}", style="yellow"))
        return 0
    pipeline = RAGPipeline.from_config(config, index)
    console = Console(soft_wrap=True)
    answer, context = read_answer(pipeline, args.question, flt, console if args.output != "json" else None)
    trace = answer.details.get("trace")
    cited = {c.n for c in answer.citations}
    # off: the config skips the check; a store other than the embedded index records no source files
    check = not builtin and isinstance(index, Index) and config.retrieve.freshness != "off"
    stale = stale_sources(index, [s.hit for s in context.sources if s.n in cited]) if check else []
    if args.output == "json":
        retrieved_by = pipeline.retriever_obj.config().get("name", str(config.retrieve.retriever))
        emit_json(
            {
                "question": args.question,
                "answer": answer.text,
                "abstained": answer.abstained,
                "citations": citations_json(answer.citations, context),
                "attributed": bool(answer.details.get("attributed")),
                **({"stage": answer.details["stage"]} if "stage" in answer.details else {}),
                "sources": [
                    {
                        "n": s.n,
                        "doc_id": s.doc_id,
                        "chunk_id": s.chunk_id,
                        "title": s.hit.title,
                        "score": s.hit.score,
                        "retriever": retrieved_by,
                        "text": s.text,
                        **anchor_of(s.hit.metadata),
                    }
                    for s in context.sources
                ],
                **({"trace": trace} if trace is not None else {}),
                "conflicts": answer.details.get("conflicts", []),
                "stale_sources": [x.to_dict() for x in stale],
                "provenance": {**provenance, **pipeline.config()},
            }
        )
        return 0
    console.out("")
    print_answer(console, answer, context, index.settings.analyzer, args.question)
    for note in answer.details.get("notes", []):
        console.print(Text(f"note: {note}", style="yellow"))
    for x in stale:
        console.print(
            Text(
                f"warning: cited {x.doc_id} {x.status} on disk since it was indexed ({x.source}); "
                "this answer may be out of date: re-run `ragline index`",
                style="yellow",
            )
        )
    if args.trace:
        from ragline.agent.trace import render

        console.rule("trace")
        one_step = "no trace: this reader answers in one step (see --config agent)"
        console.print(Text(render(trace) if trace else one_step))
    return 0


def print_answer(console: Console, answer: Any, context: Any, analyzer: Analyzer, question: str) -> None:
    """What follows the streamed answer: a warning when nothing backs it, then the numbered sources."""
    from ragline.anchors import anchor_label

    if answer.abstained:
        console.print(Text("The sources do not answer this question.", style="yellow"))
    elif not answer.citations:
        console.print(Text("no citation: this answer is not backed by the sources", style="yellow"))
    elif answer.details.get("attributed"):
        console.print(Text("the model cited nothing: ragline attributed the sources that contain the answer", "dim"))
    shown = {c.n for c in answer.citations}
    console.rule("sources")
    terms = set(analyzer(question))
    for source in context.sources:
        hit = source.hit
        section = " > ".join(section_below_title(hit.title, hit.metadata.get("section")))
        where = anchor_label(hit.metadata)
        console.print(
            Text.assemble(
                f"[{source.n}] ",
                ("cited " if source.n in shown else "", "green"),
                (hit.title, "bold"),
                f" — {section}" if section else "",
                f" ({hit.doc_id}{', ' + where if where else ''})",
            )
        )
        console.print(Text("    " + snippet(hit.text, terms, analyzer, 160), style="dim"))


def read_answer(pipeline: Any, question: str, filter: Any, console: Console | None) -> tuple[Any, Any]:
    """``(answer, context)`` from the pipeline's one answering path (``RAGPipeline.stream``), the text
    streamed to ``console`` as it comes (None: quiet)."""
    from ragline.models.llm import PromptTooLongError

    result = None
    try:
        for piece in pipeline.stream(question, filter):
            if isinstance(piece, str):
                if console is not None:
                    console.out(piece, end="", highlight=False)
            else:
                result = piece
    except PromptTooLongError as error:
        raise _question_too_long(error, pipeline.reader.llm, question) from None
    assert result is not None
    return result


def _question_too_long(error: Any, llm: Any, question: str) -> ModelError:
    """The too-long prompt said in terms of the question, the part of it the user wrote."""
    asked = llm.count_tokens(question)
    room = error.context_tokens - error.max_tokens - (error.prompt_tokens - asked)
    if room <= 0:
        return ModelError(
            f"the sources and the {error.max_tokens}-token reply alone fill the model's context of "
            f"{error.context_tokens} tokens: give fewer sources (-k) or a smaller max_tokens"
        )
    return ModelError(
        f"the question is {asked} tokens; the model's context is {error.context_tokens} tokens, which leaves "
        f"{room} for it beside the sources and the reply ({asked - room} too long): shorten the question"
    )


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "ask",
        help="answer a question from the index, with numbered, checkable citations",
        description="Retrieve, assemble numbered sources, and answer only from them. The index is --index, else "
        "$RAGLINE_INDEX, else ./ragline-index when it exists, else the built-in Orrin Grid demo index (built on "
        "first use, then cached); stderr says which one answered.",
    )
    p.add_argument("question")
    p.add_argument(
        "--reader",
        metavar="SPEC",
        help="extractive[:threshold=0.47,support=best|next|off] (the rule reader), "
        "llm[:model=local:qwen2.5-coder-0.5b,max_tokens=128], span[:model=trained:squad] or a cascade of them "
        "(the default config's: cascade:readers=[llm:max_tokens=128; extractive],unsupported=decline, the LLM's "
        "answer kept if its citation holds, else the rule reader's)",
    )
    p.add_argument(
        "--retriever",
        metavar="SPEC",
        type=component_spec("retriever"),
        help="any registered retriever spec: bm25, dense, hybrid, reranked:... (default: the config's, hybrid)",
    )
    p.add_argument("-k", type=positive_int, help="sources retrieved (default: the config's, 5)")
    p.add_argument(
        "--order",
        choices=("rank", "ends", "reverse"),
        help="source order in the prompt: rank, or ends = best at both ends (lost in the middle)",
    )
    p.add_argument("--filter", help="metadata filter applied inside retrieval")
    p.add_argument(
        "--versions",
        metavar="POLICY",
        help=f"which document versions to retrieve: {' | '.join(POLICIES)} (default: the config's, current)",
    )
    add_principal_flags(p, "ask")
    add_store_flag(p, "answer from")
    p.add_argument(
        "--trace",
        action="store_true",
        help="print the agent's steps (hops, queries, retrievers, hits, grades, costs); JSON output always has them",
    )
    add_config_flag(p, "pipelines/default.toml (hybrid retrieval, the rule then the span reader read 5 sources)")
    add_common(p)
    p.set_defaults(func=cmd_ask)
