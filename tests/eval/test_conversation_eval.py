"""The conversation evaluation: follow-ups written by code omit what the first turn named, and the
history-aware arm answers them where the blind one cannot."""

from __future__ import annotations

import pytest

from ragline.answer.pipeline import RAGPipeline
from ragline.config import load_config
from ragline.corpora.orrin import TRAIN_SEED, build_orrin
from ragline.eval.conversation import anaphoric, follow_ups, run
from ragline.eval.typed import acl_filter
from ragline.index import Index, IndexSettings


def test_later_turns_omit_the_subject_the_first_named() -> None:
    """Planted fault checked: ``anaphoric`` returning the text unchanged (no pair or triple is made)."""
    conversations = follow_ups(build_orrin(TRAIN_SEED).questions)
    kinds = {c.kind for c in conversations}
    assert kinds == {"pair", "triple", "swap"}
    for conversation in conversations:
        first, *later = conversation.turns
        for turn in later:
            assert turn.text != turn.question.text  # the turn is not the question as written
            assert len(turn.text) < len(turn.question.text) + len("that ")
        assert first.text == first.question.text


@pytest.mark.parametrize(
    ("text", "subject", "expected"),
    [
        ("How long did incident E-1 last?", "E-1", "How long did that incident last?"),
        ("How long did users see error E-1?", "error E-1", "How long did users see that error?"),
        ("What is the cap in the meals policy?", "meals policy", "What is the cap in that policy?"),
        ("Does the VPN drop?", "VPN", "Does it drop?"),
    ],
)
def test_anaphors(text: str, subject: str, expected: str) -> None:
    assert anaphoric(text, subject) == expected


@pytest.mark.slow
def test_the_aware_arm_beats_the_blind_arm_on_follow_ups_of_the_training_world() -> None:
    """BM25 + the extractive reader on whole documents. Planted fault checked: ``run`` asking the aware arm the
    turn as written (both arms equal: no follow-up gained)."""
    corpus = build_orrin(TRAIN_SEED)
    index = Index.create(None, IndexSettings())
    index.add(corpus.documents)
    index.commit()
    pipeline = RAGPipeline.from_config(load_config("bm25"), index)
    result = run(follow_ups(corpus.questions)[:16], lambda text, q: pipeline.answer(text, acl_filter(q)), "extractive")
    first, later = result["summary"]["first turns"], result["summary"]["follow-ups"]
    assert first["aware"] == first["blind"]  # no history on a first turn: nothing changes
    assert later["aware"]["correct"] > later["blind"]["correct"]
    assert later["aware"]["wrong"] < later["blind"]["wrong"]
