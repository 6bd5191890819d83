"""Synthetic evaluation corpora: documents, questions with gold evidence, and their exports.

Two worlds, both generated deterministically from a seed (same seed -> byte-identical output):

* ``ragline.corpora.orrin`` -- the knowledge base of a fictional energy company (Orrin Grid), with
  document families built to expose each RAG failure mode of the lecture (Lecture 3, §0.5 and §6):
  near-identical error codes, shared policy section names, multi-hop site -> team -> lead chains,
  vocabulary mismatch, superseded versions, HR-only pages and planted instructions.
* ``ragline.corpora.countries`` -- the "fictional countries" world (Lecture 12, §0): 40 countries x
  4 documents, direct / paraphrase / multi-hop / arithmetic questions, in English or Chinese.

Each world has a disjoint *training world* (another seed): different names, same structure, so a
model tuned there never saw an evaluation name (Lecture 12, §0; Lecture 3, §0.5).

Grading rule (Lecture 3, §0.5): an answer is correct only if it is right *and* it comes from a gold
document -- a team name copied from another substation's page does not count. So every question
carries its gold documents and the exact answer-bearing sentences (``evidence``), and every corpus
lists all answer-bearing sentences as ``facts``.

Exports (``ragline.corpora.export``): a BEIR folder and a plain folder of Markdown files. The types
(``Fact``, ``Question``, ``Corpus``) live in ``ragline.corpora.base``; this package only re-exports.
"""

from ragline.corpora.base import Corpus, Fact, Question
from ragline.corpora.countries import COUNTRY_TYPES, CountriesCorpus, build_countries
from ragline.corpora.export import export_beir, write_markdown_folder
from ragline.corpora.orrin import ORRIN_TYPES, OrrinCorpus, build_orrin

__all__ = [
    "COUNTRY_TYPES",
    "ORRIN_TYPES",
    "CountriesCorpus",
    "Corpus",
    "Fact",
    "OrrinCorpus",
    "Question",
    "build_countries",
    "build_orrin",
    "export_beir",
    "write_markdown_folder",
]
