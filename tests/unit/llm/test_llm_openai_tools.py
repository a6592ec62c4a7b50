"""OpenAIChat with native function calling against FakeOpenAIServer on 127.0.0.1 (real HTTP, the real openai SDK):
tools sent as given, single and parallel calls parsed, streamed calls joined, malformed arguments repaired once
then a typed error, a server without tools a typed error (remembered), Qwen/Hermes ``<tool_call>`` blocks read."""

from __future__ import annotations

import asyncio
import json
import pickle

import pytest

from agents.llm import LLMReply, LLMRequest, LLMToolCallError, LLMToolsUnsupported, OpenAIChat, ToolCall
from agents.llm._tool_calls import RawToolCall, calls_in_text
from agents.llm.fake_server import FakeOpenAIServer, FakeReply, FakeToolCall, Fault

TOOLS = [{"type": "function", "function": {
    "name": "lookup", "description": "Population of a city in millions.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
ASK = [{"role": "system", "content": "You answer with tools."}, {"role": "user", "content": "Paris or Rome?"}]


def answered(body: dict) -> bool:
    return any(m.get("role") == "tool" for m in body["messages"])


def two_lookups(body: dict) -> FakeReply:
    repairing = any(m.get("role") == "tool" and m["content"].startswith("Error") for m in body["messages"])
    if answered(body) and not repairing:
        return FakeReply("Rome")
    return FakeReply(None, [FakeToolCall("lookup", {"city": "Paris"}, id="call_a"),
                            FakeToolCall("lookup", {"city": "Rome"}, id="call_b")])


@pytest.fixture
def server():
    with FakeOpenAIServer(two_lookups, stream_chunk_chars=3) as srv:
        yield srv


def chat(server: FakeOpenAIServer) -> OpenAIChat:
    return OpenAIChat("fake-model", base_url=server.base_url, api_key="k", max_retries=0, timeout_s=5.0)


def request(**kw) -> LLMRequest:
    return LLMRequest(role="react", messages=ASK, tools=TOOLS, tool_choice="auto", **kw)


async def streamed(llm: OpenAIChat, req: LLMRequest) -> LLMReply:
    items = [item async for item in llm.stream(req)]
    assert sum(isinstance(i, LLMReply) for i in items) == 1 and isinstance(items[-1], LLMReply)
    return items[-1]


PARIS_ROME = [ToolCall("call_a", "lookup", {"city": "Paris"}), ToolCall("call_b", "lookup", {"city": "Rome"})]


def test_tools_are_sent_and_parallel_calls_parsed(server):
    reply = asyncio.run(chat(server).complete(request(parallel_tool_calls=True)))
    assert reply.tool_calls == PARIS_ROME and reply.text == "" and reply.usage.llm_calls == 1
    body = server.requests[0]
    assert body["tools"] == TOOLS and body["tool_choice"] == "auto" and body["parallel_tool_calls"] is True


def test_a_request_without_tools_sends_none(server):
    server.responder = lambda body: "plain"
    reply = asyncio.run(chat(server).complete(LLMRequest(role="react", messages=ASK)))
    assert reply.text == "plain" and reply.tool_calls == []
    assert "tools" not in server.requests[0] and "tool_choice" not in server.requests[0]


def test_a_single_call_and_then_the_answer_after_tool_messages(server):
    server.responder = lambda body: (FakeReply("Rome") if answered(body)
                                     else FakeReply("", [FakeToolCall("lookup", {"city": "Rome"})]))
    llm = chat(server)
    first = asyncio.run(llm.complete(request()))
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("lookup", {"city": "Rome"})]
    follow = [*ASK, {"role": "assistant", "content": None, "tool_calls": [c.to_message() for c in first.tool_calls]},
              {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "2.8"}]
    second = asyncio.run(llm.complete(request().model_copy(update={"messages": follow})))
    assert second.text == "Rome" and second.tool_calls == []
    sent = server.requests[1]["messages"]
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_fake_0", "content": "2.8"}


def test_streamed_calls_are_joined_from_their_deltas(server):
    reply = asyncio.run(streamed(chat(server), request(stream=True)))
    assert reply.tool_calls == PARIS_ROME
    assert reply.usage.output_tokens > 0


def test_malformed_arguments_get_one_repair_round(server):
    server.inject(Fault.malformed_tool_arguments())
    reply = asyncio.run(chat(server).complete(request()))
    assert reply.tool_calls == PARIS_ROME and reply.usage.llm_calls == 2
    repair = server.requests[1]["messages"]
    assert repair[-3]["role"] == "assistant" and len(repair[-3]["tool_calls"]) == 2
    errors = [m for m in repair if m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in errors] == ["call_a", "call_b"]
    assert "not valid JSON" in errors[0]["content"]


def test_malformed_twice_is_a_clear_typed_error_streamed_or_not(server):
    server.inject(Fault.malformed_tool_arguments(times=4))
    for run in (lambda llm: llm.complete(request()), lambda llm: streamed(llm, request(stream=True))):
        with pytest.raises(LLMToolCallError, match="even after one repair round") as info:
            asyncio.run(run(chat(server)))
        assert "call_a (lookup)" in str(info.value)
        again = pickle.loads(pickle.dumps(info.value))
        assert type(again) is LLMToolCallError and str(again) == str(info.value)
    assert len(server.requests) == 4


def test_a_server_without_tools_is_a_typed_error_and_is_remembered(server):
    server.inject(Fault.reject_tools())
    llm = chat(server)
    with pytest.raises(LLMToolsUnsupported, match='tool_calling="json"') as info:
        asyncio.run(llm.complete(request()))
    assert "tools are not supported" in str(info.value)
    with pytest.raises(LLMToolsUnsupported):
        asyncio.run(llm.complete(request()))
    assert len(server.requests) == 1, "the second request should fail without a round trip"
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is LLMToolsUnsupported and str(again) == str(info.value)
    # text requests still work
    server.responder = lambda body: "fine"
    assert asyncio.run(llm.complete(LLMRequest(role="react", messages=ASK))).text == "fine"


def test_tool_call_blocks_in_the_text_are_read_as_calls(server):
    """How Qwen2.5's chat template answers through a server that does not parse calls (llama-cpp-python)."""
    server.responder = lambda body: ('I will look both up.\n<tool_call>\n{"name": "lookup", "arguments": '
                                     '{"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "lookup", '
                                     '"arguments": {"city": "Rome"}}\n</tool_call>')
    for reply in (asyncio.run(chat(server).complete(request())),
                  asyncio.run(streamed(chat(server), request(stream=True)))):
        assert [(c.name, c.arguments) for c in reply.tool_calls] == [("lookup", {"city": "Paris"}),
                                                                      ("lookup", {"city": "Rome"})]
        assert reply.text == "I will look both up."
    # without tools in the request, the same text is just text
    plain = asyncio.run(chat(server).complete(LLMRequest(role="react", messages=ASK)))
    assert "<tool_call>" in plain.text and plain.tool_calls == []


@pytest.mark.parametrize(("text", "expected"), [
    ('<tool_call>{"name": "f", "arguments": "{\\"x\\": 1}"}</tool_call>', {"x": 1}),    # encoded twice
    ('<tool_call>\n```json\n{"name": "f", "arguments": {"x": 2}}\n```\n</tool_call>', {"x": 2}),
    ('<tool_call>{"name": "f", "arguments": {"x": 3}}', {"x": 3}),                   # left open at the end
])
def test_tool_call_block_variants(text, expected):
    _, raw = calls_in_text(text)
    assert raw[0].parse().arguments == expected


def test_a_broken_block_keeps_its_name_for_the_repair_message():
    _, raw = calls_in_text('<tool_call>{"name": "lookup", "arguments": {"city": </tool_call>')
    assert raw[0].name == "lookup"
    with pytest.raises(ValueError, match="not valid JSON"):
        raw[0].parse()
    assert RawToolCall("c", "", "{}").to_message()["function"] == {"name": "", "arguments": "{}"}
    assert json.loads(ToolCall("c", "f", {"a": [1]}).to_message()["function"]["arguments"]) == {"a": [1]}


def test_recorded_tool_calls_replay_as_they_were():
    from agents.llm import FunctionLLM, LLMCallRecord, RecordingLLM, ReplayLLM
    from agents.llm.function_llm import counted_reply

    records: list[LLMCallRecord] = []
    llm = RecordingLLM(FunctionLLM(lambda r: counted_reply(r, "", model="f", tool_calls=PARIS_ROME)), records.append)
    first = asyncio.run(llm.complete(request()))
    dumped = [r.model_dump(mode="json") for r in records]  # as the event log stores them
    replayed = asyncio.run(ReplayLLM(dumped).complete(request()))
    assert replayed.tool_calls == first.tool_calls == PARIS_ROME


@pytest.mark.parametrize("text", [
    '```json\n{\n  "name": "lookup",\n  "arguments": {\n    "city": "Rome"\n  }\n}\n```',   # fenced, no tags
    '<untrusted-data>\n{"name": "lookup", "arguments": {"city": "Rome"}}\n</untrusted-data>',  # a stray tag
    '[{"name": "lookup", "arguments": {"city": "Rome"}}]',
    '{{"name": "lookup", "arguments": {"city": "Rome"}}}',                                   # braces doubled
    '<tools></tools>\n{{"name": "lookup", "arguments": {"city": "Rome"}}}\n<untrusted-data>\n{"results": ',
])
def test_a_reply_that_is_only_a_calls_json_is_read_as_the_call(server, text):
    """How the embedded 1.5B model answers through llama-cpp-python's server (measured: docs/function-calling.md)."""
    server.responder = lambda body: text
    reply = asyncio.run(chat(server).complete(request()))
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("lookup", {"city": "Rome"})] and reply.text == ""


@pytest.mark.parametrize("text", [
    '{"name": "weather", "arguments": {"city": "Rome"}}',        # a tool the request did not offer
    '{"name": "lookup", "arguments": {"city": "Rome"}, "note": "x"}',  # more than a call
    'Rome is bigger: {"name": "lookup"}',                           # prose around it
])
def test_json_that_is_not_a_bare_call_of_an_offered_tool_stays_text(text):
    assert calls_in_text(text, offered={"lookup"}) == (text, [])


def test_several_bare_calls_in_a_row_are_all_read():
    text = '<tools></tools>\n{{"name": "f", "arguments": {"x": 1}}}\n{{"name": "f", "arguments": {"x": 2}}}\nthen'
    rest, raw = calls_in_text(text, offered={"f"})
    assert rest == "" and [c.parse().arguments for c in raw] == [{"x": 1}, {"x": 2}]
    assert [c.id for c in raw] == ["call_0", "call_1"]
