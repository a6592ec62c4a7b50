"""The live progress view shows who answered an escalation (the event the answer writes before the task goes on)."""

from __future__ import annotations

from agents.cli.progress import ProgressView
from agents.events import Escalated, EscalatedPayload


def test_the_answer_and_who_gave_it_are_shown_not_a_new_escalation():
    view = ProgressView()
    asked = EscalatedPayload(reason="a tool call needs confirmation", question="Run delete_record?",
                             kind="confirmation", step_id=1)
    assert view.feed(Escalated(task_id="t", seq=1, ts=0.0, payload=asked))[-1].endswith(
        "escalated (confirmation): Run delete_record?")
    answered = asked.model_copy(update={"answer": "approve", "answered_by": "alice"})
    lines = view.feed(Escalated(task_id="t", seq=2, ts=1.0, payload=answered))
    assert lines[-1].endswith("answered by alice: approve")
