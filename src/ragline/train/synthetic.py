"""Synthetic training queries for a corpus without queries: the local LLM writes a question per passage.

InPars (Bonifacio et al., "InPars: Data Augmentation for Information Retrieval using Large Language
Models", 2022) and GPL (Wang et al., "GPL: Generative Pseudo Labeling for Unsupervised Domain
Adaptation of Dense Retrieval", NAACL 2022) train a retriever on a corpus that has no judged queries
by asking a generative model for a question that each passage answers; the (question, passage) pairs
then stand in for qrels. Generated questions are noisy, so the weak ones are filtered out:
:func:`round_trip_filter` keeps a question only when a first stage ranks its own passage within the
top ``depth`` (the round-trip consistency filter of Alberti et al., "Synthetic QA Corpora Generation
with Roundtrip Consistency", ACL 2019, used by Promptagator and InPars-v2 with a reranker).

Passages are the corpus's chunks (``chunker``). What is generated from a passage inherits its ACL: each
query record keeps the chunk's ``acl``, the LLM request is scoped by it in the reply cache, and the
training folder's queries and passages carry it in their metadata.

Generation is cached and resumable. Each query is one JSON line of ``generated.jsonl`` in the output
folder, keyed by the passage text's hash, the model id and the prompt (:func:`query_key`); a line is
written (and flushed) as soon as its reply comes, so a killed run continues with the first passage not
yet in the file, and an unchanged passage is never asked twice. :func:`write_training_folder` turns the
kept queries into a BEIR folder in the same place (``corpus.jsonl`` of the passages, ``queries.jsonl``,
``qrels/train.tsv``), which ``ragline train reranker|embedder`` reads as any other dataset.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragline.errors import InputError
from ragline.types import Document, content_hash

Log = Callable[[str], None]

GENERATED_FILE = "generated.jsonl"
DEFAULT_CHUNKER = "structure:max_words=200"
DEFAULT_MAX_TOKENS = 48
# Zero-shot: the passage, then a request for one question about one of its facts, in the words of someone who
# has not read it (a general question, "what is this policy?", teaches little).
# Asking for other words than the passage's is what makes the pairs teach vocabulary mismatch (the
# failure a trained first stage is for); a question that copies the passage teaches BM25's job again.
PROMPT = (
    "Passage: {passage}\n\n"
    "Write one question about a specific fact in this passage (a number, a name, a time, a rule), as a person "
    "who has not read it would ask it in everyday words, not the passage's own terms. Write only the question."
)


@dataclass(frozen=True, slots=True)
class Passage:
    """A chunk that queries are written for: its id, its document, its text and the ACL it inherits."""

    id: str
    doc_id: str
    title: str
    text: str
    acl: list[str] | None


def read_corpus(path: str | Path, log: Log = lambda message: None) -> list[Document]:
    """The documents of a BEIR folder (``corpus.jsonl``), a ``.jsonl`` corpus file, or a folder of files.

    A record or file that cannot be read is reported through ``log`` and skipped; the rest is read.
    """
    from ragline.freshness import load_source
    from ragline.ingest.files import DEFAULT_MAX_BYTES

    source = Path(path)
    report = load_source(source, DEFAULT_MAX_BYTES)  # what `ragline index` reads, read the same way
    for error in report.errors:
        log(f"skipped: {error}")
    if not report.documents:
        raise InputError(
            str(source),
            "no documents to write queries for: give a BEIR folder, a corpus.jsonl or a folder of documents",
        )
    return report.documents


def corpus_passages(documents: Sequence[Document], chunker: str = DEFAULT_CHUNKER) -> list[Passage]:
    """The chunks of ``documents`` (``chunker`` as ``ragline.ingest.chunkers`` builds it) as passages.

    A chunk without words (a heading alone) asks the LLM nothing useful, so it is left out.
    """
    from ragline.ingest.pipeline import IngestConfig, chunk_documents

    chunks, _ = chunk_documents(list(documents), IngestConfig(chunker))
    passages = []
    for chunk in chunks:
        text = chunk.text.strip()
        if len(text.split()) < 5:
            continue
        acl = chunk.metadata.get("acl")
        acl = [str(group) for group in acl] if isinstance(acl, list) else (None if acl is None else [str(acl)])
        passages.append(Passage(chunk.id, chunk.document_id, chunk.title, text, acl))
    return passages


def sample_passages(passages: Sequence[Passage], size: int | None, seed: int = 0) -> list[Passage]:
    """The passages in a seeded random order, the first ``size`` of them (all when ``size`` is None).

    A run in this order can be stopped at any point and what it wrote is a random sample; a larger
    sample of the same seed contains the smaller one, so growing it reuses every query already written.
    """
    order = list(passages)
    random.Random(seed).shuffle(order)
    return order if size is None else order[:size]


def query_key(passage_text: str, model_id: str, prompt: str, scope: str = "") -> str:
    """The cache key of a passage's generated query: the hash of the text the model reads (``prompt_text``),
    the model, the prompt template and the ACL scope (a query written from a passage that one group may
    read is never handed to another group's passage of the same text)."""
    return content_hash("\x00".join((content_hash(passage_text), model_id, prompt, scope)))


def prompt_text(passage: Passage) -> str:
    """What the model reads of a passage: its document's title, then its text."""
    return f"{passage.title}. {passage.text}" if passage.title else passage.text


def clean_question(reply: str) -> str | None:
    """The question in an LLM reply: its first line with a list marker or ``Question:`` label removed.

    None when there is no usable question (fewer than three words).
    """
    for line in reply.splitlines():
        line = line.strip()
        for label in ("question:", "q:"):
            if line.lower().startswith(label):
                line = line[len(label) :].strip()
        line = line.lstrip("-*0123456789.) ").strip().strip("\"'").strip()
        if len(line.split()) >= 3:
            return line
    return None


def load_queries(path: str | Path) -> dict[str, dict[str, Any]]:
    """The query records a run has written to ``path`` so far, by key (a torn last line is skipped)."""
    file = Path(path)
    records: dict[str, dict[str, Any]] = {}
    if not file.is_file():
        return records
    for line in file.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # the line a killed run was writing; its passage is asked again (from the reply cache)
        if isinstance(record, dict) and "key" in record:
            records[record["key"]] = record
    return records


def generate_queries(
    passages: Sequence[Passage],
    llm: Any,
    out: str | Path,
    prompt: str = PROMPT,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    seed: int = 0,
    progress: bool = True,
    log: Log = lambda message: None,
) -> list[dict[str, Any]]:
    """One query record per passage, written to ``out/generated.jsonl`` as it comes; the records, in order.

    ``llm`` is an ``LLM`` (wrapped in the reply cache when it is not one already). Passages whose key is
    already in the file are not asked again (resume); a reply with no usable question is logged and its
    passage gets a record with ``query`` None, so a rerun does not ask again either.
    """
    from ragline.models.llm.cache import CachedLLM, acl_scope
    from ragline.progress import track

    cached = CachedLLM.wrap(llm)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / GENERATED_FILE
    done = load_queries(path)
    texts = [prompt_text(passage) for passage in passages]
    scopes = [acl_scope([passage.acl]) for passage in passages]
    keys = [query_key(text, cached.id, prompt, scope) for text, scope in zip(texts, scopes)]
    todo = [item for item in zip(keys, scopes, texts, passages) if item[0] not in done]
    log(f"{len(passages)} passages: {len(passages) - len(todo)} already have a query, {len(todo)} to write")
    with path.open("a", encoding="utf-8") as file:
        steps = track(todo, "writing synthetic queries", total=len(todo), shown=progress)
        for key, scope, text, passage in steps:
            messages = [{"role": "user", "content": prompt.format(passage=text)}]
            reply = cached.chat(messages, max_tokens=max_tokens, seed=seed, scope=scope)
            question = clean_question(reply)
            if question is None:
                log(f"{passage.id}: no question in the reply {reply[:80]!r}")
            record = {"key": key, "query": question, "model": cached.id, **asdict(passage)}
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
            file.flush()  # written at once: a killed run keeps every query it was given
            done[key] = record
    # The query from the file, the rest from the passage now: an unchanged text keeps its query when the
    # chunking renumbers it.
    return [{**done[key], **asdict(passage)} for key, passage in zip(keys, passages)]


def round_trip_filter(records: Iterable[dict[str, Any]], retriever: Any, depth: int = 5) -> list[dict[str, Any]]:
    """The records whose query ranks its own passage within ``retriever``'s top ``depth`` (each gets its ``rank``).

    ``retriever`` searches an index of the passages (ids as the records' ``id``). A query the model got
    wrong (about another passage, or about nothing) finds its passage low or not at all and is dropped.
    Each query is searched under its passage's ACL, as a user who may read the passage would search.
    """
    from ragline.index.filters import acl_filter

    kept = []
    for record in records:
        if not record.get("query"):
            continue
        where = acl_filter(record["acl"]) if record.get("acl") else None
        ranked = [doc_id for doc_id, _ in retriever.rank(record["query"], depth, where)]
        if record["id"] in ranked:
            kept.append({**record, "rank": ranked.index(record["id"]) + 1})
    return kept


def passage_documents(passages: Sequence[Passage]) -> list[Document]:
    """The passages as documents of their own (ids the chunk ids; ``doc_id`` and ``acl`` in the metadata)."""
    documents = []
    for passage in passages:
        metadata: dict[str, Any] = {"doc_id": passage.doc_id}
        if passage.acl is not None:
            metadata["acl"] = passage.acl
        documents.append(Document(passage.id, passage.text, passage.title, metadata))
    return documents


def passage_index(passages: Sequence[Passage], embedder: str | None = None) -> Any:
    """An in-memory index of the passages (each its own document), for the round-trip filter."""
    from ragline.index.store import IndexSettings
    from ragline.ingest.pipeline import IngestConfig, build_index

    return build_index(passage_documents(passages), IngestConfig(), IndexSettings(embedder=embedder))


def write_training_folder(
    passages: Sequence[Passage], records: Sequence[dict[str, Any]], out: str | Path, split: str = "train"
) -> dict[str, int]:
    """A BEIR folder in ``out``: every passage in ``corpus.jsonl`` (the negatives are mined among them),
    the kept queries in ``queries.jsonl`` (with their passage's ACL) and ``qrels/SPLIT.tsv`` (query -> its
    passage). The generation cache ``generated.jsonl`` beside them is left as it is. Returns the counts.
    """
    folder = Path(out)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as file:
        for document in passage_documents(passages):
            record = {"_id": document.id, "title": document.title, "text": document.text, "metadata": document.metadata}
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
    ids: dict[str, str] = {}
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as file:
        for n, record in enumerate(records, start=1):
            query_id = f"synthetic-{n:05d}"
            ids[query_id] = record["id"]
            metadata = {"passage_id": record["id"], "doc_id": record["doc_id"], "acl": record.get("acl")}
            file.write(json.dumps({"_id": query_id, "text": record["query"], "metadata": metadata}) + "\n")
    with (folder / "qrels" / f"{split}.tsv").open("w", encoding="utf-8") as file:
        file.write("query-id\tcorpus-id\tscore\n")
        for query_id, passage_id in ids.items():
            file.write(f"{query_id}\t{passage_id}\t1\n")
    return {"passages": len(passages), "queries": len(ids)}
