"""The live progress view (make demo, tetrarch run): events in, lines out (no terminal, no Ray)."""

from __future__ import annotations

from agents.cli.progress import ProgressView
from agents.events import PlanStepEvent, PlanStepPayload, Replanned, ReplannedPayload
from planning.models import PlanStep


def _step(version: int, sid: int, seq: int) -> PlanStepEvent:
    return PlanStepEvent(task_id="t", seq=seq, ts=float(seq), payload=PlanStepPayload(
        step=PlanStep(step_id=sid, description="d", tool_name="lookup", tool_input={"city": "Rome"}),
        plan_version=version))


def test_a_step_the_replan_kept_shows_as_done_not_pending():
    view = ProgressView()
    view.feed(_step(1, 1, 1))
    lines = view.feed(Replanned(task_id="t", seq=2, ts=2.0,
                                payload=ReplannedPayload(plan_version=2, feedback="fix it", kept_steps=[1])))
    assert lines == ["[  1.00s] replan → plan v2 (keeps step 1): fix it"]
    view.feed(_step(2, 1, 3))
    view.feed(_step(2, 2, 4))
    assert view.dag_line() == "   DAG v2: ✓1 ·2   (1 done, 0 running, 1 pending)"
