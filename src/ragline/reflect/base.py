"""What the reflection readers share: the retrieving-reader interface, the closed-book route, costs.

A reader here declares ``retrieves = True`` (as the agent does): ``RAGPipeline.stream`` calls
``answer(question, filter)`` with the caller's filter, which goes inside every retrieval it makes.
``read(question, context)`` (a caller that passes no filter) reads the given context only.

``segments=true`` answers a question the rule decomposer cuts into clauses (``agent.decompose``) one segment at
a time, each segment's answer filling the next one's bridge (Self-RAG decides per segment; CRAG grades
each segment's retrieval); the last segment's answer is the answer, ``details["segments"]`` the chain.

The closed-book route answers without the index: arithmetic the calculator can evaluate
(``features.arithmetic_expression``) without a model, anything else with the LLM asked the bare question.
Every answer records its cost in ``details["cost"]``: retrievals, model calls, seconds.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterator
from typing import Any

from ragline.agent.calculator import calculate
from ragline.agent.decompose import BRIDGE, Hop, RuleDecomposer
from ragline.answer.context import Context, build_context
from ragline.components import build
from ragline.errors import ConfigError
from ragline.index.filters import FilterLike
from ragline.reflect.critics import Critics
from ragline.reflect.features import arithmetic_expression
from ragline.retrieve.registry import build_retriever
from ragline.types import Answer, Hit

CLOSED_BOOK_SYSTEM = "Answer the question with the answer only (a name, a word or a number), no sentence."


class RetrievingReader:
    """A reader that retrieves itself with the caller's filter inside (see the module's docstring)."""

    name = "reflect"
    retrieves = True

    def __init__(
        self,
        index: Any,
        llm: Any = None,
        retriever: str = "bm25",
        k: int = 5,
        reader: str = "extractive",
        model: str | None = None,
        budget: int = 1500,
        critics: str | None = None,
        segments: bool = False,
    ) -> None:
        if index is None:
            raise ConfigError(f"reader {self.name!r} retrieves by itself: build it with an index (RAGPipeline)")
        if not isinstance(k, int) or k < 1:
            raise ConfigError(f"reader {self.name!r}: k must be a whole number >= 1, got {k!r}")
        self.index, self._llm, self.model, self.k, self.budget = index, llm, model, k, budget
        self.retriever_spec, self.reader_spec, self.critics_path = retriever, reader, critics
        self.segments = bool(segments)
        self.retriever = build_retriever(retriever, index)
        self.reader = build("reader", reader, index=index, llm=llm)
        self.critics = Critics(index, critics)

    @property
    def llm(self) -> Any:
        """The closed-book model: the pipeline's, else ``model`` (the default local LLM), loaded at first use."""
        if self._llm is None:
            from ragline.models.llm import CachedLLM, load_llm

            self._llm = CachedLLM(load_llm(self.model))
        return self._llm

    def search(self, query: str, filter: FilterLike, cost: dict[str, Any], k: int | None = None) -> list[Hit]:
        cost["retrievals"] += 1
        return self.retriever.search(query, k or self.k, filter)

    def closed_book(self, question: str, cost: dict[str, Any]) -> Answer:
        """The answer without retrieval: the calculator for arithmetic, else the LLM's own knowledge."""
        expression = arithmetic_expression(question)
        if expression is not None:
            value = calculate(expression)
            text = str(int(value)) if float(value).is_integer() else f"{value:.6g}"
            return Answer(text, False, [], self.name, {"closed_book": "calculator", "expression": expression})
        cost["model_calls"] += 1
        messages = [{"role": "system", "content": CLOSED_BOOK_SYSTEM}, {"role": "user", "content": question}]
        reply = self.llm.chat(messages, max_tokens=24).strip().splitlines()
        text = reply[0].strip().rstrip(".") if reply else ""
        return Answer(text, not text, [], self.name, {"closed_book": getattr(self.llm, "id", "llm")})

    def read(self, question: str, context: Context) -> Answer:
        """The inner reader on ``context`` alone (no filter was passed, so nothing more is retrieved)."""
        answer = self.reader.read(question, context)
        answer.details[self.name] = {"note": "read the given context only: no filter was passed"}
        return answer

    def stream(self, question: str, context: Context) -> Iterator[str | Answer]:
        answer = self.read(question, context)
        yield answer.text
        yield answer

    def answer(self, question: str, filter: FilterLike = None) -> tuple[Answer, Context]:
        """The answer retrieving as the caller (``filter`` inside every retrieval), segment by segment."""
        started = time.perf_counter()
        cost: dict[str, Any] = {"retrievals": 0, "model_calls": 0}
        hops = RuleDecomposer().decompose(question) if self.segments else [Hop(question)]
        bridge, chain = "", []
        for i, hop in enumerate(hops):
            asked = hop.text.replace(BRIDGE, bridge).strip()
            if i + 1 < len(hops):  # a clause ("team that maintains SS-495") asked as a question
                asked = f"Which {asked.rstrip('?')}?"
            answer, context = self._answer(asked, filter, cost)
            chain.append({"segment": asked, "answer": answer.text, "abstained": answer.abstained})
            if answer.abstained and i + 1 < len(hops):
                details = {**answer.details, "reason": f"segment {i + 1} ({asked!r}) found no answer to carry on"}
                answer = Answer("", True, [], self.name, details)
                break
            bridge = answer.text
        if len(hops) > 1:
            answer.details["segments"] = chain
        cost["model_calls"] += int(answer.details.pop("model_calls", 0) or 0)
        cost["seconds"] = round(time.perf_counter() - started, 4)
        answer.details["cost"] = cost
        answer.reader = self.name
        return answer, context

    def _answer(self, question: str, filter: FilterLike, cost: dict[str, Any]) -> tuple[Answer, Context]:
        raise NotImplementedError

    def empty(self) -> Context:
        return build_context([], self.budget)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "retriever": self.retriever_spec,
            "k": self.k,
            "reader": self.reader_spec,
            "model": self.model,
            "budget": self.budget,
            "critics": self.critics_path or "built-in",
            "segments": self.segments,
        }


def build_checked(cls: Any, index: Any, llm: Any, settings: dict[str, Any]) -> Any:
    """``cls(index, llm, **settings)``, an unknown setting a ``ConfigError`` that lists the accepted ones."""
    accepted = {
        p
        for c in (cls, RetrievingReader)
        for p in inspect.signature(c.__init__).parameters
        if p not in ("self", "index", "llm", "common")
    }
    unknown = sorted(set(settings) - accepted)
    if unknown:
        raise ConfigError(
            f"reader {cls.name!r}: unknown setting(s) {', '.join(unknown)}; it takes {', '.join(sorted(accepted))}"
        )
    return cls(index, llm, **settings)


def abstain(name: str, reason: str, **details: Any) -> Answer:
    return Answer("", True, [], name, {"reason": reason, **details})


def agent_cost(answer: Answer) -> dict[str, int]:
    """The retrievals and model calls of an agent's answer (its trace's total)."""
    total = answer.details.get("trace", {}).get("cost", {})
    return {"retrievals": int(total.get("retrievals", 0)), "model_calls": int(total.get("model_calls", 0))}
