"""RAG-Sequence's fast decoding (``ragline.eval.experiments.rag_sequence``): p(z|x) x p(y|x,z), summed per answer."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from llm_fakes import FakeLLM
from ragline.answer.pipeline import LLMReader
from ragline.corpora.base import Question
from ragline.eval.experiments import rag_sequence
from ragline.index import Index, IndexSettings
from ragline.models.llm import ScoredReply
from ragline.types import Document


def test_retrieval_probabilities_are_the_softmax_of_the_scores() -> None:
    """Planted fault checked: weights from the raw scores (no exponent) make these 0.5/0.33/0.17."""
    p = rag_sequence.retrieval_probabilities([3.0, 2.0, 1.0])
    e = [math.exp(1.0), 1.0, math.exp(-1.0)]
    assert p == pytest.approx([v / sum(e) for v in e])
    assert rag_sequence.retrieval_probabilities([9.0, 1.0], math.inf) == [0.5, 0.5]


def test_an_answer_two_passages_agree_on_beats_a_likelier_single_one() -> None:
    """Marginalizing sums p(z|x) p(y|x,z) over the passages that produced y: "Oslo" from the 2nd and 3rd
    passages (0.3 x 0.9 + 0.2 x 0.9 = 0.45) beats "Bergen" from the first (0.5 x 0.8 = 0.40), and answers
    are grouped by their normalization ("the Oslo" = "Oslo"). Planted fault checked: keeping each passage's
    best alone (max instead of sum) picks Bergen; grouping the raw strings splits Oslo in two."""
    generations = [
        {"answer": "Bergen", "abstained": False, "logprob": math.log(0.8)},
        {"answer": "Oslo", "abstained": False, "logprob": math.log(0.9)},
        {"answer": "the Oslo", "abstained": False, "logprob": math.log(0.9)},
    ]
    best = rag_sequence.marginalize(generations, [0.5, 0.3, 0.2])
    assert best[0]["answer"] == "Oslo" and best[0]["ranks"] == [2, 3]
    assert best[0]["p"] == pytest.approx(0.45) and best[1]["p"] == pytest.approx(0.40)


def test_abstentions_are_one_candidate_and_can_win() -> None:
    """Planted fault checked: grouping abstentions by their text would leave "" beside "I don't know"."""
    generations = [
        {"answer": "I don't know", "abstained": True, "logprob": math.log(0.9)},
        {"answer": "", "abstained": True, "logprob": 0.0},
        {"answer": "Bergen", "abstained": False, "logprob": math.log(0.5)},
    ]
    best = rag_sequence.marginalize(generations, [0.4, 0.3, 0.3])
    assert best[0]["answer"] == "" and best[0]["ranks"] == [1, 2]


class ScoringLLM(FakeLLM):
    """Answers from the one source it is shown: "Bergen" (p 0.6) from the bergen passage, else "Oslo" (p 0.9);
    the concatenated reader's constrained reply is "Bergen", citing source 1."""

    def chat_scored(self, messages, max_tokens=256, seed=0, stop=None):
        self.calls.append(list(messages))
        source = messages[-1]["content"].split("Question:")[0]
        if "Bergen" in source:
            return ScoredReply("Bergen.", (math.log(0.6), 0.0))
        return ScoredReply("Oslo", (math.log(0.9),))


def test_run_reads_each_passage_alone_and_grades_every_row(tmp_path) -> None:
    """End to end on a three-passage index: one model call per passage plus one for the concatenated reader;
    RAG-Sequence's uniform row picks the answer two passages agree on (Oslo), the top passage's row the first
    passage's. Planted fault checked: reading every passage in one prompt (one scored call) fails the calls count."""
    documents = [
        Document("a", "The grid office of Bergen opened in 1990. Bergen hosts the grid office.", "A"),
        Document("b", "The grid office is in Oslo, the capital. The grid office moved to Oslo.", "B"),
        Document("c", "Oslo holds the grid office since 2001. The grid office is large.", "C"),
    ]
    index = Index.create(None, IndexSettings(embedder=None))
    index.add(documents)
    index.commit()
    question = Question("q1", "Where is the grid office of Bergen?", "literal", "Oslo", gold_doc_ids=["b"])
    corpus = SimpleNamespace(name="tiny", questions=[question])
    llm = ScoringLLM(lambda *a: json.dumps({"answer": "Bergen", "sources": [1]}), structured=True)
    payload = rag_sequence.run(corpus, index, LLMReader(llm=llm), k=3, questions=0)
    record = payload["per_question"][0]
    assert len(record["passages"]) == 3 and payload["model_calls"] == {"concatenated": 1, "rag-sequence": 3}
    assert record["passages"][0]["answer"] in ("Bergen", "Oslo")
    assert record["answers"]["rag-sequence, uniform p(z)"] == "Oslo"
    assert record["answers"]["top passage"] == record["passages"][0]["answer"]
    assert record["answers"]["concatenated"].startswith("Bergen")
    assert payload["rows"]["rag-sequence, uniform p(z)"]["counts"]["correct"] == 1
    assert payload["rows"]["concatenated"]["counts"]["correct"] == 0
    assert len(llm.calls) == 4
