"""A terse replan is a delta: completed steps keep their ids and outputs, the model writes only new steps
numbered after the old ones, and the wire plan the user sees is still complete (no Ray)."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st
from support import tools as T
from support import wire
from support.local import run_task

from agents.llm import FunctionLLM
from agents.llm.base import LLMRequest
from planning.delta import as_delta, expand
from planning.models import Plan, PlanStep
from planning.validate import validate_plan
from support.tiers import examples

FIRST = '1. lookup(city="Paris")\n2. always_fails(x=1)\n'


class Script:
    """Replies per role in order, keeping every request (the prompts are part of what is tested)."""

    def __init__(self, replies: dict[str, list[str]]) -> None:
        self.replies = {role: list(texts) for role, texts in replies.items()}
        self.requests: list[LLMRequest] = []

    def __call__(self, request: LLMRequest) -> str:
        self.requests.append(request)
        return self.replies[request.role].pop(0)

    def planner(self, n: int) -> list[dict]:
        return [r for r in self.requests if r.role == "planner"][n].messages


def _run(script: Script, task: str):
    return asyncio.run(run_task(FunctionLLM(script, stream_chunk_size=7), task))


def test_the_model_writes_only_the_new_steps_and_the_kept_one_does_not_run_again():
    T.reset("lookup-paris")
    script = Script({"router": [wire.route()],
                     "planner": [FIRST, '3. lookup(city="Berlin")\n4. subtract(a=$3, b=$1)\n'],
                     "reflector": ["replan 2 2 3: step 2 cannot work, use Berlin", "accept 5 5 5\nanswer: 1.6"]})
    result, sink = _run(script, "How many more people live in Berlin than in Paris?")
    assert result.status == "accepted" and result.answer == "1.6"
    assert T.count("lookup-paris") == 1
    assert [(s.step_id, s.tool_name, s.output) for s in result.steps] == \
        [(1, "lookup", 2.1), (3, "lookup", 3.7), (4, "subtract", 1.6)]
    prompt = script.planner(1)[1]["content"]
    assert "The outputs of steps $1 are kept" in prompt and "numbered from 3" in prompt
    assert "#2 always_fails failed" in prompt  # one line a result, fenced
    replanned = next(e for e in sink.events if e.type == "replanned")
    assert replanned.payload.kept_steps == [1]


def test_in_a_delta_a_kept_step_written_again_is_skipped_but_a_changed_one_is_repaired():
    script = Script({"router": [wire.route()],
                     "planner": [FIRST, '3. lookup(city="Berlin")\n1. lookup(city="Rome")\n',
                                 '3. lookup(city="Berlin")\n1. lookup(city="Paris")\n'],
                     "reflector": ["replan 2 2 3: use Berlin", "accept 5 5 5\nanswer: ok"]})
    result, _ = _run(script, "Population of Berlin, please")
    assert result.status == "accepted"
    assert [s.step_id for s in result.plan.steps] == [1, 3]
    repair = script.planner(2)[-1]["content"]
    assert "step 1 is a kept step" in repair and "number new steps from 3" in repair


def test_a_whole_plan_numbered_from_one_is_taken_as_a_complete_plan():
    """A model that ignores the delta instruction and rewrites the plan is not failed for it: the old rule
    applies (an unchanged step is reused, a changed one runs)."""
    T.reset("lookup-paris")
    script = Script({"router": [wire.route()],
                     "planner": [FIRST, '1. lookup(city="Paris")\n2. lookup(city="Berlin")\n'],
                     "reflector": ["replan 2 2 3: use Berlin", "accept 5 5 5\nanswer: ok"]})
    result, _ = _run(script, "Population of Paris and Berlin")
    assert result.status == "accepted" and T.count("lookup-paris") == 1
    assert [(s.step_id, s.output) for s in result.steps] == [(1, 2.1), (2, 3.7)]


_TOOLS = st.sampled_from(["a", "b", "c"])


@st.composite
def _plans(draw) -> Plan:
    steps = []
    for sid in range(1, draw(st.integers(1, 7)) + 1):
        deps = sorted(draw(st.sets(st.integers(1, sid - 1), max_size=2))) if sid > 1 else []
        text = " ".join(f"{{$step_{d}_result}}" for d in deps)
        steps.append(PlanStep(step_id=sid, description=f"s{sid}", tool_name=draw(_TOOLS),
                              tool_input={"x": draw(st.integers(0, 2)), "t": text}, depends_on=deps))
    return Plan(steps=steps)


@settings(max_examples=examples(200), deadline=None)
@given(_plans(), _plans(), st.data())
def test_a_delta_expands_to_a_valid_plan_with_the_same_calls(old: Plan, new: Plan, data) -> None:
    kept_ids = data.draw(st.sets(st.sampled_from([s.step_id for s in old.steps])))
    kept: list[PlanStep] = []  # like completed steps: every dependency of a kept step is kept too
    for s in old.steps:
        if s.step_id in kept_ids and set(s.depends_on) <= {k.step_id for k in kept}:
            kept.append(s)
    start = len(old.steps) + 1
    delta = as_delta(kept, new, start=start)
    assert all(s.step_id >= start for s in delta)
    whole = expand(kept, delta)
    schema = {"type": "object", "properties": {"x": {"type": "integer"}, "t": {"type": "string"}}}
    validate_plan(whole, {"a": schema, "b": schema, "c": schema}, max_steps=64)
    # every call of the new plan is in the expanded plan, once its references follow the renumbering
    ids = {s.step_id: s for s in whole.steps}

    def shape(step: PlanStep, by_id: dict[int, PlanStep]) -> tuple:
        return (step.tool_name, step.tool_input["x"], tuple(sorted(shape(by_id[d], by_id) for d in step.depends_on)))

    new_ids = {s.step_id: s for s in new.steps}
    assert {shape(s, new_ids) for s in new.steps} <= {shape(s, ids) for s in whole.steps}
    assert len(delta) <= len(new.steps)
