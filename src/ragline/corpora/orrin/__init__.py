"""The Orrin Grid knowledge base: a fictional energy company's intranet, generated from a seed.

Lecture 3 (§0.5) builds a 70-document, 96-question toy corpus for a fictional energy company whose
documents "are designed to expose every difficulty the slides discuss". This is our realistic,
deterministic version of it. Each document family targets one failure mode:

============================  =============  ==========================================================
family                        question type  failure mode it exposes (lecture section)
============================  =============  ==========================================================
incident reports (pairs)      literal        dense retrieval blurs E-4471 / E-4417 (§3.3); a small
                                             chunk holding "The root cause was ..." lost the code (§2.3)
IT help pages                 paraphrase     vocabulary mismatch: "copier" vs "badge release printing"
                                             -- BM25 finds nothing, dense retrieval helps (§3.3, §5.6)
substation pages              paraphrase     "which crew looks after site SS-339": the code rescues BM25
six expense policies          section        shared section names: a "Receipts" chunk does not say which
                                             policy it belongs to (§2.3, §4)
substation + team pages       multihop       the team page never names the site; single-shot retrieval
                                             misses the second hop (§5.5)
remote-work / on-call policy  version        the superseded version is just as relevant (§5.7, §6.1)
HR-only salary and bonus      permission     retrieval does not know who is asking (§6.1)
pages with planted text       injection      retrieved text is data, not instructions (§6.3)
general pages, decommissioned -              realism and distraction: similar but irrelevant (§6.2)
sites, how-to pages
============================  =============  ==========================================================

Grading (§0.5): an answer counts only if it is right *and* comes from a gold document. Every
answer-bearing sentence is recorded as a ``Fact``; each question lists its gold documents and the
evidence sentences, verbatim.

Same seed -> byte-identical corpus (``fingerprint``). ``DEFAULT_SEED`` is the evaluation world,
Orrin Grid; any other seed, such as ``TRAIN_SEED``, builds a training world with the same
structure, other numbers and names that never occur in the evaluation world (see ``names``).

Where things are: ``world`` (seeds, names and shared values), ``builder`` (documents and questions
under construction), ``formats`` (how values are written), ``templates`` and ``names`` (the data
tables), and one module per family: ``expenses``, ``incidents``, ``substations``, ``it_help``,
``versions``, ``hr``, ``injection``, ``general``.
"""

from __future__ import annotations

from ragline.corpora.orrin.builder import KnowledgeBase, OrrinCorpus
from ragline.corpora.orrin.expenses import add_expense_policies
from ragline.corpora.orrin.general import add_general_pages
from ragline.corpora.orrin.hr import add_hr_pages
from ragline.corpora.orrin.incidents import add_incident_reports
from ragline.corpora.orrin.injection import add_injection_pages
from ragline.corpora.orrin.it_help import add_it_help_pages
from ragline.corpora.orrin.substations import add_substations_and_teams
from ragline.corpora.orrin.versions import add_versioned_policies
from ragline.corpora.orrin.world import DEFAULT_SEED, TRAIN_SEED, World

ORRIN_TYPES = ("literal", "paraphrase", "section", "multihop", "version", "permission", "injection")

__all__ = ["DEFAULT_SEED", "ORRIN_TYPES", "TRAIN_SEED", "OrrinCorpus", "build_orrin"]


def build_orrin(seed: int = DEFAULT_SEED) -> OrrinCorpus:
    """Generate the Orrin knowledge base of ``seed``: documents, questions and facts."""
    kb = KnowledgeBase(World.create(seed))
    # The order is part of the corpus: question ids are numbered per type in order of creation,
    # and the injection family reuses a fact of the expense policies.
    add_expense_policies(kb)
    add_incident_reports(kb)
    add_substations_and_teams(kb)
    add_it_help_pages(kb)
    add_versioned_policies(kb)
    add_hr_pages(kb)
    add_injection_pages(kb)
    add_general_pages(kb)
    return kb.corpus()
