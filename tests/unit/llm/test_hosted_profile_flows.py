"""A hosted model's tasks run only general mechanisms (issue 61): over a suite of flows through the public API —
``OpenAIChat`` against a local OpenAI-compatible server, the user's own tools, the in-process runtime — not one
call goes into small-model strategy code (``support.strategy_trace``), and a right plan costs exactly one router,
one planner and one reviewer call. The same flows on Ray: tests/integration/test_hosted_profile_ray.py.

Each flow is one that WOULD run a strategy under the small-model profile (a question back, a repeated read call, a
copied example, an argument error, an answer without the final figure, a replan): on the hosted profile the model's
word stands and the general mechanisms (the policy, the one repair round, the sound vetoes) handle it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from support.hosted_flows import FLOWS, TASK, Flow, Model
from support.strategy_trace import StrategyTrace
from support.tools import lookup, subtract

from agents import Orchestrator, RuntimeConfig
from agents.llm import HOSTED, OpenAIChat
from agents.llm.fake_server import FakeOpenAIServer

@pytest.fixture
def orchestrator_for(tmp_path) -> Iterator[Callable[[Model], Orchestrator]]:
    opened: list[tuple[FakeOpenAIServer, Orchestrator]] = []

    def make(model: Model) -> Orchestrator:
        server = FakeOpenAIServer(responder=model, stream_chunk_chars=32).start()
        llm = OpenAIChat("hosted-model", base_url=server.base_url, api_key="sk-fake", max_retries=0)
        assert llm.profile is HOSTED
        orch = Orchestrator(llm=llm, tools=[lookup, subtract], runtime="inprocess",
                            config=RuntimeConfig(store_path=tmp_path / f"{len(opened)}.db", task_timeout_s=60))
        opened.append((server, orch))
        return orch

    yield make
    for server, orch in opened:
        orch.shutdown()
        server.stop()


@pytest.mark.parametrize("flow", FLOWS, ids=lambda f: f.name)
def test_a_hosted_task_runs_no_small_model_strategy(flow: Flow, orchestrator_for) -> None:
    model = Model(flow)
    with StrategyTrace() as trace:
        orch = orchestrator_for(model)
        result = orch.run(TASK, timeout=60)
    assert trace.calls == [], f"strategy code ran on the hosted profile: {sorted(set(trace.calls))}"
    assert result.status == flow.status, (result.status, result.error, result.answer)
    assert {role: n for role, n in model.calls.items() if role not in flow.maybe} == flow.calls
    assert flow.answer_has in (result.answer or result.question or "")


def test_the_trace_sees_strategy_code_when_a_profile_runs_it() -> None:
    """The check above could pass by seeing nothing: a strategy's code, called, is recorded."""
    from planning.loops import repeated_call
    from planning.models import PlanStep

    step = PlanStep(step_id=3, description="", tool_name="lookup", tool_input={"city": "Rome"}, depends_on=[])
    with StrategyTrace() as trace:
        repeated_call(step, [step.model_copy(update={"step_id": 1}), step.model_copy(update={"step_id": 2})])
    assert any("repeated_call" in call for call in trace.calls)


def test_the_same_flow_runs_strategies_when_the_profile_turns_them_on(tmp_path) -> None:
    """The gate is the profile: the hosted prompts with every strategy on cut the repeated read call."""
    from agents.llm import Strategy

    flow = next(f for f in FLOWS if f.name == "repeated read call")
    model = Model(flow)
    with FakeOpenAIServer(responder=model, stream_chunk_chars=32) as server, StrategyTrace() as trace:
        llm = OpenAIChat("hosted-model", base_url=server.base_url, api_key="sk-fake", max_retries=0,
                         profile=HOSTED.model_copy(update={"strategies": frozenset(Strategy)}))
        orch = Orchestrator(llm=llm, tools=[lookup, subtract], runtime="inprocess",
                            config=RuntimeConfig(store_path=tmp_path / "t.db", task_timeout_s=60))
        try:
            result = orch.run(TASK, timeout=60)
        finally:
            orch.shutdown()
    assert any("repeated_call" in call for call in trace.calls), trace.calls
    assert [s.step_id for s in result.steps] == [1, 2]  # the third copy was cut
