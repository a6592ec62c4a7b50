from __future__ import annotations

import pytest

from planning import Plan, PlanStep, PlanValidationError, ProblemCode, validate_plan, validate_step

TOOLS = {
    "search": {"type": "object", "properties": {"query": {"type": "string"}, "k": {"type": "integer"}},
               "required": ["query"], "additionalProperties": False},
    "calc": {"type": "object", "properties": {"expression": {"type": "string"},
                                              "mode": {"enum": ["exact", "approx"]},
                                              "scale": {"anyOf": [{"type": "number"}, {"type": "null"}]}},
             "required": ["expression"]},
}


def step(sid, tool=None, args=None, deps=()):
    return PlanStep(step_id=sid, tool_name=tool, tool_input=args or {}, depends_on=list(deps))


def problems(steps, max_steps=10, completed=()):
    with pytest.raises(PlanValidationError) as err:
        validate_plan(Plan(steps=steps), TOOLS, max_steps=max_steps, completed=completed)
    return err.value


@pytest.mark.parametrize("steps, kwargs, code, message", [
    ([], {}, ProblemCode.EMPTY_PLAN, "the plan has no steps; add at least one step."),
    ([step(i) for i in range(1, 4)], {"max_steps": 2}, ProblemCode.TOO_MANY_STEPS,
     "the plan has 3 steps; the limit is 2. Merge steps or drop the ones the task does not need."),
    ([step(1), step(1)], {}, ProblemCode.DUPLICATE_STEP_ID,
     "step_id 1 is used by more than one step; give every step a unique step_id."),
    ([step(1, deps=[1])], {}, ProblemCode.SELF_DEPENDENCY, "step 1 depends on itself; remove 1 from its depends_on."),
    ([step(3, deps=[9])], {}, ProblemCode.UNKNOWN_DEPENDENCY,
     "step 3 depends on step 9, which the plan does not have: add step 9, the step that produces the value step 3 "
     "uses (a look-up with one of the tools), or remove 9 from step 3's depends_on."),
    ([step(1, deps=[2]), step(2, deps=[1])], {}, ProblemCode.CYCLE,
     "steps 1 -> 2 -> 1 depend on each other in a cycle; a step may only depend on steps that can finish before "
     "it starts."),
    ([step(1, "serach", {"query": "x"})], {}, ProblemCode.UNKNOWN_TOOL,
     "step 1 uses unknown tool 'serach'; use one of: calc, search; or null for a reasoning step."),
    ([step(1), step(2, "search", {"query": "about {$step_1_result}"})], {}, ProblemCode.UNDECLARED_REFERENCE,
     "step 2 uses $step_1_result but does not list 1 in depends_on; add 1 to depends_on."),
    ([step(1, "calc", {"expression": "$step_1_result * 3"})], {}, ProblemCode.UNDECLARED_REFERENCE,
     "step 1 uses its own result ($step_1_result), which does not exist before it runs; write the value itself "
     "(a figure from the task or an earlier turn), or refer to the step that computes it."),
    ([step(1, "search", {"query": "x", "q": "x"})], {}, ProblemCode.INVALID_ARGUMENTS,
     "step 1 (search): unknown argument 'q' (expected: query, k)."),
    ([step(1, "search", {"k": 2})], {}, ProblemCode.INVALID_ARGUMENTS,
     "step 1 (search): missing required argument 'query'."),
    ([step(1, "search", {"query": 42})], {}, ProblemCode.INVALID_ARGUMENTS,
     "step 1 (search): argument 'query' should be a string, got a number 42."),
    ([step(1, "calc", {"expression": "1", "mode": "fast"})], {}, ProblemCode.INVALID_ARGUMENTS,
     'step 1 (calc): argument \'mode\' must be one of "exact", "approx"; got "fast".'),
    ([step(1, "calc", {"expression": "1", "scale": [1]})], {}, ProblemCode.INVALID_ARGUMENTS,
     "step 1 (calc): argument 'scale' should be a number or null, got an array [1]."),
])
def test_each_problem_has_an_exact_message(steps, kwargs, code, message):
    err = problems(steps, **kwargs)
    assert [(p.code, p.message) for p in err.problems] == [(code, message)]
    assert str(err) == f"The plan is invalid:\n- {message}\nReturn the corrected complete plan."


def test_all_problems_are_reported_together():
    err = problems([step(1, "nope"), step(1, deps=[5])])
    assert [p.code for p in err.problems] == [ProblemCode.DUPLICATE_STEP_ID, ProblemCode.UNKNOWN_TOOL,
                                              ProblemCode.UNKNOWN_DEPENDENCY]


def test_null_for_an_optional_argument_is_not_a_problem():
    # the 1.5B planner writes "k": null for "not given"; the call runs with the default (dispatch drops it too)
    validate_plan(Plan(steps=[step(1, "search", {"query": "x", "k": None})]), TOOLS, max_steps=5)
    validate_plan(Plan(steps=[step(1, "calc", {"expression": "1", "scale": None})]), TOOLS, max_steps=5)
    err = problems([step(1, "search", {"query": None})])
    assert [p.message for p in err.problems] == ["step 1 (search): argument 'query' should be a string, got null."]


def test_valid_plans_pass():
    validate_plan(Plan(steps=[
        step(1, "search", {"query": "Paris"}), step(2, "search", {"query": "Rome", "k": "3"}),
        step(3, "calc", {"expression": "{$step_1_result} - {$step_2_result}", "scale": None}, deps=[1, 2]),
        step(4, None, {"anything": {"goes": [1]}}, deps=[3]),
        step(5, "search", {"query": "$step_4_result", "k": "$step_3_result.count"}, deps=[3, 4]),
    ]), TOOLS, max_steps=5)
    # a replan may depend on a step completed under the previous plan
    validate_plan(Plan(steps=[step(4, "search", {"query": "$step_2_result"}, deps=[2])]), TOOLS, max_steps=5,
                  completed={2})


def test_validate_step_allows_pending_dependencies_and_is_consistent():
    known = {}
    for s in [step(1, "search", {"query": "a"}, deps=[3]), step(2, "search", {"query": "b"}), step(3, deps=[2])]:
        validate_step(s, known, TOOLS, max_steps=5)
        known[s.step_id] = s
    validate_plan(Plan(steps=list(known.values())), TOOLS, max_steps=5)
    with pytest.raises(PlanValidationError) as err:
        validate_step(step(2), known, TOOLS, max_steps=5)
    assert err.value.problems[0].code == ProblemCode.DUPLICATE_STEP_ID
    with pytest.raises(PlanValidationError) as err:
        validate_step(step(4, deps=[1]), {1: step(1, deps=[4])}, TOOLS, max_steps=5)
    assert err.value.problems[0].code == ProblemCode.CYCLE
    with pytest.raises(PlanValidationError) as err:
        validate_step(step(6), {i: step(i) for i in range(1, 6)}, TOOLS, max_steps=5)
    assert err.value.problems[0].code == ProblemCode.TOO_MANY_STEPS


def test_a_parsed_step_never_waits_for_itself_and_a_use_of_its_own_result_is_still_refused():
    from planning.parse import parse_plan

    plan = parse_plan('{"steps": [{"step_id": 1, "tool_name": "search", "tool_input": {"query": "x"}, '
                      '"depends_on": [1]}, {"step_id": 2, "tool_name": "calc", "tool_input": {"expression": '
                      '"$step_2_result * 3"}, "depends_on": [2, 1]}]}')
    assert [s.depends_on for s in plan.steps] == [[], [1]]
    with pytest.raises(PlanValidationError) as caught:
        validate_plan(plan, TOOLS, max_steps=10)
    assert [p.code for p in caught.value.problems] == [ProblemCode.UNDECLARED_REFERENCE]


def test_a_short_json_step_using_its_own_result_is_told_so_not_that_it_waits_for_itself():
    from planning.parse import parse_plan

    plan = parse_plan('{"steps": [{"step_id": 1, "tool_name": "calc", "tool_input": {"expression": '
                      '"{$step_1_result} + {$step_1_result}"}}]}')
    assert plan.steps[0].depends_on == []
    with pytest.raises(PlanValidationError) as caught:
        validate_plan(plan, TOOLS, max_steps=10)
    assert [p.message for p in caught.value.problems] == [
        "step 1 uses its own result ($step_1_result), which does not exist before it runs; write the value itself "
        "(a figure from the task or an earlier turn), or refer to the step that computes it."]
