"""Speculated tool calls in the task engine (``agents.engine.speculation``), in-process with scripted roles: a cached
plan's reads start before the route, never a write; the answer is the same with and without them; a speculated
result serves only the same call; and every call no step took is cancelled when the task ends."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import wire
from support.local import local_runtime

from agents import tool
from agents.config import RuntimeConfig, ToolPolicy
from agents.engine.memory_link import CachedPlan, PlanHint
from agents.engine.runtime import LocalRuntime
from agents.engine.sink import MemorySink
from agents.engine.speculation import SpeculativeReads
from agents.engine.task_runner import TaskRunner
from agents.engine.task_state import TaskState
from agents.llm import FunctionLLM
from agents.llm.base import LLMRequest
from agents.results import TaskResult
from agents.roles.messages import StepOutcome, StepRequest
from agents.tools.errors import PermanentToolError
from planning.models import Plan, PlanStep
from planning.speculation import call_key

LOG: list[tuple[str, Any]] = []
CANCELLED: list[int] = []
FAIL_EARLY: set[int] = set()
"""Arguments for which ``read_b`` fails before the route is known (a speculated call's failure)."""


@tool
async def read_a(x: int) -> int:
    """Ten times x.

    Args:
        x: A number.
    """
    LOG.append(("read_a", x))
    await asyncio.sleep(0)
    return x * 10


@tool
async def read_b(x: int) -> int:
    """x plus one.

    Args:
        x: A number.
    """
    LOG.append(("read_b", x))
    if x in FAIL_EARLY and ("routed", None) not in LOG:
        raise PermanentToolError(f"not yet: {x}")
    return x + 1


@tool(permission="write")
async def write_w(x: int) -> int:
    """Store x.

    Args:
        x: A number.
    """
    LOG.append(("write_w", x))
    return x


@tool(idempotent=False)
async def read_ni(x: int) -> int:
    """A read that is not idempotent.

    Args:
        x: A number.
    """
    LOG.append(("read_ni", x))
    return -x


@tool
async def read_slow(x: int) -> int:
    """Never answers in time.

    Args:
        x: A number.
    """
    LOG.append(("read_slow", x))
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        CANCELLED.append(x)
        raise
    return x


TOOLS = [read_a, read_b, write_w, read_ni, read_slow]
SAFE = {"read_a", "read_b", "read_slow"}


class RoutedLate:
    """The local runtime, whose router answers a moment later and logs when it did."""

    def __init__(self, inner: LocalRuntime) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def route(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0.01)
        result = await self._inner.route(*args, **kwargs)
        LOG.append(("routed", None))
        return result


class CacheOffer:
    """A plan cache that offers ``plan`` for every task: filled, or (``adapt``) as a template's best guess for the
    planner to adapt."""

    def __init__(self, plan: Plan, adapt: bool = False) -> None:
        self.plan, self.adapt = plan, adapt

    def cached_plan(self, task: str, tool_schema: Any, *, max_steps: int) -> CachedPlan | PlanHint:
        if self.adapt:
            return PlanHint("tpl-1", "Hint from the plan cache: <plan-hint>a plan</plan-hint>", self.plan)
        return CachedPlan("tpl-1", self.plan)

    def record_reuse(self, template_id: str, accepted: bool) -> None:
        pass

    def remember(self, task: str, plan: Plan) -> None:
        pass


def _roles(route: str = "plan", planned: Plan | None = None) -> FunctionLLM:
    def fn(request: LLMRequest) -> str:
        if request.role == "router":
            return wire.route(route, answer="hi" if route != "plan" else None)
        if request.role == "planner":
            assert planned is not None, "a filled plan needs no planner"
            return planned.model_dump_json()
        return wire.reflection(answer="done")
    return FunctionLLM(fn)


def _run(plan: Plan, *, speculate: bool, route: str = "plan", timeout_s: float = 900.0,
         planned: Plan | None = None) -> tuple[TaskResult, MemorySink, list[tuple[str, Any]]]:
    """``plan``: what the cache offers (filled; or, with ``planned``, the guess the planner adapts into
    ``planned``)."""
    LOG.clear()
    config = RuntimeConfig(store_path=":memory:", tools=ToolPolicy(speculate_reads=speculate), task_timeout_s=timeout_s)
    llm = _roles(route, planned)
    state = TaskState(task_id="t-spec", task="compute it", submitted_at=time.time())
    sink = MemorySink("t-spec")
    runner = TaskRunner(state, config=config, runtime=RoutedLate(local_runtime(llm, TOOLS, config)), sink=sink,
                        memory=CacheOffer(plan, adapt=planned is not None))  # type: ignore[arg-type]
    result = asyncio.run(runner.run())
    return result, sink, list(LOG)


def _served(sink: MemorySink) -> set[int]:
    return {e.payload.step_id for e in sink.events if e.type == "step_finished" and e.payload.speculative}


# ------------------------------------------------------------------------------------------------ property
@st.composite
def plans(draw: st.DrawFn) -> Plan:
    n = draw(st.integers(1, 5))
    steps = []
    for i in range(1, n + 1):
        name = draw(st.sampled_from(["read_a", "read_b", "write_w", "read_ni"]))
        if i > 1 and draw(st.booleans()):
            dep = draw(st.integers(1, i - 1))
            steps.append(PlanStep(step_id=i, tool_name=name, tool_input={"x": f"$step_{dep}_result"},
                                  depends_on=[dep]))
        else:
            steps.append(PlanStep(step_id=i, tool_name=name, tool_input={"x": draw(st.integers(-2, 3))}))
    return Plan(steps=steps)


def _outputs(result: TaskResult) -> list[tuple[int, str, Any]]:
    return [(s.step_id, s.status, s.output) for s in result.steps]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans())
def test_speculation_runs_no_write_and_changes_no_answer(plan: Plan) -> None:
    FAIL_EARLY.clear()
    off, _, off_log = _run(plan, speculate=False)
    on, sink, on_log = _run(plan, speculate=True)
    assert (on.status, on.answer, _outputs(on)) == (off.status, off.answer, _outputs(off))
    early = on_log[:on_log.index(("routed", None))]
    known = {(s.tool_name, s.tool_input["x"]) for s in plan.steps if not s.depends_on}
    for name, x in early:  # before the route: only reads of the cached plan whose arguments the task fixes
        assert name in SAFE and (name, x) in known
    # Not one more and not one less; independent writes may run in another order (a served read ends sooner), which
    # the DAG allows, so they are compared as a multiset (each write's inputs are the same on both runs).
    writes = sorted((c for c in on_log if c[0] in ("write_w", "read_ni")), key=repr)
    assert writes == sorted((c for c in off_log if c[0] in ("write_w", "read_ni")), key=repr)
    served = _served(sink)
    for step in plan.steps:  # a served step is a safe read the cached plan fixed
        if step.step_id in served:
            assert step.tool_name in SAFE and not step.depends_on
    assert len(early) == len(served) == len({(s.tool_name, s.tool_input["x"]) for s in plan.steps
                                             if s.tool_name in SAFE and not s.depends_on})


@st.composite
def adapted(draw: st.DrawFn) -> tuple[Plan, Plan]:
    """A cached guess and the plan the planner writes from it: each step kept, or given another argument (an
    equal number of another JSON type too), another read tool, or a reference instead."""
    guess = draw(plans())
    steps = []
    for step in guess.steps:
        change = draw(st.sampled_from(["keep", "keep", "value", "float", "tool", "ref"]))
        x = step.tool_input["x"]
        if change == "value" and isinstance(x, int):
            step = step.model_copy(update={"tool_input": {"x": x + 1}})
        elif change == "float" and isinstance(x, int):
            step = step.model_copy(update={"tool_input": {"x": float(x)}})
        elif change == "tool" and step.tool_name in ("read_a", "read_b"):
            step = step.model_copy(update={"tool_name": "read_b" if step.tool_name == "read_a" else "read_a"})
        elif change == "ref" and step.step_id > 1:
            step = step.model_copy(update={"tool_input": {"x": "$step_1_result"}, "depends_on": [1]})
        steps.append(step)
    return guess, Plan(steps=steps)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(adapted())
def test_an_adapted_plan_is_served_only_where_the_planner_wrote_the_same_call(pair: tuple[Plan, Plan]) -> None:
    guess, planned = pair
    FAIL_EARLY.clear()
    off, _, off_log = _run(guess, speculate=False, planned=planned)
    on, sink, on_log = _run(guess, speculate=True, planned=planned)
    assert (on.status, on.answer, _outputs(on)) == (off.status, off.answer, _outputs(off))
    started = {call_key(s.tool_name or "", s.tool_input) for s in guess.steps
               if s.tool_name in SAFE and not s.depends_on}
    early = on_log[:on_log.index(("routed", None))]
    assert all(name in SAFE for name, _ in early)
    unsafe = ("write_w", "read_ni")
    assert sorted((c for c in on_log if c[0] in unsafe), key=repr) == sorted((c for c in off_log if c[0] in unsafe), key=repr)
    for step in planned.steps:
        same_call = not step.depends_on and call_key(step.tool_name or "", step.tool_input) in started
        if step.step_id in _served(sink):
            assert same_call and step.tool_name in SAFE  # the tool and the arguments, as JSON, of a started call
        elif same_call:  # a started call the planner wrote again serves it, unless an earlier step took it
            same = [s for s in planned.steps if not s.depends_on and
                    call_key(s.tool_name or "", s.tool_input) == call_key(step.tool_name or "", step.tool_input)]
            assert any(s.step_id in _served(sink) for s in same)


# ------------------------------------------------------------------------------------------------ serving
class _Handle:
    def __init__(self, outcome: StepOutcome) -> None:
        self.outcome_value, self.output_ref, self.executor, self.cancelled = outcome, None, "fake", False

    async def outcome(self) -> StepOutcome:
        self.output_ref = self.outcome_value.output
        return self.outcome_value

    def settled(self) -> StepOutcome | None:
        return None

    def cancel(self) -> None:
        self.cancelled = True

    def replace_executor(self) -> None:
        pass


class _Calls:
    """A runtime whose calls answer ``tool(x)`` as ``[tool, x, n]``, n counting every call made."""

    def __init__(self, fail: bool = False) -> None:
        self.sent: list[StepRequest] = []
        self.fail = fail

    def dispatch_many(self, items: Any) -> list[_Handle]:
        return [self.dispatch(r, i) for r, i in items]

    def dispatch(self, req: StepRequest, inputs: Mapping[int, Any]) -> _Handle:
        self.sent.append(req)
        ok = not (self.fail and len(self.sent) == 1)
        return _Handle(StepOutcome(step_id=req.step.step_id, attempt=req.attempt, ok=ok, started_at=0.0,
                                   finished_at=0.0, output=[req.step.tool_name, req.step.tool_input, len(self.sent)],
                                   error=None if ok else "boom", error_kind=None if ok else "permanent",
                                   output_inline=True))


def _request(step: PlanStep, attempt: int = 1, modification: str | None = None) -> StepRequest:
    return StepRequest(task_id="t", task="x", plan_version=1, step=step, attempt=attempt, timeout_s=5,
                       modification=modification)


def _state() -> TaskState:
    return TaskState(task_id="t", task="x", submitted_at=0.0)


step_inputs = st.fixed_dictionaries({"x": st.sampled_from([1, 1.0, True, 2, "1"])})


@given(st.lists(step_inputs, min_size=1, max_size=3), st.lists(st.tuples(st.sampled_from(["read_a", "read_b"]),
                                                                         step_inputs, st.integers(1, 2)), max_size=4))
def test_a_speculated_result_serves_only_the_same_tool_and_arguments(cached: list[dict[str, Any]],
                                                                     planned: list[tuple[str, dict, int]]) -> None:
    async def go() -> None:
        inner = _Calls()
        steps = [PlanStep(step_id=i + 1, tool_name="read_a", tool_input=x) for i, x in enumerate(cached)]
        import json
        unique = list({json.dumps(s.tool_input, sort_keys=True): s for s in steps}.values())
        reads = SpeculativeReads.start(inner, _state(), unique, timeout_s=5, generation=0)
        runtime = reads.runtime(inner)
        served_keys: set[str] = set()
        for n, (name, args, attempt) in enumerate(planned, start=10):
            step = PlanStep(step_id=n, tool_name=name, tool_input=args)
            outcome = await runtime.dispatch(_request(step, attempt), {}).outcome()
            assert outcome.step_id == n and outcome.attempt == attempt
            key = json.dumps(args, sort_keys=True)
            if outcome.speculative:
                assert name == "read_a" and attempt == 1 and key not in served_keys
                assert any(json.dumps(s.tool_input, sort_keys=True) == key for s in unique)
                assert outcome.output[:2] == [name, args] and type(outcome.output[1]["x"]) is type(args["x"])
                served_keys.add(key)
            else:
                assert outcome.output[:2] == [name, args]  # a call of its own
        await reads.close()

    asyncio.run(go())


def test_a_speculated_failure_is_not_the_step_s_failure_the_same_call_runs_again() -> None:
    async def go() -> tuple[StepOutcome, list[StepRequest]]:
        inner = _Calls(fail=True)
        step = PlanStep(step_id=1, tool_name="read_a", tool_input={"x": 1})
        reads = SpeculativeReads.start(inner, _state(), [step], timeout_s=5, generation=0)
        outcome = await reads.runtime(inner).dispatch(_request(step), {}).outcome()
        return outcome, inner.sent

    outcome, sent = asyncio.run(go())
    assert outcome.ok and not outcome.speculative and outcome.output[2] == 2  # the step's own call answered
    assert len(sent) == 2 and sent[0].cost is not None  # the speculated one could make no model call


def test_a_step_whose_speculated_read_failed_runs_normally_in_the_engine() -> None:
    FAIL_EARLY.clear()
    FAIL_EARLY.add(2)
    plan = Plan(steps=[PlanStep(step_id=1, tool_name="read_b", tool_input={"x": 2})])
    try:
        result, sink, log = _run(plan, speculate=True)
    finally:
        FAIL_EARLY.clear()
    assert result.status == "accepted" and result.steps[0].output == 3
    assert log.count(("read_b", 2)) == 2 and not _served(sink)
    assert not [e for e in sink.events if e.type == "step_failed"]


# ------------------------------------------------------------------------------------------------ cleanup
@pytest.mark.parametrize("route", ["direct", "refuse", "clarify"])
def test_speculated_calls_are_cancelled_when_the_route_is_not_plan(route: str) -> None:
    CANCELLED.clear()
    plan = Plan(steps=[PlanStep(step_id=1, tool_name="read_slow", tool_input={"x": 7})])
    result, sink, log = _run(plan, speculate=True, route=route)
    assert result.status != "failed" and ("read_slow", 7) in log
    assert CANCELLED == [7]  # stopped, not left running after the task ended
    assert not [e for e in sink.events if e.type.startswith("step_")]


def test_closing_cancels_every_call_no_step_took() -> None:
    CANCELLED.clear()
    plan = Plan(steps=[PlanStep(step_id=1, tool_name="read_slow", tool_input={"x": 8})])

    async def go() -> int:
        runtime = local_runtime(_roles(), TOOLS, RuntimeConfig(store_path=":memory:"))
        state = TaskState(task_id="t-2", task="x", submitted_at=time.time())
        reads = SpeculativeReads.start(runtime, state, plan.steps, timeout_s=60, generation=0)
        await asyncio.sleep(0.01)
        pending = reads.pending
        await reads.close()  # what the runner does once the first plan has run, and when the task ends
        return pending

    assert asyncio.run(go()) == 1
    assert CANCELLED == [8]


def test_speculated_calls_are_cancelled_when_the_task_is_cut_off() -> None:
    CANCELLED.clear()
    plan = Plan(steps=[PlanStep(step_id=1, tool_name="read_slow", tool_input={"x": 9})])
    result, _, _ = _run(plan, speculate=True, timeout_s=0.5)
    assert result.status == "failed" and result.stopped_reason == "task_timeout"
    assert CANCELLED == [9]  # the served step's call, stopped with the task


# ------------------------------------------------------------------------------------------------ the guess
def test_the_best_guess_fills_what_code_can_and_gives_up_on_a_slot_with_two_values() -> None:
    from agents.engine.memory_link import best_guess
    from agents.memory.plan_cache import extract_template, plan_reuse

    plan = Plan(steps=[PlanStep(step_id=1, description="population of paris", tool_name="lookup",
                                tool_input={"city": "Paris", "note": "paris"})])
    template = extract_template("What is the population of Paris?", plan)
    assert not template.fillable and type(plan_reuse(template, "What is the population of Rome?")).__name__ == "Adapt"
    guess = best_guess(template, "What is the population of Rome?")
    assert guess is not None and guess.steps[0].tool_input == {"city": "Rome", "note": "paris"}  # a guess, kept as is
    twice = extract_template("Is Paris older than Berlin, and is Paris bigger?", Plan(steps=[
        PlanStep(step_id=1, tool_name="lookup", tool_input={"city": "Paris"}),
        PlanStep(step_id=2, tool_name="lookup", tool_input={"city": "Berlin"})]))
    assert best_guess(twice, "Is Rome older than Oslo, and is Rome bigger?") is not None
    assert best_guess(twice, "Is Rome older than Oslo, and is Lyon bigger?") is None  # one slot, two values
    assert best_guess(twice, "How far is Oslo?") is None  # another shape
