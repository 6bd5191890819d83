"""Progress when stderr is not a terminal: plain lines on a schedule, measured with a fake clock."""

from __future__ import annotations

import io

from ragline.progress import format_duration, progress_line, track


class FakeClock:
    """Seconds that advance only when the test moves ``now``."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def consume(items, clock: FakeClock, step: float, **kwargs) -> tuple[list, str]:
    stream = io.StringIO()
    seen = []
    for item in track(items, "embedding", stream=stream, clock=clock, **kwargs):
        seen.append(item)
        clock.now += step  # the work on this item takes `step` seconds
    return seen, stream.getvalue()


def test_a_line_every_five_seconds_with_counts_rate_and_eta() -> None:
    seen, text = consume(range(20), FakeClock(), step=1.0, total=20)
    assert seen == list(range(20))
    assert text.splitlines() == [
        "embedding: 5/20 (25%), 1.0/s, ETA 15s",
        "embedding: 10/20 (50%), 1.0/s, ETA 10s",
        "embedding: 15/20 (75%), 1.0/s, ETA 5s",
        "embedding: 20/20 (100%), 1.0/s",
        "embedding: 20 done in 20s, 1.0/s",
    ]


def test_a_short_run_prints_nothing() -> None:
    _, text = consume(range(4), FakeClock(), step=1.0, total=4)
    assert text == ""


def test_without_a_total_counts_and_rate_only() -> None:
    _, text = consume(iter(range(12)), FakeClock(), step=0.5, every=2.0)
    assert text.splitlines()[0] == "embedding: 4 done, 2.0/s"
    assert text.splitlines()[-1] == "embedding: 12 done in 6s, 2.0/s"


def test_line_and_duration_formats() -> None:
    assert progress_line("searching", 1200, 5183, 29.1) == "searching: 1200/5183 (23%), 41.2/s, ETA 1m37s"
    assert [format_duration(s) for s in (0.4, 59, 185, 7620)] == ["0s", "59s", "3m05s", "2h07m"]


def test_not_a_terminal_goes_to_stderr(capsys) -> None:
    clock = FakeClock()
    for _ in track(range(3), "indexing", total=3, clock=clock, every=1.0):
        clock.now += 1.0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "indexing: 1/3 (33%), 1.0/s, ETA 2s" in captured.err.splitlines()


def test_shown_false_iterates_silently() -> None:
    """Planted fault: ignoring ``shown`` prints the lines of the first test here."""
    seen, text = consume(range(20), FakeClock(), step=1.0, total=20, shown=False)
    assert seen == list(range(20)) and text == ""
