"""OpenAIChat against FakeOpenAIServer: real HTTP through the real openai SDK, faults injected server-side."""

from __future__ import annotations

import asyncio
import pickle
import time
import traceback

import pytest

from agents.llm import (
    LLM,
    LLMConnectionError,
    LLMRateLimitError,
    LLMReply,
    LLMRequest,
    LLMResponseError,
    LLMServerError,
    LLMStreamTruncated,
    LLMTimeoutError,
    ModelProfile,
    OpenAIChat,
)
from agents.llm._openai_support import JSON_INSTRUCTION
from agents.llm.fake_server import WRONG_SHAPE_JSON, FakeOpenAIServer, Fault, word_usage
from prompts import count_message_tokens, count_tokens

KEY = "sk-test-Very-Secret-Key-123"
HELLO = [{"role": "system", "content": "You are the router."},
         {"role": "user", "content": "hello there big world"}]
SCHEMA = {"type": "object", "properties": {"route": {"type": "string"}}, "required": ["route"]}


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def chat(server: FakeOpenAIServer, **kw) -> OpenAIChat:
    kw.setdefault("max_retries", 2)
    kw.setdefault("timeout_s", 5.0)
    return OpenAIChat("fake-model", base_url=server.base_url, api_key=KEY, **kw)


def text_request(messages=HELLO, **kw) -> LLMRequest:
    return LLMRequest(role="router", messages=messages, **kw)


def json_request(schema=SCHEMA, messages=HELLO) -> LLMRequest:
    return LLMRequest(role="planner", messages=messages, response_format="json", json_schema=schema)


async def collect(llm: OpenAIChat, request: LLMRequest) -> list[str | LLMReply]:
    return [item async for item in llm.stream(request)]


def test_complete_returns_text_server_usage_and_sends_a_plain_request(server):
    llm = chat(server)
    assert isinstance(llm, LLM)
    reply = asyncio.run(llm.complete(text_request(max_tokens=20, temperature=0.3)))
    assert reply.text == "hello there big world"
    assert reply.model == "fake-model" and reply.latency_s > 0
    expected = word_usage({"messages": HELLO}, reply.text)
    assert reply.usage.model_dump() == {"llm_calls": 1, "input_tokens": expected["prompt_tokens"],
                                        "output_tokens": expected["completion_tokens"]}
    [body] = server.requests
    assert body["messages"] == HELLO and body["max_tokens"] == 20 and body["temperature"] == 0.3
    assert "response_format" not in body and "metadata" not in body and not body.get("stream")
    assert server.received[0].headers["authorization"] == f"Bearer {KEY}"


def test_stream_yields_the_deltas_then_one_final_reply_with_server_usage(server):
    items = asyncio.run(collect(chat(server), text_request()))
    deltas, final = items[:-1], items[-1]
    assert deltas == ["hell", "o th", "ere ", "big ", "worl", "d"]  # the server's 4-character chunks
    assert isinstance(final, LLMReply) and final.text == "".join(deltas)
    assert final.usage.input_tokens == word_usage({"messages": HELLO}, final.text)["prompt_tokens"]
    [body] = server.requests
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("streaming", [False, True])
def test_usage_is_counted_with_tiktoken_when_the_server_reports_none(server, streaming):
    server.inject(Fault.no_usage())
    llm = chat(server)
    if streaming:
        reply = asyncio.run(collect(llm, text_request()))[-1]
    else:
        reply = asyncio.run(llm.complete(text_request()))
    assert reply.usage.llm_calls == 1
    assert reply.usage.input_tokens == count_message_tokens(HELLO)
    assert reply.usage.output_tokens == count_tokens("hello there big world")


def test_rate_limit_waits_for_retry_after_then_succeeds(server):
    server.inject(Fault.rate_limit(retry_after_s=0.4))
    reply = asyncio.run(chat(server).complete(text_request()))
    assert reply.text == "hello there big world"
    first, second = server.received
    assert second.at - first.at >= 0.35, "the SDK must wait (most of) the Retry-After before retrying"
    assert second.headers.get("x-stainless-retry-count") == "1"


def test_server_error_is_retried(server):
    server.inject(Fault.server_error(500))
    reply = asyncio.run(chat(server).complete(text_request()))
    assert reply.text == "hello there big world" and len(server.requests) == 2


@pytest.mark.parametrize("fault,error,words", [
    (Fault.server_error(503, times=None), LLMServerError, ["HTTP 503", "server log", "2 attempt(s)"]),
    (Fault.rate_limit(0.05, times=None), LLMRateLimitError, ["rate-limiting", "max_retries"]),
])
def test_exhausted_retries_raise_the_typed_error(server, fault, error, words):
    server.inject(fault)
    with pytest.raises(error) as caught:
        asyncio.run(chat(server, max_retries=1).complete(text_request()))
    assert len(server.requests) == 2
    assert all(w in str(caught.value) for w in words), str(caught.value)
    assert caught.value.transient


def test_a_hanging_server_times_out(server):
    server.inject(Fault.hang(10))
    started = time.monotonic()
    with pytest.raises(LLMTimeoutError, match=r"timeout_s=0\.5s"):
        asyncio.run(chat(server, timeout_s=0.5, max_retries=0).complete(text_request()))
    assert time.monotonic() - started < 3


def test_a_malformed_body_is_a_response_error_and_not_retried(server):
    server.inject(Fault.malformed_body())
    with pytest.raises(LLMResponseError, match="unusable response"):
        asyncio.run(chat(server).complete(text_request()))
    assert len(server.requests) == 1


def test_wrong_shape_json_is_passed_through_for_the_role_to_judge(server):
    server.inject(Fault.wrong_shape_json())
    reply = asyncio.run(chat(server).complete(json_request()))
    assert reply.text == WRONG_SHAPE_JSON


def test_a_truncated_stream_raises_after_the_partial_deltas_and_a_resend_succeeds(server):
    server.inject(Fault.truncated_stream(after_chunks=2))
    llm = chat(server)
    seen: list[str | LLMReply] = []

    async def run() -> None:
        async for item in llm.stream(text_request()):
            seen.append(item)

    with pytest.raises(LLMStreamTruncated, match="stream truncated") as caught:
        asyncio.run(run())
    assert isinstance(caught.value, LLMResponseError) and caught.value.transient
    assert seen == ["hell", "o th"]
    assert asyncio.run(collect(llm, text_request()))[-1].text == "hello there big world"


def test_rejected_json_schema_falls_back_once_and_the_mode_sticks(server):
    server.inject(Fault.reject_response_format("json_schema"))
    server.responder = lambda body: '{"route": "plan"}'
    llm = chat(server, max_retries=3)
    assert llm.mode is None
    assert asyncio.run(llm.complete(json_request())).text == '{"route": "plan"}'
    formats = [b["response_format"] for b in server.requests]
    assert formats == [
        {"type": "json_schema", "json_schema": {"name": "planner_reply", "schema": SCHEMA, "strict": False}},
        {"type": "json_object", "schema": SCHEMA},
    ], "the rejected mode is tried once (no retries), then the next one"
    assert llm.mode == "json_object_schema"
    asyncio.run(llm.complete(json_request()))
    assert server.requests[2]["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert len(server.requests) == 3


def test_auto_detection_ends_with_the_prompt_instruction_when_every_json_mode_is_rejected(server):
    kinds = ("json_schema", "json_object_schema", "json_object")
    server.inject(*(Fault.reject_response_format(k) for k in kinds))
    llm = chat(server)
    asyncio.run(llm.complete(json_request()))
    last = server.requests[-1]
    assert len(server.requests) == 4 and "response_format" not in last
    assert last["messages"][-1]["content"] == f"hello there big world\n\n{JSON_INSTRUCTION}"
    assert llm.mode == "prompt"


def test_a_transient_error_while_detecting_is_retried_without_downgrading(server):
    server.inject(Fault.server_error(503))
    llm = chat(server)
    asyncio.run(llm.complete(json_request()))
    assert [b["response_format"]["type"] for b in server.requests] == ["json_schema", "json_schema"]
    assert llm.mode == "json_schema"


def test_a_configured_mode_never_changes(server):
    server.inject(Fault.reject_response_format("json_schema"))
    llm = chat(server, structured_output="json_schema", max_retries=0)
    with pytest.raises(LLMServerError, match="HTTP 500"):
        asyncio.run(llm.complete(json_request()))
    assert len(server.requests) == 1 and llm.mode == "json_schema"


def test_json_object_mode_asks_for_json_in_the_prompt_only_when_no_message_mentions_it(server):
    llm = chat(server, structured_output="json_object")
    asyncio.run(llm.complete(json_request(schema=None)))
    mentions = [{"role": "user", "content": "Answer in JSON."}]
    asyncio.run(llm.complete(json_request(schema=None, messages=mentions)))
    first, second = server.requests
    assert first["response_format"] == {"type": "json_object"}
    assert first["messages"][-1]["content"].endswith(JSON_INSTRUCTION)
    assert second["messages"] == mentions


def test_rejected_stream_options_are_dropped_and_usage_is_counted_locally(server):
    server.inject(Fault.reject_stream_options())
    llm = chat(server)
    final = asyncio.run(collect(llm, text_request()))[-1]
    assert final.usage.input_tokens == count_message_tokens(HELLO)
    asyncio.run(collect(llm, text_request()))
    assert ["stream_options" in b for b in server.requests] == [True, False, False]


def test_extra_body_is_sent_with_every_request(server):
    asyncio.run(chat(server, extra_body={"top_k": 5}).complete(text_request()))
    assert server.requests[0]["top_k"] == 5


def test_a_closed_port_is_a_connection_error_naming_the_url():
    with FakeOpenAIServer() as gone:
        url = gone.base_url
    llm = OpenAIChat("m", base_url=url, api_key=KEY, max_retries=0, timeout_s=2)
    with pytest.raises(LLMConnectionError, match="Check base_url") as caught:
        asyncio.run(llm.complete(text_request()))
    assert url in str(caught.value)


def test_a_wrong_path_is_a_response_error_with_a_hint(server):
    llm = OpenAIChat("m", base_url=server.base_url.removesuffix("/v1"), api_key=KEY, max_retries=0)
    with pytest.raises(LLMResponseError, match="ends in /v1"):
        asyncio.run(llm.complete(text_request()))


def test_the_key_never_shows_in_repr_or_errors_but_survives_pickling(server):
    llm = chat(server, max_retries=0)
    assert KEY not in repr(llm) and KEY not in str(llm) and "***" in repr(llm)
    server.inject(Fault.server_error(401))
    with pytest.raises(LLMResponseError, match="api_key") as caught:
        asyncio.run(llm.complete(text_request()))
    err = caught.value
    text = "".join(traceback.format_exception(err)) + repr(err) + str(err)
    assert KEY not in text
    assert err.__cause__ is None and err.__context__ is None, "SDK errors hold the request: never chain"
    assert KEY.encode() not in pickle.dumps(err)
    clone = pickle.loads(pickle.dumps(llm))  # as Ray ships it to an actor
    assert asyncio.run(clone.complete(text_request())).text == "hello there big world"
    assert server.received[-1].headers["authorization"] == f"Bearer {KEY}"


def test_the_key_comes_from_the_environment_or_a_placeholder(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    asyncio.run(OpenAIChat("m", base_url=server.base_url).complete(text_request()))
    monkeypatch.delenv("OPENAI_API_KEY")
    asyncio.run(OpenAIChat("m", base_url=server.base_url).complete(text_request()))
    sent = [r.headers["authorization"] for r in server.received]
    assert sent == ["Bearer sk-from-env", "Bearer not-needed"]


def test_one_instance_works_across_event_loops(server):
    llm = chat(server)
    for _ in range(2):  # each asyncio.run has its own loop; pooled connections must not leak across
        assert asyncio.run(llm.complete(text_request())).text == "hello there big world"


@pytest.mark.parametrize("kwargs,message", [
    ({"model": ""}, "model name"),
    ({"model": "m", "timeout_s": 0}, "timeout_s"),
    ({"model": "m", "max_retries": -1}, "max_retries"),
    ({"model": "m", "structured_output": "xml"}, "structured_output"),
])
def test_bad_arguments_say_what_is_wrong(kwargs, message):
    with pytest.raises(ValueError, match=message):
        OpenAIChat(**kwargs)


def test_a_grammar_is_sent_only_when_asked_for(server):
    grammar = 'root ::= "1. noop()\\n"'
    asyncio.run(chat(server, profile=ModelProfile(grammar=True)).complete(text_request(grammar=grammar)))
    asyncio.run(chat(server).complete(text_request(grammar=grammar)))  # OpenAI proper would reject the field
    with_grammar, without = server.requests
    assert with_grammar["grammar"] == grammar and "response_format" not in with_grammar
    assert "grammar" not in without
