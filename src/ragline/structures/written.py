"""Derived text written by the configured LLM: a RAPTOR summary, a community report.

Both are written the same way. The model is shown only the evidence sentences the extractive summary or
report would hold (a handful, so a request is short and cheap on a CPU), under one ACL's cache scope, so no
derived text mixes text of two ACLs. Each sentence of its reply is kept only when every term of it is in that
evidence, and is cited to the evidence sentence sharing the most terms (:func:`attribute`); a reply with no
sentence kept leaves the extractive text in place. The check is what keeps derived text to what its sources
state: a small model adds words its evidence does not have.
"""

from __future__ import annotations

from typing import Any

from ragline.structures.base import Cost
from ragline.text.analyzer import get_analyzer
from ragline.text.sentences import split_sentences

# (what the system message says the model writes, the request)
REPORT = ("reports", "Write a short report (at most 4 sentences) on what these facts say about them.")
SUMMARY = ("summaries", "Write a short summary (at most 5 sentences) of what these facts say.")
_PROMPT = (
    "{title}\n\nFacts:\n{facts}\n\n{instruction}"
    " Use only the facts above; keep names, codes and numbers as they are written."
)


class LLMWriter:
    """Writes a ``kind`` of text (``REPORT``, ``SUMMARY``) from evidence sentences with ``llm`` (the configured
    LLM when None).

    Replies are cached; ``cost`` counts a request only when the model was asked (not the reply cache), so a
    re-sync's cost is what it paid."""

    def __init__(self, llm: Any, cost: Cost, kind: tuple[str, str] = REPORT, max_tokens: int = 160) -> None:
        from ragline.models.llm import CachedLLM, shared_llm

        self.model = CachedLLM.wrap(llm if llm is not None else shared_llm(None))
        self.cost, self.max_tokens = cost, max_tokens
        self.kept = self.fallbacks = 0  # texts with a written sentence kept; texts left extractive
        self.system = f"You write short, faithful {kind[0]} from the facts you are given."
        self.instruction = kind[1]

    def __call__(self, title: str, evidence: list[str], acl: list[str] | None) -> str:
        """The model's text about ``evidence`` (headed by ``title``), asked under the scope of ``acl``."""
        from ragline.models.llm.cache import acl_scope

        facts = "\n".join(f"- {s}" for s in evidence)
        prompt = _PROMPT.format(title=title, facts=facts, instruction=self.instruction)
        messages = [
            {"role": "system", "content": self.system},
            {"role": "user", "content": prompt},
        ]
        misses = self.model.misses
        reply = str(self.model.chat(messages, max_tokens=self.max_tokens, scope=acl_scope([acl])))
        self.cost.charge(self.model, misses, [*(m["content"] for m in messages), reply])
        return reply

    def grounded(
        self, title: str, evidence: list[str], sources: list[str], acl: list[str] | None
    ) -> tuple[list[str], list[str]]:
        """The written sentences its ``evidence`` states and the source of each; the evidence itself when none."""
        kept, cited = attribute(self(title, evidence, acl), evidence, sources)
        if not kept:
            self.fallbacks += 1
            return list(evidence), list(sources)
        self.kept += 1
        return kept, cited


def attribute(text: str, evidence: list[str], sources: list[str]) -> tuple[list[str], list[str]]:
    """The sentences of ``text`` that its ``evidence`` states, each with the source (``sources``, one per
    evidence sentence) of the evidence sentence sharing the most of its terms: a sentence with a term no
    evidence sentence has is dropped (it was not read in the sources), and so is a repeated one."""
    analyzer = get_analyzer("english")
    terms_of = [set(analyzer(s)) for s in evidence]
    known = set().union(*terms_of)
    kept: list[str] = []
    cited: list[str] = []
    for a, b in split_sentences(text):
        sentence, terms = " ".join(text[a:b].split()), set(analyzer(text[a:b]))
        if terms and terms <= known and sentence not in kept:  # a small model repeats itself
            best = max(range(len(terms_of)), key=lambda i: (len(terms & terms_of[i]), -i))
            kept.append(sentence)
            cited.append(sources[best])
    return kept, cited
