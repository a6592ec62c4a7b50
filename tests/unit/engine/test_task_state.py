"""The checkpointed task state: one field per idea, and checkpoints of older writers still read."""

from __future__ import annotations

from agents.checks.api import CheckedReflection
from agents.engine.task_state import ReviewAgainNote, TaskState
from agents.roles.messages import SecondLook
from tests.support.wire import reflection


def _state(**fields: object) -> TaskState:
    return TaskState.model_validate({"task_id": "t1", "task": "Which is larger?", "submitted_at": 1.0, **fields})


def _review() -> dict[str, object]:
    return CheckedReflection.model_validate_json(reflection("accept", answer="42")).model_dump(mode="json")


def _told(st: TaskState) -> tuple[str, str] | None:
    again = st.second_look()
    return None if again is None else (again.feedback, again.reason)


def test_a_review_again_note_is_told_to_the_next_review_only() -> None:
    st = _state(plan_version=1, reflections=[_review()])
    assert st.second_look() is None and not st.reviewed_again()
    st.review_again = ReviewAgainNote(feedback="the answer says 41", reason="unstated_figure", plan_version=1,
                                      asked_at=len(st.reflections))
    again = st.second_look()
    assert isinstance(again, SecondLook) and st.reviewed_again()
    assert (again.feedback, again.reason, again.previous.answer) == ("the answer says 41", "unstated_figure", "42")
    assert not hasattr(again.previous, "checks"), "the review looked at again, without code's findings"
    st.reflections.append(CheckedReflection.model_validate(_review()))  # the next review happened
    assert st.second_look() is None
    assert st.reviewed_again(), "the same plan version is not reviewed again a second time"
    st.plan_version = 2
    assert not st.reviewed_again()


def test_a_checkpoint_with_the_three_older_fields_is_read() -> None:
    pending = _state(plan_version=3, reflections=[_review()], review_again="name the city",
                     review_again_fault=True, reviewed_again_version=3)
    assert _told(pending) == ("name the city", "wrong_answer") and pending.reviewed_again()
    consumed = _state(plan_version=3, reflections=[_review(), _review()], review_again="",
                      review_again_fault=True, reviewed_again_version=3)
    assert _told(consumed) is None and consumed.reviewed_again()
    never = _state(review_again="", review_again_fault=True, reviewed_again_version=0)
    assert never.review_again is None


def test_the_note_round_trips_through_the_checkpoint_json() -> None:
    st = _state(plan_version=2, reflections=[_review()])
    st.review_again = ReviewAgainNote(feedback="x", plan_version=2, asked_at=1)
    again = TaskState.model_validate_json(st.model_dump_json())
    assert again.review_again == st.review_again and _told(again) == ("x", "wrong_answer")


def test_a_note_written_before_its_reason_was_named_is_read() -> None:
    for fault, reason in ((True, "wrong_answer"), (False, "low_scores")):
        st = _state(plan_version=1, reflections=[_review()],
                    review_again={"feedback": "x", "answer_fault": fault, "plan_version": 1, "asked_at": 1})
        assert _told(st) == ("x", reason)
