"""CombMNZ fusion: the sum of a document's min-max normalized scores times the number of runs holding it.

Fox & Shaw, "Combination of multiple searches", TREC-2 1993. It rewards consensus more than CombSUM:
a document two retrievers both find beats one that a single retriever scores a little higher. As ranx
(``fuse(method="mnz", norm="min-max")``): each run is min-max normalized first, and a document counts
as "in" a run when the run lists it, whatever its normalized score (the run's worst normalizes to 0).
This file is also the worked example of docs/architecture.md: a fuser is one registered function.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragline.components import register
from ragline.retrieve.fusion import Run, min_max_normalize


@register("fuser", "comb_mnz")
def comb_mnz_fusion(runs: Sequence[Run]) -> dict[str, float]:
    """CombMNZ: sum of min-max normalized scores x number of runs listing the document."""
    fused: dict[str, float] = {}
    hits: dict[str, int] = {}
    for run in runs:
        for doc_id, score in min_max_normalize(run).items():
            fused[doc_id] = fused.get(doc_id, 0.0) + score
            hits[doc_id] = hits.get(doc_id, 0) + 1
    return {doc_id: score * hits[doc_id] for doc_id, score in fused.items()}
