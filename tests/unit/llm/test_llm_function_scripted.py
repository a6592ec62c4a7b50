"""FunctionLLM and ScriptedLLM: costed replies, chunked streams, errors that propagate, no wrap-around."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

import agents.llm.function_llm as function_llm_module
from agents.llm import (
    LLM,
    FunctionLLM,
    LLMReply,
    LLMRequest,
    LLMScriptExhausted,
    LLMTimeoutError,
    ScriptedLLM,
    Usage,
)
from agents.llm.function_llm import chunk_text
from prompts import count_message_tokens, count_tokens

MESSAGES = [{"role": "system", "content": "You plan."},
            {"role": "user", "content": "Compare Paris and Rome."}]
PLAN = '{"steps": [{"step_id": 1, "description": "look up", "tool_name": "lookup", "tool_input": {}}]}'


def request(role: str = "planner", messages=MESSAGES) -> LLMRequest:
    return LLMRequest(role=role, messages=messages)


async def drain(llm, req: LLMRequest) -> list[str | LLMReply]:
    return [item async for item in llm.stream(req)]


class FakeSleep:
    """Records requested sleeps instead of sleeping (injected, so tests do not wait)."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


# ---------------------------------------------------------------------------------------------- FunctionLLM
def test_a_text_reply_costs_one_call_with_exact_tiktoken_counts():
    llm = FunctionLLM(lambda r: PLAN)
    assert isinstance(llm, LLM)
    reply = asyncio.run(llm.complete(request()))
    assert reply.text == PLAN and reply.model == "function"
    assert reply.usage == Usage(llm_calls=1, input_tokens=count_message_tokens(MESSAGES),
                                output_tokens=count_tokens(PLAN))


def test_an_llm_reply_is_returned_as_given_and_async_functions_work():
    given = LLMReply(text="x", usage=Usage(llm_calls=1, input_tokens=7, output_tokens=9), model="custom")

    async def fn(req: LLMRequest) -> LLMReply:
        await asyncio.sleep(0)
        return given

    assert asyncio.run(FunctionLLM(fn).complete(request())) is given


def test_the_function_sees_the_request_and_can_branch_on_the_role():
    seen: list[LLMRequest] = []

    def fn(req: LLMRequest) -> str:
        seen.append(req)
        return {"router": "R", "planner": "P"}[req.role]

    llm = FunctionLLM(fn)
    assert [asyncio.run(llm.complete(request(role))).text for role in ("router", "planner")] == ["R", "P"]
    assert [r.role for r in seen] == ["router", "planner"] and seen[0].messages == MESSAGES


@pytest.mark.parametrize("size,expected", [(None, [PLAN]), (16, chunk_text(PLAN, 16)), (1, list(PLAN))])
def test_stream_cuts_the_text_into_chunks_then_yields_one_reply(size, expected):
    items = asyncio.run(drain(FunctionLLM(lambda r: PLAN, stream_chunk_size=size), request()))
    assert items[:-1] == expected and "".join(items[:-1]) == PLAN
    final = items[-1]
    assert isinstance(final, LLMReply) and final.text == PLAN and final.usage.llm_calls == 1


def test_chunk_delay_uses_the_injected_sleep():
    sleep = FakeSleep()
    items = asyncio.run(drain(FunctionLLM(lambda r: "abcdef", stream_chunk_size=2, chunk_delay_s=0.02,
                                          sleep=sleep), request()))
    assert items[:-1] == ["ab", "cd", "ef"] and sleep.calls == [0.02, 0.02, 0.02]


def test_chunk_text_edge_cases():
    assert chunk_text("", 3) == [] and chunk_text("abc", None) == ["abc"] and chunk_text("abc", 5) == ["abc"]


def test_exceptions_from_the_function_propagate_unchanged():
    boom = LLMTimeoutError("injected")

    def fn(req: LLMRequest) -> str:
        raise boom

    llm = FunctionLLM(fn)
    with pytest.raises(LLMTimeoutError) as caught:
        asyncio.run(llm.complete(request()))
    assert caught.value is boom
    with pytest.raises(LLMTimeoutError):
        asyncio.run(drain(llm, request()))


def test_a_reply_of_the_wrong_type_says_what_to_return():
    with pytest.raises(TypeError, match=r"returned a dict .* must return the reply text \(str\) or an LLMReply"):
        asyncio.run(FunctionLLM(lambda r: {"route": "plan"}).complete(request()))


@pytest.mark.parametrize("kwargs,message", [({"stream_chunk_size": 0}, "stream_chunk_size"),
                                            ({"chunk_delay_s": -1}, "chunk_delay_s")])
def test_bad_stream_settings_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FunctionLLM(lambda r: "", **kwargs)


def test_a_function_llm_holding_a_lambda_survives_cloudpickle():
    from ray import cloudpickle  # as Ray ships it to actors; ray is only imported here, by the test

    suffix = "!"
    llm = FunctionLLM(lambda r: r.role + suffix, stream_chunk_size=3)
    clone = cloudpickle.loads(cloudpickle.dumps(llm))
    assert asyncio.run(clone.complete(request("router"))).text == "router!"
    assert asyncio.run(drain(clone, request("router")))[:-1] == ["rou", "ter", "!"]


def test_the_module_does_not_import_ray():
    tree = ast.parse(Path(function_llm_module.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert "ray" not in imported


# ---------------------------------------------------------------------------------------------- ScriptedLLM
def test_each_role_pops_its_own_replies_in_order_and_calls_are_kept():
    llm = ScriptedLLM({"router": ["r1"], "planner": ["p1", "p2"]})
    texts = [asyncio.run(llm.complete(request(role))).text for role in ("planner", "router", "planner")]
    assert texts == ["p1", "r1", "p2"]
    assert [c.role for c in llm.calls] == ["planner", "router", "planner"]
    llm.assert_complete()


def test_running_out_raises_and_never_wraps_around():
    llm = ScriptedLLM({"planner": ["only"]})
    asyncio.run(llm.complete(request()))
    exhausted = r"no reply left for role 'planner': the script held 1"
    with pytest.raises(LLMScriptExhausted, match=exhausted) as caught:
        asyncio.run(llm.complete(request()))
    assert "call 2" in str(caught.value)
    with pytest.raises(LLMScriptExhausted, match=r"role 'router': the script held 0"):
        asyncio.run(llm.complete(request("router")))


def test_assert_complete_lists_what_was_never_asked_for():
    llm = ScriptedLLM({"router": ["r1"], "planner": [PLAN, "second"], "reflector": []})
    asyncio.run(llm.complete(request("router")))
    with pytest.raises(AssertionError) as caught:
        llm.assert_complete()
    assert "planner: 2 left" in str(caught.value) and "router" not in str(caught.value)
    assert llm.remaining() == {"planner": 2}


def test_scripted_exceptions_are_raised_and_replies_pass_through():
    given = LLMReply(text="fixed", usage=Usage(llm_calls=1, input_tokens=1, output_tokens=1))
    llm = ScriptedLLM({"executor": [LLMTimeoutError("slow"), given]})
    with pytest.raises(LLMTimeoutError, match="slow"):
        asyncio.run(llm.complete(request("executor")))
    assert asyncio.run(llm.complete(request("executor"))) is given
    llm.assert_complete()


def test_scripted_streams_and_costs_like_function_llm():
    scripted = ScriptedLLM({"planner": [PLAN]}, stream_chunk_size=10)
    function = FunctionLLM(lambda r: PLAN, stream_chunk_size=10)
    got, expected = asyncio.run(drain(scripted, request())), asyncio.run(drain(function, request()))
    assert got[:-1] == expected[:-1]
    assert got[-1].usage == expected[-1].usage and got[-1].text == PLAN


def test_a_bare_string_script_is_a_typo_caught_up_front():
    with pytest.raises(TypeError, match=r"\{'router': \[reply\]\}"):
        ScriptedLLM({"router": '{"route": "plan"}'})  # type: ignore[dict-item]
