"""The probe file: the questions, gold documents and principals the doctor's probes ask.

TOML (or JSON). Either the built-in corpus (``corpus = "orrin"``: its questions, plus the file's own) or a
folder of documents (``documents = "docs/"``, relative to the file) with questions written for it::

    documents = "docs"
    [principals]                      # optional: user -> groups, for questions that name `as`
    intern = ["all"]
    [[question]]
    id = "q1"
    text = "How long must a new employee wait before working remotely?"
    answer = "3 months"
    gold = ["policy-remote-work-2026"]            # gold document ids (file stems)
    type = "version"                              # which probes ask it (see below)
    distractors = ["6 months"]                    # a wrong value a specific failure produces
    [[question]]
    id = "q2"
    text = "What is the pay band for a team lead?"
    answer = "$93,000 to $116,000"
    as = "intern"                                 # or groups = ["all"]
    forbidden = ["hr-salary-bands"]               # restricted: must never reach the reranker or reader
    type = "permission"

Types and the probes that ask them: every answerable question (recall ceiling); ``literal``,
``paraphrase`` (stale index); ``literal``, ``section`` with distractors (distractors); ``permission``
(permission leakage); ``version`` and ``change`` (conflicting evidence); ``multihop`` (error
accumulation); ``injection`` (prompt injection); single-document answerable questions (lost in the
middle); unanswerable questions, and multihop and single-document ones with their gold documents
hidden (missing stopping rules). Questions Orrin lacks go in the probe file (``orrin_probes.toml``),
never in Orrin's question set.

Lost in the middle judges the context order with a reader that sees order: the configured one when it
is an LLM, else ``order_reader`` (a reader spec; default ``llm``, the local LLM; ``"none"`` skips that
arm), on a fixed seeded sample of ``order_questions`` questions (default 18)::

    order_reader = "llm:model=local:smollm2-135m"
    order_questions = 18
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from ragline.corpora.base import Question
from ragline.errors import ConfigError

BUILTIN = "orrin"
DEFAULT_ORDER_READER = "llm"
DEFAULT_ORDER_QUESTIONS = 18  # two LLM calls each, fewer when the decision is clear early (``rules.curtailed``)
QUICK_PER_KIND = 3  # ``ragline doctor --quick``: questions of each type (and answerability) kept
QUICK_ORDER_QUESTIONS = 4
_QUESTION_KEYS = {
    "id",
    "text",
    "answer",
    "aliases",
    "gold",
    "type",
    "groups",
    "as",
    "forbidden",
    "distractors",
    "expected_abstain",
}


@dataclass
class ProbeFile:
    where: str
    corpus: str | None = None  # "orrin": the built-in corpus
    seed: int | None = None
    documents: Path | None = None
    questions: list[Question] = field(default_factory=list)
    principals: dict[str, list[str]] = field(default_factory=dict)
    order_reader: str = DEFAULT_ORDER_READER  # the reader lost in the middle judges order with ("none": skip)
    order_questions: int = DEFAULT_ORDER_QUESTIONS  # its fixed sample

    def of_type(self, *types: str) -> list[Question]:
        return [q for q in self.questions if q.type in types]

    def quick(self) -> ProbeFile:
        """A smoke run's probe file: the first ``QUICK_PER_KIND`` questions of each type and answerability."""
        kept: dict[tuple[str, bool], list[Question]] = {}
        for q in self.questions:
            group = kept.setdefault((q.type, q.expected_abstain), [])
            if len(group) < QUICK_PER_KIND:
                group.append(q)
        return replace(
            self,
            questions=[q for group in kept.values() for q in group],
            order_questions=min(self.order_questions, QUICK_ORDER_QUESTIONS),
        )

    def answerable(self) -> list[Question]:
        return [q for q in self.questions if not q.expected_abstain and q.gold_doc_ids and q.type != "change"]


def builtin_probe_path() -> Path:
    return Path(str(resources.files("ragline.doctor") / "orrin_probes.toml"))


def load_probe_file(path: str | Path | None = None) -> ProbeFile:
    """The probe file at ``path`` (None: the built-in Orrin one), its corpus's questions included."""
    source = Path(path) if path is not None else builtin_probe_path()
    if not source.is_file():
        raise ConfigError(
            f"no probe file {source}: give a TOML file with [[question]] tables (see `ragline doctor -h`)"
        )
    try:
        raw = source.read_text(encoding="utf-8")
        data = json.loads(raw) if source.suffix == ".json" else tomllib.loads(raw)
    except (UnicodeDecodeError, ValueError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"probe file {source}: cannot parse: {error}") from None
    return parse_probe_file(data, source)


def parse_probe_file(data: dict[str, Any], source: Path) -> ProbeFile:
    where = str(source)
    keys = {"corpus", "seed", "documents", "principals", "question", "description", "order_reader", "order_questions"}
    unknown = sorted(set(data) - keys)
    if unknown:
        raise ConfigError(f"probe file {where}: unknown key(s) {', '.join(unknown)}")
    corpus, documents = data.get("corpus"), data.get("documents")
    if (corpus is None) == (documents is None):
        raise ConfigError(f'probe file {where}: give exactly one of corpus = "{BUILTIN}" or documents = "FOLDER"')
    if corpus is not None and corpus != BUILTIN:
        raise ConfigError(f"probe file {where}: corpus = {corpus!r}; the built-in corpus is {BUILTIN!r}")
    principals = {str(u): [str(g) for g in gs] for u, gs in (data.get("principals") or {}).items()}
    probe = ProbeFile(where, corpus=corpus, seed=data.get("seed"), principals=principals)
    order_reader = data.get("order_reader", DEFAULT_ORDER_READER)
    if not isinstance(order_reader, str) or not order_reader.strip():
        raise ConfigError(f'probe file {where}: order_reader must be a reader spec, e.g. "llm", or "none"')
    probe.order_reader = order_reader.strip()
    order_questions = data.get("order_questions", DEFAULT_ORDER_QUESTIONS)
    if not isinstance(order_questions, int) or isinstance(order_questions, bool) or order_questions < 1:
        raise ConfigError(f"probe file {where}: order_questions must be a whole number of at least 1")
    probe.order_questions = order_questions
    if documents is not None:
        probe.documents = (source.parent / str(documents)).resolve()
        if not probe.documents.is_dir():
            raise ConfigError(f"probe file {where}: documents folder {probe.documents} does not exist")
    else:
        from ragline.corpora.orrin import DEFAULT_SEED, build_orrin

        probe.questions.extend(build_orrin(probe.seed or DEFAULT_SEED).questions)
    for i, entry in enumerate(data.get("question") or [], start=1):
        probe.questions.append(_question(entry, principals, f"probe file {where}, question {i}"))
    return probe


def _question(entry: Any, principals: dict[str, list[str]], where: str) -> Question:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected a table with id, text, answer, gold, type")
    unknown = sorted(set(entry) - _QUESTION_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; it takes {', '.join(sorted(_QUESTION_KEYS))}")
    for key in ("id", "text", "type"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise ConfigError(f"{where}: {key} is required (a non-empty string)")
    groups = [str(g) for g in entry.get("groups", ["all"])]
    if "as" in entry:
        if entry["as"] not in principals:
            raise ConfigError(f"{where}: as = {entry['as']!r} is not a user of [principals]")
        groups = principals[entry["as"]]
    forbidden = [str(d) for d in entry.get("forbidden", [])]
    abstain = bool(entry.get("expected_abstain", bool(forbidden) and not entry.get("gold")))
    return Question(
        id=entry["id"],
        text=entry["text"],
        type=entry["type"],
        answer=str(entry.get("answer", "")),
        aliases=[str(a) for a in entry.get("aliases", [])],
        gold_doc_ids=[str(d) for d in entry.get("gold", [])],
        user_groups=groups,
        expected_abstain=abstain,
        distractor_answers=[str(d) for d in entry.get("distractors", [])],
        forbidden_doc_ids=forbidden,
    )
