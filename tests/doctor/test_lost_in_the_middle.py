"""The lost-in-the-middle probe: the order arm's contexts (the gold ranked 2..n, read in each order), the
probe file's order settings, and the probe on a small folder corpus, with and without an LLM reading."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.config import load_config
from ragline.doctor import lost_in_the_middle
from ragline.doctor.base import DoctorRun
from ragline.doctor.probefile import DEFAULT_ORDER_QUESTIONS, load_probe_file
from ragline.errors import ConfigError
from tiny_pipeline import tiny_config

SITES = ["Harlow", "Ferrin", "Cobb", "Dunmore", "Elsby", "Galton", "Hythe", "Ivel", "Jarrow", "Kell", "Lunt", "Marsh"]


def _probe_file(tmp_path: Path, extra: str = "") -> Path:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    questions = []
    for i, site in enumerate(SITES):
        # every page shares the question's words, so each is a hard distractor for the others
        (docs / f"{site.lower()}.md").write_text(
            f"# Substation {site}\n\nThe substation {site} transformer has a rated capacity of {40 + 5 * i} MW. "
            f"The substation transformer capacity is checked by the grid operations team each year.\n"
        )
        questions.append(
            f'[[question]]\nid = "{site.lower()}"\ntext = "What is the rated capacity of the substation {site} '
            f'transformer?"\nanswer = "{40 + 5 * i} MW"\ngold = ["{site.lower()}"]\ntype = "literal"\n'
        )
    path = tmp_path / "probes.toml"
    path.write_text(f'documents = "docs"\n{extra}\n' + "\n".join(questions))
    return path


def _run(tmp_path: Path, probes: Path, order: str = "rank") -> DoctorRun:
    config = tmp_path / f"{order}.toml"
    config.write_text(tiny_config("extractive:threshold=0,support=off", more=f'[order]\norder = "{order}"'))
    return DoctorRun(load_config(str(config)), load_probe_file(probes), work=tmp_path / f"work-{order}")


def test_the_gold_rank_cycles_over_every_rank_where_the_order_matters() -> None:
    assert lost_in_the_middle.order_ranks(5, 4) == [2, 3, 4, 2, 3]  # rank 1 is first in every order
    with pytest.raises(ValueError):
        lost_in_the_middle.order_ranks(3, 1)


def test_order_contexts_place_the_ranked_gold_by_each_order(tmp_path: Path) -> None:
    from ragline.eval.position.items import build_items, gold_position

    run = _run(tmp_path, _probe_file(tmp_path, 'order_reader = "none"'))
    questions = lost_in_the_middle.with_evidence(run.probes.answerable(), run.documents())
    items, _ = build_items(run.index, questions, 10)
    assert items
    item = items[0]
    for rank, rank_position, ends_position in ((2, 2, 10), (3, 3, 2), (6, 6, 8)):  # ends: 1, 3, 5, ..., 6, 4, 2
        contexts = lost_in_the_middle.order_contexts(item, rank, ("rank", "ends"))
        assert len(contexts["rank"]) == len(contexts["ends"]) == 10  # every source kept: only the order differs
        assert gold_position(contexts["rank"], item.question) == rank_position
        assert gold_position(contexts["ends"], item.question) == ends_position


def test_probe_file_order_settings(tmp_path: Path) -> None:
    default = load_probe_file(_probe_file(tmp_path))
    assert default.order_reader == "llm" and default.order_questions == DEFAULT_ORDER_QUESTIONS
    (tmp_path / "bad").mkdir()
    with pytest.raises(ConfigError, match="order_questions"):
        load_probe_file(_probe_file(tmp_path / "bad", "order_questions = 0"))
    (tmp_path / "bad2").mkdir()
    with pytest.raises(ConfigError, match="order_reader"):
        load_probe_file(_probe_file(tmp_path / "bad2", "order_reader = 3"))


def test_a_reader_that_reads_by_rank_is_not_confirmed_never_absent(tmp_path: Path) -> None:
    # order_reader = "none": no order-sensitive reader, so the extractive reader reads all three orders
    result = lost_in_the_middle.run(_run(tmp_path, _probe_file(tmp_path, 'order_reader = "none"')))
    assert result.reason is None, result.reason
    assert result.arms["configured"]["n_positions"] == len(SITES)  # probe-file questions got their evidence
    assert result.arms["fixed"]["correct"] == result.arms["configured"]["correct"]
    assert result.status == "pass" and "not confirmed" in result.figure


@pytest.mark.slow
@pytest.mark.models
def test_the_order_arm_reads_with_a_local_llm_on_a_fixed_sample(tmp_path: Path) -> None:
    extra = "order_reader = \"llm:model='local:smollm2-135m'\"\norder_questions = 3"
    result = lost_in_the_middle.run(_run(tmp_path, _probe_file(tmp_path, extra)))
    assert result.reason is None, result.reason
    assert {a: result.arms[a]["n"] for a in ("unfixed", "fixed", "configured")} == {
        a: 3 for a in ("unfixed", "fixed", "configured")
    }
    assert result.arms["configured"]["n_sources"] == 10 and result.arms["configured"]["order"] == "rank"
    assert "smollm2" in result.arms["configured"]["reader"]
    # unfixed and configured are both rank order: the same contexts, the same (cached) replies
    assert result.arms["unfixed"]["correct"] == result.arms["configured"]["correct"]
    assert result.status in ("pass", "flag") and "fixed - configured" in result.rule


def test_with_the_fixs_order_configured_the_order_arm_is_not_read(tmp_path: Path) -> None:
    """Planted fault checked: without the ends-order branch the probe builds the order reader, here a model
    file that does not exist, and cannot run."""
    extra = "order_reader = \"llm:model='local:/nonexistent/model.gguf'\""
    result = lost_in_the_middle.run(_run(tmp_path, _probe_file(tmp_path, extra), order="ends"))
    assert result.reason is None and result.status == "pass", (result.reason, result.rule)
    assert "not read" in result.rule and result.model == "extractive"


@pytest.fixture
def openai_stub():  # type: ignore[no-untyped-def]
    """An OpenAI-compatible chat server that answers every request with one JSON reply; (url, request bodies)."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    bodies: list[dict] = []  # type: ignore[type-arg]
    reply = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant",
                        "content": '{"answer": "50 MW", "sources": [1]}'}}]}).encode()  # fmt: skip

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null"))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", bodies
    finally:
        server.shutdown()
        server.server_close()


def test_llm_flag_sends_the_order_arm_to_an_openai_compatible_server_and_the_row_names_its_model(
    tmp_path: Path,
    openai_stub,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    """Planted fault checked: ``--llm`` not reaching the probe file's order reader reads with the local LLM, so
    the stub sees no request and the row names qwen."""
    import json

    from ragline.cli import main

    url, bodies = openai_stub
    config = tmp_path / "rank.toml"
    config.write_text(tiny_config("extractive:threshold=0,support=off", more='[order]\norder = "rank"'))
    probes = _probe_file(tmp_path, "order_questions = 2")
    argv = ["doctor", "--config", str(config), "--probes", str(probes), "--only", "lost in the middle",
            "--llm", f"openai:{url}?model=big-model", "--output", "json"]  # fmt: skip
    assert main(argv) == 0
    row = json.loads(capsys.readouterr().out)["probes"][0]
    assert row.get("reason") is None, row
    assert bodies and all(body["model"] == "big-model" for body in bodies)
    assert "big-model" in row["model"] and row["arms"]["fixed"]["n"] == 2
