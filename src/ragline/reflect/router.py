"""Query routing: send each question down the cheapest route that answers it (Adaptive-RAG's idea).

Routes, cheapest first: ``none`` (closed-book: the calculator or the LLM, nothing retrieved), ``single``
(one retrieval, the inner reader), ``agent`` (the multi-hop agent, hop by hop). The ``route`` critic
(``ragline.reflect.critics``) was trained on training-world questions labelled by outcome: the cheapest
route that answered each one correctly (closed-book questions: ``none``). Its features are the question's
against the index (how much of it the index knows, arithmetic, identifiers, the rule decomposer's clause
count), never its words, so it reads any index. A corpus structure (graph, tree) would be one more route;
none is registered, and the router works without.

The router takes the most probable route; ``details["route"]`` holds it and every route's probability.
"""

from __future__ import annotations

from typing import Any

from ragline.answer.context import Context, build_context
from ragline.components import build, register
from ragline.index.filters import FilterLike
from ragline.reflect.base import RetrievingReader, agent_cost, build_checked
from ragline.types import Answer

ROUTES = ("none", "single", "agent")


class RoutedReader(RetrievingReader):
    """Routes a question to no retrieval, one retrieval, or the agent, by a critic trained on outcomes."""

    name = "routed"

    def __init__(self, index: Any = None, llm: Any = None, agent: Any = "agent", **common: Any) -> None:
        super().__init__(index, llm, **common)
        self.agent_spec = agent
        self._agent: Any = None

    @property
    def agent(self) -> Any:
        if self._agent is None:
            self._agent = build("reader", self.agent_spec, index=self.index, llm=self._llm)
        return self._agent

    def _answer(self, question: str, filter: FilterLike, cost: dict[str, Any]) -> tuple[Answer, Context]:
        probabilities = self.critics.route(question)
        route = max(probabilities, key=lambda r: probabilities[r])
        info = {"route": route, "probabilities": {r: round(p, 4) for r, p in probabilities.items()}}
        if route == "none":
            answer, context = self.closed_book(question, cost), self.empty()
        elif route == "agent":
            answer, context = self.agent.answer(question, filter)
            for key, value in agent_cost(answer).items():
                cost[key] += value
        else:
            context = build_context(self.search(question, filter, cost), self.budget)
            answer = self.reader.read(question, context)
        answer.details["route"] = info
        return answer, context

    def config(self) -> dict[str, Any]:
        return {**super().config(), "agent": self.agent_spec}


@register("reader", "routed")
def routed_reader(index: Any = None, llm: Any = None, **settings: Any) -> RoutedReader:
    """Router: a critic trained on outcomes sends a question to no retrieval, one retrieval or the agent."""
    return build_checked(RoutedReader, index, llm, settings)
