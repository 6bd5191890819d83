"""The LLM rerankers: pointwise P(yes) from top logprobs, listwise over a sliding window, robust parsing."""

from __future__ import annotations

import logging
import math
import re

import pytest

from llm_fakes import FakeLLM
from ragline.components import build
from ragline.errors import ConfigError
from ragline.models.llm import CachedLLM, LLMResponseCache
from ragline.retrieve.rerank_llm import parse_order, yes_probability
from ragline.types import Hit


def hit(doc_id: str, text: str, rank: int, acl: list[str] | None = None) -> Hit:
    return Hit(doc_id, float(10 - rank), rank, text, metadata={"acl": acl or ["all"]})


HITS = [hit("a", "Cars need fuel.", 1), hit("b", "Aspirin eases pain.", 2), hit("c", "Aspirin lowers fever.", 3)]


class Judge(FakeLLM):
    """Says yes to a passage about fever, hesitates on aspirin, no otherwise (by the prompt's passage)."""

    def top_logprobs(self, messages, top=10, seed=0):
        self.calls.append(list(messages))
        passage = messages[-1]["content"].split("\n\nQuestion:")[0]
        p = 0.9 if "fever" in passage else 0.6 if "Aspirin" in passage else 0.05
        yes, no = (" yes", math.log(p)), ("No", math.log(1 - p))
        return [yes, no] if p > 0.5 else [no, yes]


def test_yes_probability_sums_spellings_and_says_when_neither_is_there():
    top = [("Yes", math.log(0.3)), (" yes", math.log(0.3)), ("no", math.log(0.2))]
    assert yes_probability(top) == pytest.approx(0.75)
    assert yes_probability([("The", -0.1), ("I", -2.0)]) is None


def test_pointwise_orders_by_p_yes_and_scopes_each_prompt_by_its_documents_acl(tmp_path):
    model = Judge([])
    llm = CachedLLM(model, LLMResponseCache(tmp_path))
    reranker = build("reranker", "llm-pointwise", llm=llm)
    out = reranker.rerank("what lowers a fever?", HITS, 2)
    assert [h.doc_id for h in out] == ["c", "b"] and [h.rank for h in out] == [1, 2]
    assert out[0].score == pytest.approx(0.9) and out[1].score == pytest.approx(0.6)
    assert len(model.calls) == 3
    reranker.rerank("what lowers a fever?", HITS, 2)
    assert len(model.calls) == 3  # all three from the cache
    # The same passage under another ACL is another request: no reply crosses principals.
    reranker.rerank("what lowers a fever?", [hit("c", "Aspirin lowers fever.", 1, acl=["hr"])], 1)
    assert len(model.calls) == 4
    with pytest.raises(ConfigError, match="interpolate"):
        build("reranker", "llm-pointwise:interpolate=2", llm=llm)


@pytest.mark.parametrize(
    ("reply", "order"),
    [
        ("[2] > [3] > [1]", [1, 2, 0]),
        ("3, 1", [2, 0, 1]),  # the one it forgot follows
        ("[2] > [2] > [7] > [1]", [1, 0, 2]),  # repeats and numbers out of range dropped
        ("Passage two is best.", None),
        ("", None),
    ],
)
def test_parse_order(reply, order):
    assert parse_order(reply, 3) == order


class Sorter(FakeLLM):
    """Orders a window's passages by how often they say "fever" (ties: as shown), like a perfect judge."""

    def __init__(self, malformed: bool = False) -> None:
        super().__init__(self.order)
        self.malformed = malformed

    def order(self, messages, *args):
        if self.malformed:
            return "I cannot rank these."
        shown = re.findall(r"^\[(\d+)\] (.*)$", messages[-1]["content"], flags=re.M)
        best = sorted(shown, key=lambda item: -item[1].count("fever"))
        return " > ".join(f"[{number}]" for number, _ in best)


def test_listwise_window_slides_a_relevant_passage_from_the_bottom_to_the_top(tmp_path):
    hits = [hit(str(i), f"passage {i} about cars", i) for i in range(1, 8)]
    hits.append(hit("8", "fever fever: aspirin lowers fever", 8))
    model = Sorter()
    reranker = build("reranker", "llm-listwise:window=3,step=2", llm=CachedLLM(model, LLMResponseCache(tmp_path)))
    out = reranker.rerank("what lowers a fever?", hits, 5)
    assert [h.doc_id for h in out] == ["8", "1", "2", "3", "4"]
    assert [h.rank for h in out] == [1, 2, 3, 4, 5] and out[0].score > out[1].score
    assert len(model.calls) == 4  # windows at 5, 3, 1, 0 (8 hits, window 3, step 2)


def test_listwise_keeps_the_input_order_on_a_malformed_reply_and_logs_it(tmp_path, caplog):
    reranker = build("reranker", "llm-listwise", llm=CachedLLM(Sorter(malformed=True), LLMResponseCache(tmp_path)))
    with caplog.at_level(logging.WARNING, logger="ragline.retrieve.rerank_llm"):
        out = reranker.rerank("what lowers a fever?", HITS, 3)
    assert [h.doc_id for h in out] == ["a", "b", "c"] and reranker.malformed == 1
    assert "no passage number" in caplog.text
    with pytest.raises(ConfigError, match="window"):
        build("reranker", "llm-listwise:window=1")


def test_a_reranked_retriever_hands_the_pipelines_model_to_its_llm_reranker(tmp_path):
    from ragline.index import Index, IndexSettings
    from ragline.types import Document

    index = Index.create(None, IndexSettings())
    index.add(Document(h.doc_id, h.title, metadata={"acl": ["all"]}) for h in HITS)  # hit() puts the text there
    index.commit()
    model = Judge([])
    retriever = build(
        "retriever",
        'reranked:first=bm25,reranker="llm-pointwise",depth=3',
        index=index,
        llm=CachedLLM(model, LLMResponseCache(tmp_path)),
    )
    ranked = retriever.rank("aspirin fever fuel", 3)
    assert [doc_id for doc_id, _ in ranked] == ["c", "b", "a"] and len(model.calls) == 3  # no model of its own
