"""The ReAct baselines with native function calling: tool specs from the registry's JSON Schemas in every request,
calls as ``reply.tool_calls``, results back as ``tool`` messages with their call ids, one call per turn (or several
with parallel=True), the JSON form as an explicit mode and as the "auto" fallback, typed model errors as stops."""

from __future__ import annotations

import asyncio

import pytest
from support import tools as T

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM, LLMRequest, LLMToolCallError, LLMToolsUnsupported, ToolCall
from agents.llm.function_llm import counted_reply
from agents.react import ReActAgent


def calls(request: LLMRequest, *pairs: tuple[str, dict], text: str = ""):
    turn = sum(m["role"] == "assistant" for m in request.messages)
    return counted_reply(request, text, model="f",
                         tool_calls=[ToolCall(f"call_{turn}_{i}", n, a) for i, (n, a) in enumerate(pairs)])


def run(llm, *, parallel=False, mode="native", config=None, task="Which is bigger, Paris or Rome?"):
    agent = ReActAgent(llm, T.ALL, config or RuntimeConfig(), parallel=parallel, tool_calling=mode)
    return agent, asyncio.run(agent.run(task))


def test_native_react_sends_tool_specs_and_returns_results_as_tool_messages():
    seen: list[LLMRequest] = []

    def fn(request):
        seen.append(request)
        script = [lambda: calls(request, ("lookup", {"city": "Paris"})),
                  lambda: calls(request, ("lookup", {"city": "Rome"})),
                  lambda: counted_reply(request, "Rome, with 2.8 million", model="f")]
        return script[len(seen) - 1]()

    agent, result = run(FunctionLLM(fn))
    assert result.status == "accepted" and result.answer == "Rome, with 2.8 million"
    assert [s.output for s in result.steps] == [2.1, 2.8] and agent.mode == "native"
    first = seen[0]
    assert first.tool_choice == "auto" and first.parallel_tool_calls is False
    names = [spec["function"]["name"] for spec in first.tools or []]
    assert "lookup" in names and "sleepy" in names
    lookup = next(s["function"] for s in first.tools or [] if s["function"]["name"] == "lookup")
    assert lookup["parameters"]["required"] == ["city"] and "Population" in lookup["description"]
    # the prompt carries no tool catalogue: the specs are the tools
    assert "lookup(" not in first.messages[0]["content"]
    assistant, tool_msg = seen[1].messages[-2:]
    assert assistant["tool_calls"][0] == {"id": "call_0_0", "type": "function",
                                          "function": {"name": "lookup", "arguments": '{"city": "Paris"}'}}
    assert "content" not in assistant  # no text beside the call: llama-cpp-python's server refuses null content
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_0_0"
    assert "2.1" in tool_msg["content"] and "untrusted" in tool_msg["content"].lower()
    # tool specs are input tokens of every call, the calls output tokens
    assert result.usage.total.llm_calls == 3
    bare = counted_reply(first.model_copy(update={"tools": None}), "", model="f").usage.input_tokens
    assert counted_reply(first, "", model="f").usage.input_tokens > bare + 50


def test_sequential_native_react_runs_only_the_first_of_several_calls():
    seen: list[LLMRequest] = []

    def fn(request):
        seen.append(request)
        if len(seen) == 1:
            return calls(request, ("lookup", {"city": "Paris"}), ("lookup", {"city": "Rome"}))
        return counted_reply(request, "done", model="f")

    _, result = run(FunctionLLM(fn))
    assert result.status == "accepted" and [s.tool_input for s in result.steps] == [{"city": "Paris"}]
    answered = [m for m in seen[1].messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answered] == ["call_0_0", "call_0_1"]  # every call id is answered
    assert "Not run" in answered[1]["content"]


def test_parallel_native_react_runs_a_turns_calls_concurrently():
    def fn(request):
        if any(m["role"] == "tool" for m in request.messages):
            return counted_reply(request, "ab", model="f")
        return calls(request, ("sleepy", {"seconds": 0.3, "label": "a"}), ("sleepy", {"seconds": 0.3, "label": "b"}))

    _, result = run(FunctionLLM(fn), parallel=True)
    assert result.status == "accepted" and result.usage.total.llm_calls == 2
    a, b = result.steps
    assert a.started_at < b.finished_at and b.started_at < a.finished_at, "the two calls did not overlap"


def test_auto_falls_back_to_the_json_form_when_the_server_rejects_tools():
    seen: list[LLMRequest] = []

    def fn(request):
        seen.append(request)
        if request.tools:
            raise LLMToolsUnsupported("no tools here")
        return '{"thought": "known", "action": null, "final_answer": "Rome"}'

    agent, result = run(FunctionLLM(fn), mode="auto")
    assert result.status == "accepted" and result.answer == "Rome" and agent.mode == "json"
    assert seen[0].tools and seen[1].tools is None and "lookup(" in seen[1].messages[0]["content"]


def test_native_mode_reports_a_server_without_tools_as_a_clear_failure():
    def fn(request):
        raise LLMToolsUnsupported("'m' does not accept native tool calls; use tool_calling=\"json\"")

    _, result = run(FunctionLLM(fn))
    assert result.status == "failed" and result.stopped_reason == "llm_unavailable"
    assert 'tool_calling="json"' in result.error


def test_unusable_tool_calls_end_the_run_as_invalid_output():
    def fn(request):
        raise LLMToolCallError("'m' wrote tool calls that cannot be used, even after one repair round")

    _, result = run(FunctionLLM(fn))
    assert result.status == "failed" and result.stopped_reason == "invalid_llm_output"


def test_a_reply_with_neither_calls_nor_text_fails():
    _, result = run(FunctionLLM(lambda r: counted_reply(r, "  ", model="f")))
    assert result.status == "failed" and result.stopped_reason == "invalid_llm_output"


def test_repeated_native_calls_are_a_loop():
    _, result = run(FunctionLLM(lambda r: calls(r, ("lookup", {"city": "Paris"}))),
                    config=RuntimeConfig(loop_window=3))
    assert result.status == "failed" and result.stopped_reason == "loop_detected" and len(result.steps) == 3


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="tool_calling"):
        ReActAgent(FunctionLLM(lambda r: "x"), T.ALL, tool_calling="xml")  # type: ignore[arg-type]


def test_a_call_repeated_within_one_reply_runs_once_and_is_answered_once():
    seen: list[LLMRequest] = []

    def fn(request):
        seen.append(request)
        if len(seen) == 1:  # a small model stuck repeating one call until its context is full
            return calls(request, *[("lookup", {"city": "Paris"})] * 50)
        return counted_reply(request, "2.1", model="f")

    _, result = run(FunctionLLM(fn))
    assert result.status == "accepted" and [s.tool_input for s in result.steps] == [{"city": "Paris"}]
    assert len([m for m in seen[1].messages if m["role"] == "tool"]) == 1
    assert len(next(m for m in seen[1].messages if m["role"] == "assistant")["tool_calls"]) == 1
