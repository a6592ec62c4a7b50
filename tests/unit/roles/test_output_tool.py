"""The typed reviewer's final tool (``agents.roles.output_tool``): its parameters are the output's schema (strict
where OpenAI's strict mode can hold it, a non-object wrapped), its arguments' pieces become the answer's JSON text
as they stream (adding up to the final answer at any cut), and a reply comes back in the terse form the roles read."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pydantic
import pytest
from typing_extensions import TypedDict

from agents.llm import FunctionLLM, LLMReply, LLMRequest, OpenAIChat, ToolCall
from agents.llm._openai_stream import ToolArgumentsDelta
from agents.llm.fake_server import FakeOpenAIServer, FakeReply, FakeToolCall, Fault
from agents.outputs import output_spec, schema_line
from agents.roles.output_tool import (
    FINAL_RESULT,
    OutputToolLLM,
    _joined,
    _Unwrap,
    answer_text,
    offers_tools,
    output_tool,
    strict_parameters,
    tool_line,
)


class Leg(pydantic.BaseModel):
    city: str
    millions: float


class Trip(pydantic.BaseModel):
    legs: list[Leg]
    note: str | None


class Loose(pydantic.BaseModel):
    city: str
    millions: float = 0.0


class Named(TypedDict):
    name: str


def spec(tp: Any):
    return output_spec(tp, importable=False)


def test_a_nested_model_is_sent_strict_with_every_object_closed() -> None:
    tool, wrapped = output_tool(spec(Trip))
    params = tool["function"]["parameters"]
    assert not wrapped and tool["function"]["strict"] is True and tool["function"]["name"] == FINAL_RESULT
    assert params["additionalProperties"] is False and params["$defs"]["Leg"]["additionalProperties"] is False


@pytest.mark.parametrize("tp", [Loose, dict[str, float]], ids=["optional field", "free dict"])
def test_a_schema_strict_mode_cannot_hold_is_sent_non_strict_as_it_is(tp) -> None:
    tool, wrapped = output_tool(spec(tp))
    assert tool["function"]["strict"] is False and not wrapped
    assert tool["function"]["parameters"] == spec(tp).json_schema


def test_a_field_named_like_a_keyword_is_not_mistaken_for_one() -> None:
    schema = {"type": "object", "properties": {"default": {"type": "string"}, "format": {"type": "string"}},
              "required": ["default", "format"]}
    assert strict_parameters(schema) is not None


@pytest.mark.parametrize(("tp", "value"), [(int, 3), (list[Leg], [{"city": "Rome", "millions": 2.8}]),
                                          (Leg | None, None), (str, "Rome {x}")])
def test_a_non_object_is_wrapped_and_its_refs_resolve_at_the_root(tp, value) -> None:
    tool, wrapped = output_tool(spec(tp))
    params = tool["function"]["parameters"]
    assert wrapped and params["required"] == ["response"] and "$defs" not in params["properties"]["response"]
    if "Leg" in json.dumps(spec(tp).json_schema):
        assert "Leg" in params["$defs"]
    raw = json.dumps({"response": value})
    assert json.loads(answer_text(raw, json.loads(raw), True)) == value


def _streamed(raw: str, wrapped: bool, size: int) -> str:
    unwrap = _Unwrap(wrapped)
    return "".join(unwrap.feed(raw[i:i + size]) for i in range(0, len(raw), size))


@pytest.mark.parametrize("raw", ['{"response": [1, {"a": {"b": 2}}]}', ' { "response" :\n"x}}" } ',
                                 '{"response": {"a": 1}}', '{"response":3}'])
def test_the_unwrapped_pieces_never_take_back_what_they_sent(raw) -> None:
    final = answer_text(raw, json.loads(raw), True)
    for size in range(1, len(raw) + 1):
        sent = _streamed(raw, True, size)
        assert final.startswith(sent) and len(final) - len(sent) <= 1, (size, sent, final)


def test_an_object_s_arguments_stream_as_they_are() -> None:
    raw = ' {"city": "Rome", "millions": 2.8}'
    assert _streamed(raw, False, 3) == answer_text(raw, json.loads(raw), False) == raw.strip()


def test_arguments_that_do_not_read_as_sent_are_written_again() -> None:
    assert answer_text("not json", {"response": [1]}, True) == "[1]"
    assert answer_text('{"a": 1}', {"a": 2}, False) == '{"a": 2}'


def test_the_tool_s_answer_replaces_an_answer_line_the_model_wrote_too() -> None:
    assert _joined("accept 5 5 5", "3") == "accept 5 5 5\nanswer: 3"
    assert _joined("accept 5 5 5\nanswer: three\n", "3") == "accept 5 5 5\nanswer: 3"
    assert _joined("", "3") == "answer: 3"  # no verdict: the parser sends it to the repair round


def test_only_a_backend_that_declares_tools_gets_them() -> None:
    assert not offers_tools(FunctionLLM(lambda r: ""))
    chat = OpenAIChat("m", base_url="http://127.0.0.1:9/v1")
    assert offers_tools(chat) and chat.tools_supported is None
    chat._tools_supported = False
    assert not offers_tools(chat)


REVIEW = [{"role": "system", "content": "You review."}, {"role": "user", "content": f"steps\n{tool_line(False)}"}]


def test_complete_turns_the_call_into_the_terse_reply_and_falls_back_once_rejected() -> None:
    with FakeOpenAIServer(lambda body: FakeReply("accept 5 5 5", [FakeToolCall(FINAL_RESULT, {"city": "Rome",
                                                                                               "millions": 2.8})])
                          if body.get("tools") else "accept 5 5 5\nanswer: {}") as server:
        chat = OpenAIChat("m", base_url=server.base_url, api_key="k", max_retries=0)
        llm = OutputToolLLM(chat, spec(Leg))
        reply = asyncio.run(llm.complete(LLMRequest(role="reflector", messages=REVIEW)))
        assert reply.text == 'accept 5 5 5\nanswer: {"city": "Rome", "millions": 2.8}' and reply.tool_calls == []
        server.inject(Fault.reject_tools())
        chat = OpenAIChat("m", base_url=server.base_url, api_key="k", max_retries=0)
        llm = OutputToolLLM(chat, spec(Leg))
        for _ in range(2):
            assert asyncio.run(llm.complete(LLMRequest(role="reflector", messages=REVIEW))).text.endswith("{}")
        bodies = server.requests[1:]
        assert [bool(b.get("tools")) for b in bodies] == [True, False, False]  # rejected once, then remembered
        assert bodies[1]["messages"][-1]["content"] == f"steps\n{schema_line(spec(Leg))}"


def test_an_untagged_stream_yields_text_only_and_a_tagged_one_the_arguments_too() -> None:
    reply = FakeReply("ok", [FakeToolCall("f", {"a": 1})])
    with FakeOpenAIServer(lambda body: reply, stream_chunk_chars=3) as server:
        chat = OpenAIChat("m", base_url=server.base_url, api_key="k", max_retries=0)
        tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]

        async def items(metadata: dict[str, str]) -> list[Any]:
            request = LLMRequest(role="reflector", messages=REVIEW, tools=tools, metadata=metadata)
            return [item async for item in chat.stream(request)]

        plain = asyncio.run(items({}))
        assert plain[:-1] == ["ok"] and plain[-1].tool_calls == [ToolCall("call_fake_0", "f", {"a": 1})]
        tagged = asyncio.run(items({"stream_tool_arguments": "yes"}))
        pieces = [i for i in tagged if isinstance(i, ToolArgumentsDelta)]
        assert "".join(pieces) == '{"a": 1}' and {(p.index, p.name) for p in pieces} == {(0, "f")}
        assert isinstance(tagged[-1], LLMReply)
