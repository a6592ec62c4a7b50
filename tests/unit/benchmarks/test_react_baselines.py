"""The ReAct baselines' loops in the JSON-in-text form: one call per turn vs several, observations fenced as
untrusted, loop detection, turn cap, invalid output, tool errors as observations, the same usage records as
TaskResult. The native function-calling form: tests/unit/benchmarks/test_react_native.py."""

from __future__ import annotations

import asyncio
import json

from support import tools as T

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM, ScriptedLLM
from agents.react import ReActAgent


def act(tool: str, **args) -> str:
    return json.dumps({"thought": "next", "action": {"tool_name": tool, "tool_input": args}, "final_answer": None})


def acts(*calls: tuple[str, dict]) -> str:
    return json.dumps({"thought": "all at once", "final_answer": None,
                       "actions": [{"tool_name": t, "tool_input": a} for t, a in calls]})


def final(answer: str, parallel: bool = False) -> str:
    body = {"thought": "done", "final_answer": answer}
    body.update({"actions": []} if parallel else {"action": None})
    return json.dumps(body)


def run(llm, parallel=False, config=None, task="Which is bigger, Paris or Rome?"):
    return asyncio.run(ReActAgent(llm, T.ALL, config or RuntimeConfig(), parallel=parallel,
                                  tool_calling="json").run(task))


def test_sequential_react_one_tool_call_per_turn():
    seen: list[list[dict]] = []

    def fn(request):
        seen.append(list(request.messages))
        return [act("lookup", city="Paris"), act("lookup", city="Rome"), final("Rome")][len(seen) - 1]

    result = run(FunctionLLM(fn))
    assert result.status == "accepted" and result.answer == "Rome"
    assert [s.output for s in result.steps] == [2.1, 2.8]
    assert result.usage.total.llm_calls == 3 and result.usage.by_role["react"].llm_calls == 3
    assert result.usage.total.input_tokens > 0 and result.timings.first_dispatch_s is not None
    # Each turn re-reads the whole history: that is ReAct's token cost the benchmark measures.
    assert len(seen[2]) == len(seen[0]) + 4
    observation = seen[1][-1]["content"]
    assert "2.1" in observation and "untrusted" in observation.lower()


def test_parallel_react_runs_a_turns_calls_concurrently():
    llm = ScriptedLLM({"react": [acts(("sleepy", {"seconds": 0.3, "label": "a"}),
                                      ("sleepy", {"seconds": 0.3, "label": "b"})), final("ab", parallel=True)]})
    result = run(llm, parallel=True)
    assert result.status == "accepted" and result.usage.total.llm_calls == 2
    a, b = result.steps
    assert a.started_at < b.finished_at and b.started_at < a.finished_at, "the two calls did not overlap"


def test_repeating_the_same_call_is_a_loop():
    result = run(FunctionLLM(lambda r: act("lookup", city="Paris")), config=RuntimeConfig(loop_window=3))
    assert result.status == "failed" and result.stopped_reason == "loop_detected"
    assert "lookup" in result.error and len(result.steps) == 3


def test_turn_cap_ends_the_run():
    calls = iter(range(1000))
    llm = FunctionLLM(lambda r: act("lookup", city=["Paris", "Rome", "Berlin"][next(calls) % 3]))
    result = asyncio.run(ReActAgent(llm, T.ALL, RuntimeConfig(loop_window=100), max_turns=5,
                                    tool_calling="json").run("t"))
    assert result.status == "failed" and result.stopped_reason == "max_steps" and "5 turns" in result.error


def test_invalid_output_gets_one_repair_then_fails():
    result = run(ScriptedLLM({"react": ["not json", "still not json"]}))
    assert result.status == "failed" and result.stopped_reason == "invalid_llm_output"
    assert result.usage.total.llm_calls == 2


def test_a_tool_error_is_an_observation_not_a_crash():
    seen: list[str] = []

    def fn(request):
        seen.append(request.messages[-1]["content"])
        return act("lookup", city="Atlantis") if len(seen) == 1 else final("unknown city")

    result = run(FunctionLLM(fn))
    assert result.status == "accepted" and result.steps[0].status == "failed"
    assert "Error from lookup" in seen[1] and "atlantis" in seen[1].lower()


def test_token_budget_applies_to_react_too():
    result = run(FunctionLLM(lambda r: act("lookup", city="Paris")), config=RuntimeConfig(token_budget=50))
    assert result.status == "failed" and result.stopped_reason == "token_budget"


def test_react_stops_at_max_cost_usd_before_the_call_that_would_pass_it():
    from agents.llm._tool_calls import request_tokens

    prompts: list[int] = []
    cities = ["Paris", "Rome", "Berlin"] * 50

    def fn(request):
        prompts.append(request_tokens(request))
        return act("lookup", city=cities[len(prompts) - 1])  # never answers; no call repeats 3 times in a row

    cap = 0.004  # $1 per million prompt tokens, free output: a few calls' prompts
    result = run(FunctionLLM(fn, model="m"), config=RuntimeConfig(prices={"m": [1.0, 0.0]}, max_cost_usd=cap,
                                                                  loop_window=1000))
    assert (result.status, result.stopped_reason) == ("failed", "max_cost_usd")
    assert result.error.startswith("ReAct: the react's next model call (m, ")
    assert sum(prompts) <= cap * 1e6 and abs(result.usage.cost_usd - sum(prompts) / 1e6) < 1e-12
    assert result.usage.cost_by_role == {"react": result.usage.cost_usd}
