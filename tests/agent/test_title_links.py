"""Title links: a passage naming another document's title bridges the next hop to that document."""

from __future__ import annotations

from ragline.agent.decompose import TitleLinks
from ragline.agent.loop import AgentSettings, MultiHopAgent
from ragline.index import Index
from ragline.types import Document


def test_titles_are_found_as_whole_names_longest_first_without_disambiguators() -> None:
    links = TitleLinks({"Lilu (mythology)": {"Lilu (mythology)"}, "New South Wales": {"NSW"},
                        "Wales": {"Wales"}, "the": {"the"}})  # fmt: skip
    text = "Lilu, a spirit, was worshipped in New South Wales and in Wales; the Liluan cult was not."
    assert links.mentioned(text) == ["Lilu", "New South Wales", "Wales"]  # "the" is no name: skipped
    assert links.mentioned(text, exclude={"Wales"}) == ["Lilu", "New South Wales"]


def _bridge_corpus() -> Index:
    # the question's words are all in the first passage; the answer's passage shares none of them,
    # and plenty of distractors share the question's words
    docs = [Document("film", "Harbor Lights is a 1986 film shot in Leland. It was directed by Mara Quill.",
                     title="Harbor Lights (1986 film)"),
            Document("quill", "Mara Quill is a novelist living in Ostrava.", title="Mara Quill"),
            *[Document(f"d{i}", f"Leland {i} is a harbour town; a film was once made in Leland {i}.",
                       title=f"Leland {i}") for i in range(12)]]  # fmt: skip
    index = Index.create(None)
    index.add(docs)
    index.commit()
    return index


def test_the_second_hop_follows_a_title_the_first_hop_named() -> None:
    index = _bridge_corpus()
    question = "Which city is home to the director of the 1986 film shot in Leland?"
    settings = {"ladder": ("bm25",), "hop_k": (1, 1), "budget_passages": 2, "max_hops": 2, "retries": 0,
                "decomposer": "rules"}  # fmt: skip
    linked = MultiHopAgent(index, AgentSettings(**settings))
    answer, context = linked.answer(question)
    assert {s.doc_id for s in context.sources} == {"film", "quill"}
    follows = [s for s in answer.details["trace"]["steps"] if s["kind"] == "follow"]
    assert follows and follows[0]["query"] == "Mara Quill"
    # without links the second hop's query (the question plus a name) finds a distractor instead
    plain = MultiHopAgent(index, AgentSettings(**settings, title_links=False))
    _, context = plain.answer(question)
    assert "quill" not in {s.doc_id for s in context.sources}
