"""End-to-end flows through the public API, on both runtimes: in this process (``runtime="inprocess"``) and on
one local Ray session (real actors). The same scripted roles, the same assertions: the runtimes must not differ
in events, results, the store or the policy."""

from __future__ import annotations

import re

import time

import pytest
from support import tools as T
from support import wire

from agents import Deployment, Orchestrator, RuntimeConfig
from agents.llm import FunctionLLM, ScriptedLLM

RUNTIMES = ["inprocess", pytest.param("ray", marks=pytest.mark.ray)]


@pytest.fixture(scope="module", params=RUNTIMES)
def runtime(request):
    """Module-scoped, so pytest runs every in-process test first and then starts Ray once for the rest."""
    if request.param == "ray":
        request.getfixturevalue("ray_session")
    return request.param


@pytest.fixture(scope="module")
def module_store(tmp_path_factory, runtime):
    return tmp_path_factory.mktemp(f"store-{runtime}") / "tetrarch.db"


@pytest.fixture(scope="module")
def orchestrator(runtime, module_store):
    def make(llm, store=None, **cfg):
        return Orchestrator(llm=llm, tools=T.ALL, config=RuntimeConfig(store_path=store or module_store, **cfg),
                            runtime=runtime)
    return make


def test_accept_with_live_events(orchestrator):
    plan = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                     wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan], "reflector": [wire.reflection(answer="Rome, by 0.7 million")]})
    orch = orchestrator(llm)
    try:
        handle = orch.submit("Which is bigger, Paris or Rome, and by how much?")
        seen = [e.type for e in handle.events()]
        result = handle.result(timeout=60)
    finally:
        orch.shutdown()
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million"
    assert [s.output for s in result.steps] == [2.1, 2.8, 0.7]
    assert result.usage.total.llm_calls == 3
    assert seen[0] == "task_submitted" and seen[-1] == "task_finished"
    assert seen.count("step_finished") == 3


def test_independent_steps_overlap(orchestrator):
    plan = wire.plan(*[wire.step(i, "sleepy", {"seconds": 1.0, "label": str(i)}) for i in (1, 2, 3)])
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[r.role])
    orch = orchestrator(llm, deployment=Deployment(num_executors=2))
    try:
        result = orch.run("three slow lookups", timeout=60)
    finally:
        orch.shutdown()
    assert result.status == "accepted"
    starts = [s.started_at for s in result.steps]
    ends = [s.finished_at for s in result.steps]
    # Overlap itself, not a wall-clock bound: a fresh Orchestrator's executors pay a warm-up on their first steps
    # (1.3 s measured, 0.03 s on the next task), which a bound of 2 s mixed into it on a loaded machine. Run one
    # after another, the three would never all be running at one instant, and would finish >= 1 s apart.
    assert max(starts) < min(ends), f"three independent steps never ran at the same time: {starts} → {ends}"
    assert max(ends) - min(ends) < 1.0, f"three independent 1 s steps finished apart: {ends}"


def test_streamed_plan_dispatches_before_the_plan_ends(orchestrator):
    plan = wire.plan(wire.step(1, "sleepy", {"seconds": 0.05, "label": "a"}),
                     *[wire.step(i, "sleepy", {"seconds": 0.05, "label": f"b{i}"}) for i in range(2, 7)])
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[r.role],
                      stream_chunk_size=8, chunk_delay_s=0.02)
    orch = orchestrator(llm)
    try:
        handle = orch.submit("stream it")
        events = list(handle.events())
    finally:
        orch.shutdown()
    started_1 = next(e.ts for e in events if e.type == "step_started" and e.payload.step_id == 1)
    last_plan_step = max(e.ts for e in events if e.type == "plan_step")
    assert started_1 < last_plan_step


def test_confirmation_escalates_then_respond_runs_it(orchestrator):
    T.reset("delete-r9")
    plan = wire.plan(wire.step(1, "delete_record", {"record_id": "r9"}))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan], "reflector": [wire.reflection(answer="deleted")]})
    orch = orchestrator(llm)
    try:
        first = orch.submit("delete record r9").result(timeout=60)
        assert first.status == "escalated" and first.stopped_reason == "needs_confirmation"
        assert T.count("delete-r9") == 0
        final = orch.respond(first.task_id, "approve").result(timeout=60)
    finally:
        orch.shutdown()
    assert final.status == "accepted" and final.answer == "deleted"
    assert T.count("delete-r9") == 1


def test_garbage_plan_fails_cleanly_after_one_repair(orchestrator):
    llm = ScriptedLLM({"router": [wire.route()], "planner": ["garbage", "more garbage"]})
    orch = orchestrator(llm)
    try:
        result = orch.run("anything", timeout=60)
    finally:
        orch.shutdown()
    assert result.status == "failed" and result.error and "planner" in result.error
    assert result.usage.by_role["planner"].llm_calls == 2


def test_fifty_concurrent_tasks(orchestrator):
    plan = wire.plan(wire.step(1, "sleepy", {"seconds": 0.2, "label": "x"}),
                     wire.step(2, "sleepy", {"seconds": 0.2, "label": "y"}))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[r.role])
    orch = orchestrator(llm)
    try:
        t0 = time.monotonic()
        handles = [orch.submit(f"task {i}") for i in range(50)]
        results = [h.result(timeout=120) for h in handles]
        elapsed = time.monotonic() - t0
    finally:
        orch.shutdown()
    assert all(r.status == "accepted" for r in results)
    assert len({r.task_id for r in results}) == 50
    assert elapsed < 60


# ---------------------------------------------------------------- the reflector's and planner's other flows
# One Orchestrator serves them all (actor start-up costs seconds); the script picks each flow by the task text.

def _text(request) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.messages)


CYCLE = wire.plan(wire.step(1, "lookup", {"city": "a"}, deps=[2]), wire.step(2, "lookup", {"city": "b"}, deps=[1]))
UNKNOWN = wire.plan(wire.step(1, "teleport", {"to": "Mars"}))
FIRST = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "always_fails", {"x": 1}))
SECOND = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Berlin"}))


def flows(request) -> str:
    if request.role == "executor":  # the argument-repair prompt carries the call, not the task text
        return '{"city": "Paris"}'
    text = _text(request)
    flow = next(f for f in ("[replan]", "[retry]", "[caps]", "[cycle]", "[unknown]") if f in text)
    match request.role, flow:
        case "router", _:
            return wire.route()
        case "planner", "[replan]":
            return SECOND if "previous plan:" in text else FIRST  # agents.roles.replan, either form
        case "planner", "[retry]":
            return wire.plan(wire.step(1, "lookup", {"city": "Pariss"}))
        case "planner", "[caps]":  # a new plan each time: one repeating the rejected plan stops as a loop at once
            city = "Paris" if "previous plan:" not in text else ("Berlin" if "Rome" in text else "Rome")
            return wire.plan(wire.step(1, "lookup", {"city": city}))
        case "planner", "[cycle]":
            return CYCLE
        case "planner", "[unknown]":
            return UNKNOWN
        case "reflector", "[replan]":
            if "always_fails" in text:
                return wire.reflection("replan", (2, 2, 3), answer=None, feedback="use Berlin")
            return wire.reflection(answer="Berlin")
        case "reflector", "[retry]":
            if re.search(r"^#\d+ \S+ failed", text, re.MULTILINE):  # prompts.compact's mark of a failed step
                return wire.reflection("retry_step", (2, 1, 3), answer=None, retry_step=1,
                                       modification="the city is Paris")
            return wire.reflection(answer="2.1 million")
        case "reflector", "[caps]":
            return wire.reflection("replan", (2, 2, 2), answer=None, feedback="still wrong")
    raise AssertionError(f"no script for {request.role} in {flow}")


@pytest.fixture(scope="module")
def flows_orch(orchestrator):
    orch = orchestrator(FunctionLLM(flows), max_replans=2)
    yield orch
    orch.shutdown()


def test_replan_once_then_accept_keeps_the_completed_step(flows_orch):
    T.reset("lookup-paris")
    result = flows_orch.run("[replan] Paris and another city", timeout=60)
    assert result.status == "accepted" and result.answer == "Berlin" and result.replans == 1
    assert [s.output for s in result.steps] == [2.1, 3.7]
    assert T.count("lookup-paris") == 1, "the identical completed step must not run again after the replan"
    assert result.usage.by_role["planner"].llm_calls == 2


def test_retry_step_reruns_it_with_the_modification(flows_orch):
    result = flows_orch.run("[retry] population of Paris", timeout=60)
    assert result.status == "accepted" and result.answer == "2.1 million"
    assert result.steps[0].output == 2.1 and result.steps[0].attempts == 2
    assert result.usage.by_role["executor"].llm_calls == 1  # the one argument-repair round


def test_always_wrong_escalates_after_the_replan_cap(flows_orch):
    result = flows_orch.run("[caps] never good enough", timeout=60)
    assert result.status == "escalated" and result.stopped_reason == "max_replans"
    assert result.replans == 2 and result.question


@pytest.mark.parametrize("flow,fragment", [("[cycle]", "cycle"), ("[unknown]", "teleport")])
def test_invalid_plans_fail_after_exactly_one_repair_round(flows_orch, flow, fragment):
    result = flows_orch.run(f"{flow} anything", timeout=60)
    assert result.status == "failed" and result.stopped_reason in ("invalid_plan", "invalid_llm_output")
    assert fragment in result.error.lower()
    assert result.usage.by_role["planner"].llm_calls == 2


@pytest.mark.ray
def test_shutdown_leaves_no_actors(ray_session, tmp_path):
    ray = ray_session
    llm = ScriptedLLM({"router": [wire.route("direct", answer="hi")]})
    orch = Orchestrator(llm=llm, tools=T.ALL, config=RuntimeConfig(store_path=tmp_path / "t.db"))
    assert orch.run("say hi", timeout=60).answer == "hi"
    # By default the roles run inside the Supervisor (Deployment.roles_in_shards): no actors of their own.
    roles = () if orch.config.deployment.roles_in_shards else ("router", "planner", "reflector")
    names = [f"{role}-{orch._instance}" for role in ("supervisor", *roles, "journal")]
    names += [f"executor-{orch._instance}-{i}" for i in range(orch.config.deployment.num_executors)]
    namespace = orch.config.deployment.namespace
    assert all(ray.get_actor(n, namespace=namespace) for n in names)  # they existed by these names
    orch.shutdown()
    deadline = time.monotonic() + 10
    alive = names
    while alive and time.monotonic() < deadline:
        alive = [n for n in alive if _named_actor_exists(ray, n, namespace)]
        time.sleep(0.2)
    assert alive == []


def _named_actor_exists(ray, name: str, namespace: str) -> bool:
    try:
        ray.get_actor(name, namespace=namespace)
    except ValueError:
        return False
    return True
