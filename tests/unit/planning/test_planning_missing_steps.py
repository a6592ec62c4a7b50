"""Regressions of issue 19 in plan validation: a reference to a step that does not exist says so."""

from __future__ import annotations

import pytest

from planning.models import Plan, PlanStep
from planning.validate import PlanValidationError, validate_plan, validate_step

TOOLS = {"lookup": {"type": "object", "properties": {"city": {"type": "string"}}}}


def _step(sid: int, city: str, deps: list[int] | None = None) -> PlanStep:
    return PlanStep(step_id=sid, description="d", tool_name="lookup", tool_input={"city": city},
                    depends_on=deps or [])


def test_a_reference_to_a_missing_step_says_the_step_does_not_exist():
    plan = Plan(steps=[_step(1, "Paris"), _step(2, "$step_9_result")])
    with pytest.raises(PlanValidationError) as info:
        validate_plan(plan, TOOLS, max_steps=10)
    text = str(info.value)
    assert "the plan has no step 9" in text and "add 9 to depends_on" not in text


def test_a_reference_to_an_existing_step_still_asks_for_the_dependency():
    with pytest.raises(PlanValidationError, match="add 1 to depends_on"):
        validate_plan(Plan(steps=[_step(1, "Paris"), _step(2, "$step_1_result")]), TOOLS, max_steps=10)
    with pytest.raises(PlanValidationError, match="add 1 to depends_on"):
        validate_step(_step(2, "$step_1_result"), {1: _step(1, "Paris")}, TOOLS, max_steps=10)


def test_a_streamed_step_referring_to_a_step_not_in_the_plan_says_so():
    with pytest.raises(PlanValidationError, match="the plan has no step 9"):
        validate_step(_step(2, "$step_9_result"), {1: _step(1, "Paris")}, TOOLS, max_steps=10)
