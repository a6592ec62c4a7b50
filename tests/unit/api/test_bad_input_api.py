"""Issue 60: bad input through the public API is a typed error (or a failed task) that says what to do — never a
raw pydantic error, never "internal error … please report this bug" for a bug in the user's own script."""

from __future__ import annotations

import pickle

import pytest
from support import tools as T
from support import wire

from agents import Orchestrator, RuntimeConfig
from agents.errors import ConfigError, InvalidResponseError, UsageError
from agents.llm import FunctionLLM, LLMRequest, ScriptedLLM
from agents.llm.function_llm import FunctionLLMError
from agents.store import StoreOpenError


@pytest.fixture
def escalated(tmp_path):
    """An Orchestrator and a task waiting for confirmation of a write tool."""
    T.reset("delete-r9")
    plan = wire.plan(wire.step(1, "delete_record", {"record_id": "r9"}))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan], "reflector": [wire.reflection(answer="deleted")]})
    orch = Orchestrator(llm=llm, tools=T.ALL, config=RuntimeConfig(store_path=tmp_path / "t.db"),
                        runtime="inprocess")
    try:
        first = orch.submit("delete record r9").result(timeout=30)
        assert first.status == "escalated"
        yield orch, first.task_id
    finally:
        orch.shutdown()


@pytest.mark.parametrize("text", [{"a": 1}, ["approve"], 1, None])
def test_respond_refuses_an_answer_that_is_not_text(escalated, text):
    orch, task_id = escalated
    with pytest.raises(InvalidResponseError, match=r"respond\(\) takes the answer as text \(a str\), got "):
        orch.respond(task_id, text)
    assert orch.handle(task_id).result(timeout=5).status == "escalated"  # still waiting, nothing ran
    assert T.count("delete-r9") == 0
    assert orch.respond(task_id, "approve").result(timeout=30).status == "accepted"


def test_respond_refuses_a_by_that_is_not_text(escalated):
    orch, task_id = escalated
    with pytest.raises(InvalidResponseError, match="by= as text"):
        orch.respond(task_id, "approve", by={"name": "x"})


def test_the_respond_error_is_a_usage_error_and_pickles():
    error = InvalidResponseError("the answer", {"a": 1})
    back = pickle.loads(pickle.dumps(error))
    assert isinstance(back, UsageError) and isinstance(back, TypeError) and str(back) == str(error)


def _raises(request: LLMRequest) -> str:
    raise ValueError("my script broke")


def _returns_none(request: LLMRequest) -> str:
    return None  # type: ignore[return-value]


@pytest.mark.parametrize(("fn", "said"), [(_raises, "'_raises' raised ValueError: my script broke"),
                                          (_returns_none, "'_returns_none' returned None")])
def test_a_broken_function_llm_fails_the_task_naming_the_users_function(tmp_path, fn, said):
    orch = Orchestrator(llm=FunctionLLM(fn), tools=[], config=RuntimeConfig(store_path=tmp_path / "t.db"),
                        runtime="inprocess")
    try:
        result = orch.run("what is 2 + 2?", timeout=30)
    finally:
        orch.shutdown()
    assert result.status == "failed" and result.stopped_reason == "llm_unavailable"
    assert said in result.error and "must return the reply text (str) or an LLMReply" in result.error
    assert "internal error" not in result.error and "report this bug" not in result.error


def test_an_async_function_llm_that_raises_is_reported_the_same_way():
    import asyncio

    async def broken(request):
        raise KeyError("role")

    request = LLMRequest(role="planner", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(FunctionLLMError, match="'.*broken' raised KeyError: 'role' \\(for the planner role\\)") as caught:
        asyncio.run(FunctionLLM(broken).complete(request))
    back = pickle.loads(pickle.dumps(caught.value))  # crosses a Ray actor's boundary intact
    assert type(back) is FunctionLLMError and back.role == "planner" and str(back) == str(caught.value)


def test_store_path_errors_name_the_path_the_user_gave():
    with pytest.raises(ConfigError, match=r"cannot use store_path /proc/t\.db: the file tools' workspace beside "
                                          r"it, /proc/workspace, cannot be created: the directory /proc does not let"):
        Orchestrator(llm=FunctionLLM(lambda r: "x"), config=RuntimeConfig(store_path="/proc/t.db"),
                     runtime="inprocess")
    with pytest.raises(StoreOpenError, match=r"cannot open the store /proc/t\.db: the directory /proc does not let"):
        Orchestrator(llm=FunctionLLM(lambda r: "x"), tools=[], config=RuntimeConfig(store_path="/proc/t.db"),
                     runtime="inprocess")
