"""Reader ``cascade``: readers tried in order of precision; the first answer that is not an abstention is given.

The rule reader is rarely wrong but often declines, the trained span reader answers more and is wrong more, the
LLM answers nearly everything. A cascade reads the same context (retrieved once, the caller's filter inside) with
each in turn and returns the first non-abstention, so a later, less precise reader only sees what the earlier ones
declined, and the LLM runs only then. ``answer.details["stage"]`` names the stage that answered (None when every
stage declined: the last stage's abstention is returned); ``details["declined"]`` lists the stages before it.

``unsupported="decline"`` treats an answer none of whose citations the support check accepts
(``ragline.answer.support``: the cited sentence does not carry the question) as a stage's abstention, so the next
stage reads, and the cascade declines when none is left; the declined answers are kept in
``details["unsupported"]``. ``"answer"`` (the default) gives the first non-abstention whatever its support.

Stages are reader specs, joined by ``+`` or given as a list (a stage with parameters of its own)::

    cascade                                             extractive, then span, then llm (the defaults below)
    cascade:readers=extractive+span
    cascade:readers=[extractive; span:model=trained:squad,top_k=3; llm:max_tokens=128]

Every stage's name and parameters are checked when the cascade is built; a stage that takes a language model is
built at its first use (the LLM is loaded only when an earlier stage declines), the others at once (the span
reader's model loads at its first question). A reader that retrieves by itself (the agent) cannot be a
stage: it would not read the context the cascade was given.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ragline.answer.context import Context
from ragline.answer.pipeline import LLMLike, Reader
from ragline.components import build, check, component, register, retrieves_itself
from ragline.errors import ConfigError, ModelError
from ragline.types import Answer

DEFAULT_READERS = ("extractive", "span", "llm")
StageSpec = str | Mapping[str, Any]


def parse_stages(readers: str | Sequence[StageSpec]) -> list[StageSpec]:
    """The stage specs of ``readers``: ``"a+b"`` split at ``+``, or a list of specs (strings or tables)."""
    if isinstance(readers, str):
        stages: list[StageSpec] = [part.strip() for part in readers.split("+")]
    elif isinstance(readers, Sequence):
        stages = [r.strip() if isinstance(r, str) else r for r in readers]
    else:
        raise ConfigError(f"reader cascade: readers must be specs joined by '+' or a list, not {readers!r:.80}")
    if not stages or any(not s for s in stages):
        raise ConfigError(f"reader cascade: readers={readers!r:.80} names an empty stage")
    return stages


@register("reader", "cascade")
class CascadeReader(Reader):
    """Readers in order of precision over the same sources: the first answer that is not an abstention."""

    name = "cascade"

    def __init__(
        self,
        readers: str | Sequence[StageSpec] = DEFAULT_READERS,
        unsupported: str = "answer",
        llm: LLMLike | None = None,
    ) -> None:
        if unsupported not in ("answer", "decline"):
            raise ConfigError(f"reader cascade: unsupported={unsupported!r}; choose 'answer' or 'decline'")
        self.unsupported = unsupported
        self.specs = parse_stages(readers)
        self.labels: list[str] = []
        lazy: list[bool] = []  # a stage that may take a model (an LLM) is built at its first use
        for spec in self.specs:
            name, _, takes = check("reader", spec, ("llm",))
            if name == self.name or retrieves_itself(component("reader", name).factory):
                raise ConfigError(
                    f"reader cascade: stage {name!r} cannot be a stage (a cascade, or a reader that retrieves "
                    "by itself, would not read the sources the cascade was given)"
                )
            self.labels.append(name if name not in self.labels else f"{name}#{len(self.labels) + 1}")
            lazy.append("llm" in takes)
        self.llm = llm
        self.built: dict[int, Reader] = {}  # stage number -> its reader
        self.unavailable: dict[int, str] = {}  # stage number -> why its model could not be loaded
        for i in (i for i, later in enumerate(lazy) if not later):
            self.stage(i)  # cheap (a model, if any, loads at its first question): parameters checked now

    def stage(self, i: int) -> Reader:
        """Stage ``i``'s reader, built now if it has not been (the LLM is loaded here, not before)."""
        if i not in self.built:
            self.built[i] = build("reader", self.specs[i], llm=self.llm)
        return self.built[i]

    def read(self, question: str, context: Context) -> Answer:
        *_, answer = self.stream(question, context)
        assert isinstance(answer, Answer)
        return answer

    def stream(self, question: str, context: Context) -> Iterator[str | Answer]:
        """Earlier stages read whole; the last one streams (it is the one that may take time, the LLM).

        A stage whose model cannot be loaded (a trained reader not trained on this machine, no LLM) is skipped
        from then on, and every answer says so in ``details["notes"]``: the other stages still answer.
        """
        declined: list[str] = []
        unsupported: list[dict[str, str]] = []
        # with unsupported="decline" the last stage is read whole too: its answer may yet be declined
        last = len(self.specs) - 1 if self.unsupported == "answer" else len(self.specs)
        for i, label in enumerate(self.labels):
            if i in self.unavailable:
                continue
            try:
                if i < last:
                    answer = self.stage(i).read(question, context)
                    if not answer.abstained and self.unsupported == "decline" and not _supported(answer):
                        unsupported.append({"stage": label, "answer": answer.text})
                        declined.append(label)
                        continue
                    if answer.abstained:
                        declined.append(label)
                        continue
                    yield answer.text
                    yield self._marked(answer, label, declined, unsupported)
                    return
                for piece in self.stage(i).stream(question, context):
                    if isinstance(piece, Answer):
                        stage, by = (None, [*declined, label]) if piece.abstained else (label, declined)
                        yield self._marked(piece, stage, by)
                    else:
                        yield piece
                return
            except ModelError as error:  # raised before the stage yields anything: its model loads first
                self.unavailable[i] = f"stage {label} skipped: {error}"
        reason = "every stage declined or could not be loaded"
        if unsupported:
            reason = "every stage declined, or answered without a supported citation"
        yield self._marked(Answer("", True, [], self.name, {"reason": reason}), None, declined, unsupported)

    def _marked(
        self, answer: Answer, stage: str | None, declined: list[str], unsupported: list[dict[str, str]] | None = None
    ) -> Answer:
        notes = [*answer.details.get("notes", []), *self.unavailable.values()]
        answer.details = {**answer.details, "stage": stage, "declined": list(declined)}
        if unsupported:
            answer.details["unsupported"] = list(unsupported)
        if notes:
            answer.details["notes"] = notes
        return answer

    def config(self) -> dict[str, Any]:
        readers = [s if isinstance(s, str) else dict(s) for s in self.specs]
        return {"name": self.name, "readers": readers, "unsupported": self.unsupported}


def _supported(answer: Answer) -> bool:
    """At least one citation whose sentence the support check accepts."""
    return any(citation.supported for citation in answer.citations)
