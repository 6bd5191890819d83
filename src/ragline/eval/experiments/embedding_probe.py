"""Why dense retrieval blurs literals (Lecture 12 §3.3): cosine of paraphrases vs near-identical codes.

Two texts that mean the same in other words (paraphrases) should be close; two texts that differ only
in an error code or id (``E-2952`` vs ``E-2502``) mean different things and should be far apart. An
embedder spreads a rare code over many dimensions, so the second pair comes out *closer* than the
first: the vector sees "an incident report", not which one. BM25 gives the code its own, rare term.

The probe has three parts per packaged embedder: the mean cosine of fixed pair sets (paraphrase,
literal twins, unrelated); a discrimination test, where documents differ only in a code with a
near twin and each query asks for one code (dense vs BM25 Hit@1); and on ``--dataset``, the cosine of
each query with a digit-bearing token against the same query with two digits of it swapped.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from rich.table import Table

from ragline.components import register
from ragline.eval.experiments import Experiment
from ragline.index import Index, IndexSettings
from ragline.types import Document

EMBEDDERS = ("minilm", "multilingual-e5-small")

PAIRS: dict[str, list[tuple[str, str]]] = {
    "paraphrase": [
        ("How often can staff work from home?", "Employees may work remotely two days a week."),
        ("What tongue do people in Korelir speak?", "The official language of Korelir is Mermirath."),
        ("The server crashed overnight.", "The machine went down during the night."),
        ("Where does the government of Korelir sit?", "The capital of Korelir is Kelmiren."),
        ("What money do shoppers pay with?", "The currency is the crown."),
        ("Who is in charge of the plant?", "The plant is managed by Dana Okafor."),
    ],
    "literal twins": [
        ("E-2952", "E-2502"),
        ("Incident E-2952 was caused by a failed breaker.", "Incident E-2502 was caused by a failed breaker."),
        ("What caused incident E-2952?", "What caused incident E-2502?"),
        ("Order 48213 shipped on Monday.", "Order 48231 shipped on Monday."),
        ("Ticket INC-7731 is still open.", "Ticket INC-7713 is still open."),
        ("Upgrade to version 2.4.1 first.", "Upgrade to version 4.2.1 first."),
    ],
    "unrelated": [
        ("The meal limit for travel is 50 euros a day.", "The river floods every spring."),
        ("Incident E-2952 was caused by a failed breaker.", "The cafeteria serves lunch from noon."),
        ("How often can staff work from home?", "Upgrade to version 2.4.1 first."),
        ("The capital of Korelir is Kelmiren.", "Ticket INC-7731 is still open."),
    ],
}
CAUSES = (
    "a failed breaker",
    "an expired certificate",
    "a full disk",
    "a DNS misconfiguration",
    "a memory leak",
    "a cut fibre",
    "an overheated transformer",
    "a bad deploy",
    "a power surge",
    "a corrupted index",
)
N_CODES = 40  # 20 codes and their near twins
DIGITS = re.compile(r"\w*\d\w*")


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-12))


def _swap_digits(token: str, rng: random.Random) -> str | None:
    """``token`` with two different digits of it swapped (None: fewer than two distinct digits)."""
    places = [i for i, c in enumerate(token) if c.isdigit()]
    pairs = [(i, j) for i in places for j in places if i < j and token[i] != token[j]]
    if not pairs:
        return None
    i, j = rng.choice(pairs)
    chars = list(token)
    chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


def code_documents(seed: int = 0) -> tuple[list[Document], list[tuple[str, str]]]:
    """Incident reports that differ only in their code and cause; each code has a near twin (two digits
    swapped). Returns the documents and (query, gold id) pairs."""
    rng = random.Random(seed)
    codes: list[str] = []
    while len(codes) < N_CODES:
        code = f"E-{rng.randrange(1000, 10000)}"
        twin = _swap_digits(code, rng)
        if twin and code not in codes and twin not in codes:
            codes += [code, twin]
    docs = [
        Document(
            f"incident-{i:03d}",
            f"Incident report {code}. The outage was caused by {CAUSES[i % len(CAUSES)]}. "
            f"Service was restored after {1 + i % 7} hours.",
        )
        for i, code in enumerate(codes)
    ]
    return docs, [(f"What caused incident {code}?", f"incident-{i:03d}") for i, code in enumerate(codes)]


def discrimination(embedder: str) -> dict[str, Any]:
    """Hit@1 of BM25 and of dense retrieval on the code documents (twins are each other's distractor)."""
    docs, queries = code_documents()
    index = Index.create(None, IndexSettings(embedder=embedder, vector_index="flat"))
    index.add(docs)
    index.commit()
    bm25 = dense = 0
    for text, gold in queries:
        lexical = index.search_ids(text, 1)
        bm25 += bool(lexical) and lexical[0][0] == gold
        vector = index.embedder.embed_queries([text])[0]
        top = index.search_vector(vector, 1)
        dense += bool(top) and index.segments[top[0][0]].ids[top[0][1]] == gold
    return {"documents": len(docs), "bm25_hit@1": bm25 / len(queries), "dense_hit@1": dense / len(queries)}


def dataset_perturbation(embedder: Any, queries: Sequence[str], seed: int = 0) -> dict[str, Any]:
    """Cosine of each query holding a digit-bearing token with itself, two digits of that token swapped;
    beside it the cosine of the query with the next such query (a different question)."""
    rng = random.Random(seed)
    originals, changed = [], []
    for text in queries:
        for match in DIGITS.finditer(text):
            twin = _swap_digits(match.group(), rng)
            if twin:
                originals.append(text)
                changed.append(text[: match.start()] + twin + text[match.end() :])
                break
    if len(originals) < 2:
        return {"queries": len(originals)}
    a, b = embedder.embed_queries(originals), embedder.embed_queries(changed)
    twins = [_cosine(x, y) for x, y in zip(a, b)]
    others = [_cosine(a[i], a[(i + 1) % len(a)]) for i in range(len(a))]
    return {
        "queries": len(originals),
        "example": [originals[0], changed[0]],
        "literal_twin_cosine": round(float(np.mean(twins)), 4),
        "other_query_cosine": round(float(np.mean(others)), 4),
    }


def run(embedders: Sequence[str] = EMBEDDERS, dataset_queries: Sequence[str] | None = None) -> dict[str, Any]:
    from ragline.models.embedders import load_embedder

    out: dict[str, Any] = {"experiment": "embedding-probe", "pairs": PAIRS, "by_embedder": {}}
    for name in embedders:
        embedder = load_embedder(name)
        row: dict[str, Any] = {"id": embedder.id}
        for kind, pairs in PAIRS.items():
            # Symmetric texts (neither is a query): both sides as passages.
            left = embedder.embed_passages([p[0] for p in pairs], progress=False)
            right = embedder.embed_passages([p[1] for p in pairs], progress=False)
            cosines = [round(_cosine(x, y), 4) for x, y in zip(left, right)]
            row[kind] = {"mean": round(float(np.mean(cosines)), 4), "cosines": cosines}
        row["discrimination"] = discrimination(name)
        if dataset_queries is not None:
            row["dataset"] = dataset_perturbation(embedder, dataset_queries)
        out["by_embedder"][name] = row
    return out


def tables(payload: dict[str, Any]) -> list[Table]:
    kinds = list(payload["pairs"])
    table = Table(title="Embedding probe: mean cosine by pair kind; Hit@1 on incident reports that differ in a code")
    columns = ["embedder", *kinds, "code docs: BM25 hit@1", "dense hit@1"]
    with_dataset = any("dataset" in row for row in payload["by_embedder"].values())
    if with_dataset:
        columns += ["dataset: query vs digits swapped", "vs another query"]
    for column in columns:
        table.add_column(column, justify="left" if column == "embedder" else "right")
    for name, row in payload["by_embedder"].items():
        d = row["discrimination"]
        cells = [f"{row[k]['mean']:.3f}" for k in kinds] + [f"{d['bm25_hit@1']:.2f}", f"{d['dense_hit@1']:.2f}"]
        if with_dataset:
            ds = row.get("dataset", {})
            cells += [str(ds.get("literal_twin_cosine", "—")), str(ds.get("other_query_cosine", "—"))]
        table.add_row(name, *cells)
    pairs = Table(title="Cosine of each pair")
    for column in ("kind", "pair", *payload["by_embedder"]):
        pairs.add_column(column, justify="left" if column in ("kind", "pair") else "right")
    for kind, items in payload["pairs"].items():
        for i, (a, b) in enumerate(items):
            values = [f"{row[kind]['cosines'][i]:.3f}" for row in payload["by_embedder"].values()]
            pairs.add_row(kind, f"{a} | {b}", *values)
    return [table, pairs]


def from_args(args: Any) -> dict[str, Any]:
    """``run`` on the built-in pairs, and on --dataset's first --limit test queries when given."""
    queries = None
    if args.dataset:
        from ragline.eval.datasets import load_dataset

        queries = list(load_dataset(args.dataset, "test").judged_queries.values())[: args.limit]
    return run(dataset_queries=queries)


@register("experiment", "embedding-probe")
def experiment() -> Experiment:
    """Cosine of paraphrases vs near-identical codes."""
    return Experiment("embedding-probe", from_args, tables)
