"""``tetrarch run`` writes the answer as the reviewer writes it: pieces continue one line, a reset says the text
before it was withdrawn, and the next event starts on a line of its own."""

from __future__ import annotations

from agents.cli.progress import ProgressView
from agents.events import AnswerDeltaPayload, AnswerResetPayload, TaskFinishedPayload, TaskSubmittedPayload, make_event


def test_answer_pieces_continue_one_line_and_a_reset_is_said() -> None:
    payloads = [TaskSubmittedPayload(task="Paris or Rome?"), AnswerDeltaPayload(text="Rome"),
                AnswerDeltaPayload(text=" is"), AnswerResetPayload(reason="names_the_gap: say by how much"),
                AnswerDeltaPayload(text="Rome, by 0.7 million."),
                TaskFinishedPayload(status="accepted", stopped_reason="accepted", answer="Rome, by 0.7 million.")]
    view = ProgressView()
    out = "".join(view.text(make_event(p, task_id="t", seq=i, ts=float(i))) for i, p in enumerate(payloads, 1))
    assert out.splitlines() == [
        "[  0.00s] task  Paris or Rome?",
        "[  1.00s] answer Rome is",
        "[  3.00s] answer withdrawn: names_the_gap: say by how much",
        "[  4.00s] answer Rome, by 0.7 million.",
        "[  5.00s] done  accepted (accepted)",
    ]
