"""The agent's hop check as a classifier of bridge candidates, on the training worlds only.

For every multi-hop question of the Orrin and countries *training* worlds, chunked as in
``pipelines/agent.toml`` (100-word chunks, breadcrumbs) and as in ``pipelines/weak.toml`` (20 words, no
context), the first hop's bridge candidates are read from BM25's top 20 (every 5-hit page, as a hop of
k = 5 sees them, each chunk's cut sentences completed from its neighbours) and checked by the
question-answering support check at each coverage threshold: how many right bridges are kept and how
many wrong candidates rejected. The shipped ``hop_coverage`` was chosen from this table.

    PYTHONPATH=src python benchmarks/agent_hop_check.py [--output json|pretty]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import print_result  # noqa: E402
from ragline.agent.decompose import bridge_candidates
from ragline.agent.loop import AgentSettings, MultiHopAgent, _sentence_lines
from ragline.answer.support import SupportCheck, norm_phrase
from ragline.config import load_config
from ragline.corpora import countries, orrin
from ragline.index import Index
from ragline.index.filters import acl_filter
from ragline.ingest.pipeline import IngestConfig, chunk_documents
from ragline.retrieve.registry import build_retriever

THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0)
CHUNKINGS = {"agent": ("fixed:size=100,overlap=30", "breadcrumb"), "weak": ("fixed:size=20,overlap=0", "none")}


def count(corpus, chunker: str, context: str, params: dict) -> dict[float, list[int]]:
    """threshold -> [right kept, right total, wrong rejected, wrong total] over ``corpus``'s multi-hop questions."""
    index = Index.create(None)
    chunks, _ = chunk_documents(corpus.documents, IngestConfig(chunker, context))
    index.add(chunks)
    index.commit()
    agent = MultiHopAgent(index, AgentSettings.from_params(params))
    bm25 = build_retriever("bm25", index)
    counts = {t: [0, 0, 0, 0] for t in THRESHOLDS}
    for question in corpus.questions_of_type("multihop"):
        hop = agent.decomposer.decompose(question.text)[0]
        hits = bm25.search(hop.text, 20, acl_filter(question.user_groups))
        whole = [_sentence_lines(agent.whole.expand(hop.text, [hit])[0]) for hit in hits]
        claim = re.sub(rf"^\s*{re.escape(hop.head)}\b", "", hop.text, flags=re.I)
        seen: set[str] = set()
        for start in range(0, len(whole), 5):
            for candidate in bridge_candidates(hop.text, hop.head, whole[start : start + 5], agent.analyze):
                if candidate.name in seen:
                    continue
                seen.add(candidate.name)
                right = norm_phrase(candidate.name) == norm_phrase(question.bridge or "")
                holders = [h for h in whole if candidate.name in h.text]
                for t in THRESHOLDS:
                    check = SupportCheck(min_coverage=t, analyzer=agent.analyze)
                    supported = any(check(claim, candidate.name, h.text, h.title) for h in holders)
                    row = counts[t]
                    if right:
                        row[0] += supported
                        row[1] += 1
                    else:
                        row[2] += not supported
                        row[3] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", choices=["json", "pretty"], default="json")
    args = parser.parse_args()
    params = {k: v for k, v in dict(load_config("agent").read.reader).items() if k != "name"}
    worlds = {
        "orrin": orrin.build_orrin(orrin.TRAIN_SEED),
        "countries": countries.build_countries(countries.TRAIN_SEED),
    }
    total = {t: [0, 0, 0, 0] for t in THRESHOLDS}
    per_set = {}
    for world, corpus in worlds.items():
        for chunking, (chunker, context) in CHUNKINGS.items():
            counts = count(corpus, chunker, context, params)
            per_set[f"{world}/{chunking}"] = {str(t): counts[t] for t in THRESHOLDS}
            for t in THRESHOLDS:
                total[t] = [a + b for a, b in zip(total[t], counts[t], strict=True)]
    print_result(
        {
            "benchmark": "agent_hop_check",
            "columns": ["right kept", "right total", "wrong rejected", "wrong total"],
            "total": {str(t): total[t] for t in THRESHOLDS},
            "per_set": per_set,
        },
        args.output,
    )


if __name__ == "__main__":
    main()
