"""Regressions of issue 19 (part 4) through the public API on one local Ray session: each test reproduces a
report — a tool that kills or floods its executor, errors that crossed Ray garbled or as raw Ray errors — and
checks what the user gets now."""

from __future__ import annotations

import sys
import time

import pytest
from support import tools as T
from support import wire

from agents import Deployment, Orchestrator, RuntimeConfig, tool
from agents.errors import ConfigError, OrchestratorClosedError, TaskNotWaitingError, UnknownTaskError
from agents.llm import FunctionLLM

pytestmark = pytest.mark.ray

HUGE_CHARS = 50_000_000


@tool
def exits(code: int) -> str:
    """A tool with a bug: it ends the process it runs in.

    Args:
        code: The exit status.
    """
    sys.exit(code)


@tool
def floods(chars: int) -> str:
    """A tool that returns far more text than any prompt holds.

    Args:
        chars: How many characters.
    """
    return "x" * chars


@tool
async def wedges(seconds: float) -> str:
    """A tool that blocks its executor's event loop (a sync sleep inside a coroutine).

    Args:
        seconds: How long.
    """
    time.sleep(seconds)  # noqa: ASYNC251 - the point: it blocks the loop
    return "woke up"


def _planner_for(text: str) -> str:
    """The plan for each kind of task these tests submit, chosen by the task's words."""
    if "exit" in text:
        return wire.plan(wire.step(1, "exits", {"code": 3}))
    if "wedge" in text:
        return wire.plan(wire.step(1, "wedges", {"seconds": 120}))
    if "flood" in text:
        return wire.plan(wire.step(1, "floods", {"chars": HUGE_CHARS}))
    return wire.plan(wire.step(1, "lookup", {"city": "Paris"}))


def _script(request) -> str:
    text = request.messages[-1]["content"]
    match request.role:
        case "router":
            return wire.route()
        case "planner":
            return _planner_for(text)
        case _:
            return wire.reflection(answer="done")


@pytest.fixture(scope="module")
def orch(ray_session, tmp_path_factory):
    store = tmp_path_factory.mktemp("store") / "tetrarch.db"
    orch = Orchestrator(llm=FunctionLLM(_script), tools=[*T.ALL, exits, floods, wedges],
                        # The step bound also covers the restart of the wedged executor that the next task's step
                        # waits for: a new worker process, 5-8 s when another Ray shares the two cores.
                        config=RuntimeConfig(store_path=store, step_timeout_s=12,
                                             deployment=Deployment(num_executors=1)))
    yield orch
    orch.shutdown()


def test_a_tool_calling_sys_exit_fails_its_step_and_the_executor_keeps_serving(orch):
    result = orch.run("please exit now", timeout=120)
    step = result.steps[0]
    assert step.status == "failed"
    assert "exit" in (step.error or "") and "did not answer" not in (step.error or "")
    # Deployment(num_executors=1): the one executor must still answer the next, unrelated task.
    after = orch.run("population of Paris", timeout=120)
    assert after.steps[0].status == "completed" and after.steps[0].output == 2.1


def test_a_50_mb_tool_output_is_truncated_and_the_executor_keeps_serving(orch):
    result = orch.run("flood the prompt", timeout=180)
    step = result.steps[0]
    assert step.status == "completed", step.error
    assert isinstance(step.output, str) and "output truncated by tetrarch" in step.output
    assert len(step.output) < 100_000
    after = orch.run("population of Paris", timeout=120)
    assert after.steps[0].status == "completed"


def test_a_wedged_executor_is_replaced_and_later_tasks_run(orch):
    result = orch.run("wedge the executor", timeout=120)
    step = result.steps[0]
    assert step.status == "failed" and "stopped responding" in (step.error or "") and "restarted" in step.error
    after = orch.run("population of Paris", timeout=120)  # the only executor, restarted
    assert after.steps[0].status == "completed" and after.steps[0].output == 2.1, after.steps[0].error


def test_respond_to_a_task_that_is_not_waiting_raises_task_not_waiting(orch):
    result = orch.run("population of Paris", timeout=120)
    assert result.status == "accepted"
    with pytest.raises(TaskNotWaitingError) as info:
        orch.respond(result.task_id, "approve")
    assert info.value.status == "accepted" and result.task_id in str(info.value)


def test_unknown_task_error_reads_once_across_ray(orch):
    with pytest.raises(UnknownTaskError) as info:
        orch.handle("no-such-task")
    message = str(info.value)
    assert message.count("no task") == 1 and message.startswith("no task 'no-such-task' in this store")


def test_a_lone_surrogate_in_the_task_is_rejected_clearly(orch):
    with pytest.raises(ConfigError, match="surrogate"):
        orch.submit("compare \ud800 and Rome")


def test_a_task_longer_than_the_prompt_budget_is_rejected_at_submit(orch):
    with pytest.raises(ConfigError, match="context_token_budget"):
        orch.submit("Paris and Rome. " * 3000)  # 48,000 characters: under MAX_TEXT_CHARS, over the token budget


def _bad_json_for(role: str):
    def script(request) -> str:
        if request.role == role:
            return "this is not JSON {"
        return _script(request)
    return script


@pytest.mark.parametrize("role", ["router", "reflector"])
def test_invalid_json_from_router_or_reflector_fails_as_invalid_llm_output(ray_session, tmp_path, role):
    orch = Orchestrator(llm=FunctionLLM(_bad_json_for(role)), tools=T.ALL,
                        config=RuntimeConfig(store_path=tmp_path / "t.db"))
    try:
        result = orch.run("population of Paris", timeout=120)
    finally:
        orch.shutdown()
    assert result.status == "failed" and result.stopped_reason == "invalid_llm_output"
    assert "please report this bug" not in (result.error or "")
    assert result.usage.by_role[role].llm_calls == 2  # the call and its one repair round


@pytest.mark.parametrize("role", ["router", "planner", "reflector"])
def test_a_roles_invalid_output_ends_a_session_turn_with_one_clean_sentence(ray_session, tmp_path, role):
    orch = Orchestrator(llm=FunctionLLM(_bad_json_for(role)), tools=T.ALL,
                        config=RuntimeConfig(store_path=tmp_path / "t.db"))
    try:
        session = orch.session()
        result = session.run("population of Paris", timeout=120)
        turns = session.turns()
    finally:
        orch.shutdown()
    assert result.status == "failed" and result.error
    assert "\n" not in result.error.strip(), result.error
    for detail in ("ray::", "pid=", "actor_id", "Traceback", 'File "'):
        assert detail not in result.error, result.error
    assert [(t.status, t.answer) for t in turns] == [("failed", None)]  # the error is no answer to remember


def test_result_after_shutdown_raises_orchestrator_closed(ray_session, tmp_path):
    orch = Orchestrator(llm=FunctionLLM(_script), tools=T.ALL, config=RuntimeConfig(store_path=tmp_path / "t.db"))
    handle = orch.submit("population of Paris")
    orch.shutdown()
    with pytest.raises(OrchestratorClosedError):
        handle.result(timeout=10)


def test_a_string_llm_is_rejected_at_construction(ray_session, tmp_path):
    with pytest.raises(ConfigError, match="complete"):
        Orchestrator(llm="gpt-4", tools=T.ALL, config=RuntimeConfig(store_path=tmp_path / "t.db"))  # type: ignore[arg-type]

