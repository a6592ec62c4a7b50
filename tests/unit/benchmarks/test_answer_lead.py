"""The benchmark's streamed-answer measure (issue 62): how far ahead of the task's end the answer that counted
started, and how long the reviewer wrote it, read off a run's events."""

from __future__ import annotations

from agents.events import parse_event
from benchmarks.report import answer_lead_line
from benchmarks.runner import answer_times


def _events(*raw: tuple[str, float, dict]) -> list:
    return [parse_event({"task_id": "t", "seq": i, "ts": ts, "type": kind, "payload": payload})
            for i, (kind, ts, payload) in enumerate(raw, 1)]


FINISHED = {"status": "accepted", "stopped_reason": "accepted", "answer": "Rome is bigger."}


def test_the_lead_runs_from_the_first_piece_of_the_stream_that_counted_to_the_end():
    events = _events(("answer_delta", 1.0, {"text": "Paris"}), ("answer_reset", 1.5, {"reason": "vetoed"}),
                     ("answer_delta", 2.0, {"text": "Rome"}), ("answer_delta", 2.3, {"text": " is bigger."}),
                     ("task_finished", 2.5, FINISHED))
    lead, writing = answer_times(events)
    assert round(lead, 6) == 0.5 and round(writing, 6) == 0.3


def test_no_lead_without_a_streamed_answer_or_an_accept():
    assert answer_times(_events(("task_finished", 2.5, FINISHED))) is None
    escalated = {"status": "escalated", "stopped_reason": "max_replans", "answer": None}
    assert answer_times(_events(("answer_delta", 2.0, {"text": "Rome"}), ("task_finished", 2.5, escalated))) is None


def test_the_report_says_the_lead_only_where_it_was_measured():
    assert answer_lead_line({"systems": {"tetrarch": {"median_answer_lead_s": None}}}) == []
    line = answer_lead_line({"systems": {"tetrarch": {"median_answer_lead_s": 0.31,
                                                      "median_answer_writing_s": 0.24}}})[0]
    assert "0.31 s" in line and "0.24 s" in line
