"""The multi-hop agent: decompose, retrieve hop by hop, grade, escalate, bridge, stop, read; all traced.

For each hop the agent fills the sub-question with the bridge the previous hop found, retrieves
(with the caller's filter inside the retriever), and grades the hits against the *sub-question*
(CRAG). Below ``threshold`` it escalates, up to ``retries`` times: first a rewritten query (the
sub-question's terms only), then the next rung of the retriever ladder (``bm25 -> hybrid -> hybrid +
rerank``). When no attempt is good enough, ``policy`` decides: ``read`` hands on what it has,
``abstain`` stops and says why. A hop's bridge is the name its best sentences give that the
sub-question does not (``decompose.bridge_candidates``); no bridge ends the chain. The evidence of
every hop (``hop_k`` passages each, never more than ``budget_passages`` in all) is the reader's
context, so citations span hops, ranked by the grader's grade against the question the reader is asked (ties:
the last hop first), so a first hop's passage that names the question's code is not pushed out of the reader's
top sources by later hops that could only bring other documents. Caps on retrievals, model calls, tokens
and seconds bound every question; hitting one stops the loop with that reason. ``interleave=true`` (IRCoT-style) lets a
question that does not decompose take further hops: the next query is the question plus the bridge
read so far.
``first_hop=question`` asks hop 1 the whole question instead of the first sub-question (later hops
are then interleaved; the reader is first asked the last sub-question with the bridge filled in, or with
``read_as=question`` the whole question, which suits an LLM reader: ``pipelines/agent-llm.toml``).
``title_links=true`` makes every later hop first follow links: the titles of other documents
that the previous hop's passages name (``decompose.TitleLinks``), one new passage per title, the
title as its query; the hop's sub-question fills the rest of its ``hop_k``.
``hop_check=true`` is the self-check of a decomposed hop's answer: its bridge must be supported by
the sentence it was read from (``ragline.answer.support.SupportCheck`` with term coverage
``hop_coverage``: the sentence carries the sub-question, its codes and names included, all but the
head noun, which names the bridge's kind), else a name
of another thing (a neighbouring record's team, a name cut at a chunk's edge) would fill the next
hop and the error would compound. Candidates are read from the passages' whole sentences (a chunk's
cut sentences completed from its neighbouring chunks of the same document, which the caller may
read as they may read the chunk). A hop with no supported bridge escalates like a low grade; when
no attempt yields one, the agent abstains and says why (``unsupported_bridge=abstain``), or goes on from the
whole question (``unsupported_bridge=question``: interleaved hops, title links first) and reads all it found,
leaving the reader's own support check to decline.

Registered as the reader ``agent`` (``[read] reader = "agent:max_hops=3,threshold=0.4"``): it
declares ``retrieves = True`` and answers with ``answer(question, filter)``, returning the answer
and the context it built; ``read(question, context)`` (a pipeline that does not pass the filter)
answers from the given context alone, since retrieving more without the caller's filter could
show them what they may not see.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from ragline.agent.decompose import (
    BRIDGE,
    Bridge,
    Hop,
    LLMDecomposer,
    RuleDecomposer,
    TitleLinks,
    bridge_candidates,
)
from ragline.agent.settings import AgentSettings
from ragline.agent.steps import _attempts, _by_grade, _renumber, _sentence_lines
from ragline.agent.trace import Cost, Trace
from ragline.answer.context import Context, approx_tokens, build_context, document_id
from ragline.answer.support import SupportCheck
from ragline.components import build, register
from ragline.errors import ConfigError
from ragline.index.filters import FilterLike
from ragline.retrieve.base import empty_query_reason
from ragline.retrieve.expand import SmallToBigExpander
from ragline.retrieve.registry import build_retriever, needs_embeddings
from ragline.types import Answer, Hit


class MultiHopAgent:
    """Hop-by-hop retrieval with a grader, escalation and stopping rules over an ``Index``."""

    name = "agent"
    retrieves = True  # answers with answer(question, filter): it retrieves itself

    def __init__(self, index: Any, settings: AgentSettings, llm: Any = None) -> None:
        self.index, self.settings, self.llm = index, settings, llm
        usable = [s for s in settings.ladder if not needs_embeddings([s]) or index.settings.embedder]
        if not usable:
            raise ConfigError(
                f"agent: every ladder retriever ({', '.join(settings.ladder)}) needs embeddings; "
                "index with an embedder or put bm25 on the ladder"
            )
        self.rungs: list[tuple[str, Any, Any]] = [(s, build_retriever(s, index), None) for s in usable]
        if settings.reranker:
            reranker = build("reranker", settings.reranker, index=index, llm=llm)
            self.rungs.append((f"{usable[-1]}+{settings.reranker}", self.rungs[-1][1], reranker))
        self.grader = build("grader", settings.grader, index=index, llm=llm)
        self.reader = build("reader", settings.reader, index=index, llm=llm)
        if settings.decomposer == "llm":
            if llm is None:
                raise ConfigError("agent: decomposer=llm needs a model; pass llm= or use decomposer=rules")
            self.decomposer: Any = LLMDecomposer(llm)
        else:
            self.decomposer = RuleDecomposer()
        self.analyze = index.settings.analyzer
        self.check = SupportCheck(min_coverage=settings.hop_coverage, analyzer=self.analyze)
        self.whole = SmallToBigExpander(index, "sentences", window=0)
        self._links: tuple[int, TitleLinks] | None = None

    # -- the reader interface ---------------------------------------------------------------------
    def read(self, question: str, context: Context) -> Answer:
        """The answer from ``context`` alone (no filter was passed, so the agent does not retrieve more)."""
        answer = self.reader.read(question, context)
        answer.details["agent"] = {"note": "read the given context only: no filter was passed, so no hops ran"}
        return answer

    def stream(self, question: str, context: Context) -> Any:
        answer = self.read(question, context)
        yield answer.text
        yield answer

    def config(self) -> dict[str, Any]:
        return {"name": self.name, **self.settings.to_dict()}

    # -- the loop ---------------------------------------------------------------------------------
    def answer(self, question: str, filter: FilterLike = None) -> tuple[Answer, Context]:
        """The answer to ``question`` retrieving as the caller (``filter`` inside every retrieval)."""
        s = self.settings
        trace = Trace(question)
        model_calls_before = getattr(self.decomposer, "calls", 0)
        hops = self.decomposer.decompose(question)
        calls = getattr(self.decomposer, "calls", 0) - model_calls_before
        clauses: list[Hop] = []
        if s.first_hop == "question" and len(hops) > 1:
            # A clause split can mangle a question the rules misparse; the whole question keeps every
            # word for hop 1, and later hops go on interleaved (title links, then question + bridge).
            # The first clause still names the kind of bridge, and the last is what the reader is asked.
            clauses, hops = hops, [Hop(question, hops[0].head)]
        trace.step(
            "decompose",
            thought=" -> ".join(h.text for h in hops),
            action=self.decomposer.name,
            cost=Cost(model_calls=calls, tokens=calls * approx_tokens(question)),
        )
        evidence: list[Hit] = []
        per_hop: list[list[Hit]] = []
        seen: set[str] = set()
        bridge: str | None = None
        bridges: list[str] = []
        links: list[str] = []
        asked = question
        stop = ""
        hop_n = 0
        while hop_n < s.max_hops:
            if hop_n < len(hops):
                hop = hops[hop_n]
            elif s.interleave and bridge is not None and len(hops) == 1:
                hop = Hop(f"{question} {BRIDGE}")  # IRCoT-style: the question plus what was read
            else:
                break
            if BRIDGE in hop.text and bridge is None and not (links and hop_n >= len(hops)):
                stop = "no bridge entity found in the previous hop's evidence"
                break
            asked = hop.text.replace(BRIDGE, bridge or "").strip()
            room = s.budget_passages - len(evidence)
            if room <= 0:
                stop = f"passage budget of {s.budget_passages} spent"
                break
            k = min(s.k_for(hop_n), room)
            # A decomposed clause's answer is the bridge of the next hop: the self-check judges it.
            checked = s.hop_check and hop_n + 1 < len(hops)
            linked: list[Hit] = []
            if hop_n > 0 and links:
                linked = self._follow_links(links, hop_n, filter, seen, k, trace)
            verified: Bridge | None = None
            if len(linked) < k:
                hits, grade, capped, verified = self._retrieve_hop(
                    asked,
                    hop_n,
                    filter,
                    seen | {document_id(h) for h in linked},
                    k - len(linked),
                    trace,
                    linked,
                    hop.head if checked else None,
                )
            else:
                hits, capped = linked, ""
                verified = self._checked_bridge(asked, hop.head, hits, hop_n, trace) if checked else None
            if linked:
                grade = max(self.grader.grade(question, hits), default=0.0)
            if capped:
                stop = capped
                break
            if grade < s.threshold and s.policy == "abstain":
                stop = (
                    f"hop {hop_n + 1}: best grade {grade:.3f} stayed below the threshold {s.threshold} "
                    f"after {s.retries} retries (policy: abstain)"
                )
                trace.stop_reason = stop
                trace.step("stop", hop=hop_n + 1, observation=stop)
                return self._abstain(stop, trace), build_context(_renumber(per_hop), s.budget)
            if checked and verified is None and s.unsupported_bridge == "abstain":
                stop = f"hop {hop_n + 1}: no retrieved sentence supports an answer to {asked!r} (hop check)"
                trace.stop_reason = stop
                trace.step("stop", hop=hop_n + 1, observation=stop)
                return self._abstain(stop, trace), build_context(_renumber([*per_hop, hits]), s.budget)
            if checked and verified is None:
                # unsupported_bridge=question: the chain's bridge is unconfirmed, so its later clauses cannot be
                # filled in. Go on as a question that does not decompose (interleaved hops from the whole question,
                # title links first) and let the reader judge all the evidence.
                trace.step(
                    "check",
                    hop=hop_n + 1,
                    query=asked,
                    thought="no supported bridge",
                    observation="continue from the whole question",
                )
                clauses, hops, checked = [], [Hop(question, hops[0].head)], False
            evidence += hits
            per_hop.append(hits)
            seen |= {document_id(h) for h in hits}
            hop_n += 1
            more = hop_n < len(hops) or (s.interleave and len(hops) == 1 and hop_n < s.max_hops)
            if more:
                if checked:  # the candidates were read and judged with the hop's retrieval
                    found = [verified] if verified else []
                else:
                    found = bridge_candidates(asked, hop.head, hits, self.analyze) if hits else []
                bridge = found[0].phrase if found else None
                bridges += [bridge] if bridge else []
                links = self._linked_titles(hits, seen) if s.title_links else []
                if links:
                    trace.step(
                        "links",
                        hop=hop_n,
                        thought="titles of other documents the hop's passages name",
                        observation=", ".join(links[:5]),
                    )
                shown = ", ".join(f"{b.name} ({b.score:.2f})" for b in found[:3]) or "none"
                trace.step("bridge", hop=hop_n, thought=f"candidates: {shown}", observation=bridge or "none")
        else:
            stop = stop or f"reached the maximum of {s.max_hops} hops"
        if not stop:
            stop = "every sub-question was retrieved"
        pooled = _renumber(per_hop)
        sub_asks = [asked]
        if clauses and bridges:
            # The last clause with the bridge the hops found: the answer sentence names the bridge, seldom
            # the entity the whole question starts from, so the support check rejects the whole question.
            bridged = bridges[min(len(clauses) - 2, len(bridges) - 1)]
            sub_asks.insert(0, clauses[-1].text.replace(BRIDGE, bridged).strip())
        # An LLM reads the whole question with all its conditions; a rule-decomposed clause can be mangled.
        asks = [*sub_asks, question] if s.read_as == "subquestion" else [question, *sub_asks]
        for read_as in dict.fromkeys(asks):
            context = build_context(_by_grade(pooled, self.grader.grade(read_as, pooled)), s.budget)
            answer = self.reader.read(read_as, context)
            if not answer.abstained:
                break
        trace.step(
            "read",
            query=read_as,
            action=self.reader.name,
            observation=answer.text or "(abstained)",
            cost=Cost(tokens=context.tokens),
        )
        trace.stop_reason = stop
        trace.total.seconds = round(trace.elapsed(), 4)
        answer.details["trace"] = trace.to_dict()
        return answer, context

    def _retrieve_hop(
        self,
        query: str,
        hop_n: int,
        filter: FilterLike,
        seen: set[str],
        k: int,
        trace: Trace,
        linked: list[Hit] | None = None,
        head: str | None = None,
    ) -> tuple[list[Hit], float, str, Bridge | None]:
        """The hop's best attempt: (``linked`` + new hits, their grade, a cap's stop reason or "", the
        supported bridge). With a ``head`` (the hop's answer is checked), an attempt passes only when its
        passages support a bridge, and one that does beats any that does not."""
        s = self.settings
        linked = linked or []
        best: tuple[list[Hit], float, Bridge | None] = (linked, -1.0, None)
        attempts = _attempts(query, len(self.rungs), s.retries, self.analyze)
        why = ""
        for attempt, (text, rung) in enumerate(attempts):
            capped = self._capped(trace)
            if capped:
                return best[0], max(best[1], 0.0), capped, best[2]
            name, retriever, reranker = self.rungs[rung]
            started = time.perf_counter()
            if empty_query_reason(text, self.analyze):
                hits: list[Hit] = []
            else:
                hits = retriever.search(text, s.depth, filter)
                if reranker is not None:
                    hits = reranker.rerank(query, hits, s.depth)
            hits = [h for h in hits if document_id(h) not in seen][:k]
            grades = self.grader.grade(query, hits) if hits else []
            grade = max(grades, default=0.0)
            kind = "retrieve" if attempt == 0 else "escalate"
            trace.step(
                kind,
                hop=hop_n + 1,
                query=text,
                retriever=name,
                hits=hits,
                grade=grade,
                thought=why,
                cost=Cost(retrievals=1, seconds=round(time.perf_counter() - started, 4)),
            )
            verified = self._checked_bridge(query, head, linked + hits, hop_n, trace) if head is not None else None
            if (head is None or verified is not None, grade) > (head is None or best[2] is not None, best[1]):
                best = (linked + hits, grade, verified)
            if grade >= s.threshold and (head is None or verified is not None):
                break
            why = (
                f"previous grade below {s.threshold}"
                if grade < s.threshold
                else "no previous passage supports an answer (hop check)"
            )
        return best[0], max(best[1], 0.0), "", best[2]

    def _checked_bridge(self, asked: str, head: str | None, hits: list[Hit], hop_n: int, trace: Trace) -> Bridge | None:
        """The best bridge candidate whose sentence supports it as the answer to ``asked``, or None.

        Candidates are read from the hits' whole sentences: a chunk cut mid-sentence ("... maintained by
        the Blue") would offer a part of a name, or a sentence without the code it is about.
        """
        whole = [_sentence_lines(self.whole.expand(asked, [hit])[0]) for hit in hits]
        found = bridge_candidates(asked, head or "", whole, self.analyze)
        # The head noun names the bridge's kind ("country" in "country that borders X"), as "which year"
        # names an answer's: the sentence that gives the bridge seldom restates it.
        claim = re.sub(rf"^\s*{re.escape(head)}\b", "", asked, flags=re.IGNORECASE) if head else asked
        verdict = "none"
        for candidate in found:
            holders = [h for h in whole if candidate.name in h.text]
            if any(self.check(claim, candidate.name, h.text, h.title) for h in holders):
                trace.step(
                    "check",
                    hop=hop_n + 1,
                    query=asked,
                    thought="is the bridge supported by its sentence?",
                    observation=f"supported: {candidate.name}",
                )
                return candidate
        if found:
            verdict = "rejected: " + ", ".join(b.name for b in found[:3])
        trace.step(
            "check", hop=hop_n + 1, query=asked, thought="is the bridge supported by its sentence?", observation=verdict
        )
        return None

    def _linked_titles(self, hits: list[Hit], seen: set[str]) -> list[str]:
        """Titles of documents not yet read that the hits name, in rank then reading order."""
        generation = self.index.generation
        if self._links is None or self._links[0] != generation:
            self._links = (generation, TitleLinks.of_index(self.index))
        lexicon = self._links[1]
        named: list[str] = []
        for hit in hits:
            for title in lexicon.mentioned(hit.text, seen):
                if title not in named and title != hit.title:
                    named.append(title)
        return named

    def _follow_links(
        self, links: list[str], hop_n: int, filter: FilterLike, seen: set[str], k: int, trace: Trace
    ) -> list[Hit]:
        """The best new passage for each linked title (its own name as the query), at most ``k``."""
        name, retriever, _ = self.rungs[0]
        taken: list[Hit] = []
        have = set(seen)
        for title in links:
            if len(taken) >= k or self._capped(trace):
                break
            started = time.perf_counter()
            found = [h for h in retriever.search(title, self.settings.depth, filter) if document_id(h) not in have][:1]
            trace.step(
                "follow",
                hop=hop_n + 1,
                query=title,
                retriever=name,
                hits=found,
                thought="follow a title the previous hop named",
                cost=Cost(retrievals=1, seconds=round(time.perf_counter() - started, 4)),
            )
            taken += found
            have |= {document_id(h) for h in found}
        return taken

    def _capped(self, trace: Trace) -> str:
        s, total = self.settings, trace.total
        if total.retrievals >= s.max_retrievals:
            return f"retrieval cap of {s.max_retrievals} reached"
        if total.model_calls >= s.max_model_calls:
            return f"model call cap of {s.max_model_calls} reached"
        if total.tokens >= s.max_tokens:
            return f"token cap of {s.max_tokens} reached"
        if trace.elapsed() >= s.max_seconds:
            return f"time cap of {s.max_seconds} s reached"
        return ""

    def _abstain(self, reason: str, trace: Trace) -> Answer:
        trace.total.seconds = round(trace.elapsed(), 4)
        return Answer("", True, reader=self.name, details={"reason": reason, "trace": trace.to_dict()})


@register("reader", "agent")
def agent_reader(index: Any = None, llm: Any = None, **settings: Any) -> MultiHopAgent:
    """Multi-hop agent: decomposes, retrieves hop by hop with a grader and stopping rules, reads all hops."""
    if index is None:
        raise ConfigError("reader 'agent' retrieves by itself: build it with an index (RAGPipeline.from_config)")
    return MultiHopAgent(index, AgentSettings.from_params(settings), llm=llm)


def _ladder_needs_embeddings(params: Mapping[str, Any]) -> bool:
    """Whether the agent's retriever ladder searches vectors: an evaluation then indexes them, as it does for
    a dense main retriever (``ragline.eval.harness.config_needs_embeddings``)."""
    ladder = params.get("ladder", AgentSettings.ladder)
    return needs_embeddings(list(ladder) if isinstance(ladder, (list, tuple)) else [ladder])


agent_reader.needs_embeddings = _ladder_needs_embeddings  # type: ignore[attr-defined]
