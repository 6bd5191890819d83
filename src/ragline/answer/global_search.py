"""GraphRAG's global search as a reader: map over the community reports, reduce to one answer citing chunks.

Registered as the reader ``global-search``; it retrieves by itself (``retrieves = True``, like the agent):
``answer(question, filter)``.

1. **Reports.** The community reports of the index's entity graph (``structures/graph.py``,
   ``structures/communities.py``) ranked against the question by ``graph-global`` (BM25 over the reports'
   text); a report is a candidate only when the filter lets through **every** chunk behind it, so the
   filter applies inside the search, before the top ``reports`` are taken.
2. **Map.** Each of those reports gives its partial answer: its sentences that share a content term with
   the question, each kept with the chunk it was quoted from (a report sentence is a chunk's sentence).
3. **Reduce.** The partial answers are merged per chunk (one source per chunk, its quoted sentences, the
   chunk's own title and metadata) and read by ``reader`` (default ``aggregate``: lists, counts, extremes
   and the most common value over the sources), so the answer cites the chunks behind the reports, never a
   report: a citation is a text the asker may read, and the chunk is the unit the filter admits.

No LLM by default: the reports are extractive, and so are the default reader's answers; ``reporter=llm`` reads
the configured LLM's reports instead (each sentence kept only where its sources state it, and cited to them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ragline.answer.context import Context, build_context
from ragline.components import build, register
from ragline.errors import ConfigError
from ragline.index.filters import FilterLike
from ragline.text.analyzer import get_analyzer
from ragline.types import Answer, Hit


@register("reader", "global-search")
class GlobalSearchReader:
    """GraphRAG global search: map over community reports, reduce to one answer citing the chunks behind them."""

    name = "global-search"
    retrieves = True

    def __init__(
        self,
        index: Any,
        llm: Any = None,
        reports: int = 5,
        extractor: str = "rules",
        reader: str = "aggregate",
        reporter: str = "extractive",
    ) -> None:
        if index is None:
            raise ConfigError(f"reader {self.name!r} retrieves by itself: build it with an index (RAGPipeline)")
        if not isinstance(reports, int) or reports < 1:
            raise ConfigError(f"reader {self.name!r}: reports must be a whole number >= 1, got {reports!r}")
        from ragline.retrieve.graph_search import GraphGlobalRetriever

        self.index, self.n_reports, self.extractor, self.reader_spec = index, reports, extractor, reader
        self.reporter = reporter
        self.search = GraphGlobalRetriever(index, extractor, reports=reports, reporter=reporter)
        self.reader = build("reader", reader, llm=llm) if llm is not None else build("reader", reader)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "reports": self.n_reports,
            "extractor": self.extractor,
            "reader": self.reader_spec,
            "reporter": self.reporter,
        }

    def partial_answers(self, question: str, filter: FilterLike = None) -> list[tuple[str, list[tuple[str, str]]]]:
        """The map step: per permitted report, best first, its (chunk id, sentence) pairs that carry question terms."""
        analyzer = get_analyzer(self.index.settings.analyzer)
        terms = set(analyzer(question))
        out = []
        for report, _score in self.search.ranked_reports(question, self.n_reports, filter):
            kept = [(c, s) for s, c in zip(report.sentences, report.sources) if terms & set(analyzer(s))]
            if kept:
                out.append((report.id, kept))
        return out

    def answer(self, question: str, filter: FilterLike = None) -> tuple[Answer, Context]:
        """The reduce step over :meth:`partial_answers`: one source per chunk behind them, read by ``reader``."""
        partials = self.partial_answers(question, filter)
        quoted: dict[str, list[str]] = {}
        for _, pairs in partials:
            for chunk, sentence in pairs:
                if sentence not in quoted.setdefault(chunk, []):
                    quoted[chunk].append(sentence)
        hits = []
        for rank, (chunk, sentences) in enumerate(quoted.items(), start=1):
            doc = self.index.get(chunk)
            if doc is None:  # pragma: no cover - a report is built from the live chunks of this commit
                continue
            hits.append(Hit(chunk, 1.0 / rank, rank, doc.title, " ".join(sentences), dict(doc.metadata), doc.parent))
        context = build_context(hits)
        answer = self.reader.read(question, context)
        answer.reader = self.name
        answer.details["reports"] = [rid for rid, _ in partials]
        return answer, context

    def read(self, question: str, context: Context) -> Answer:
        """A caller without a filter: ``reader`` over the given context only."""
        return self.reader.read(question, context)

    def stream(self, question: str, context: Context) -> Iterator[str | Answer]:
        answer = self.read(question, context)
        yield answer.text
        yield answer
