"""ReplayLLM declares ``tools_supported`` as its recording shows it, so a typed review replays with the prompt
it was recorded with: the native output tool where the recorded backend took it, the schema line where it had
no tools or rejected them (``agents.roles.output_tool.offers_tools`` decides which)."""

from __future__ import annotations

import asyncio

import pydantic

from agents.llm import LLM, FunctionLLM, LLMCallRecord, LLMRequest, OpenAIChat, RecordingLLM, ReplayLLM
from agents.llm.fake_server import FakeOpenAIServer, FakeReply, FakeToolCall, Fault
from agents.outputs import output_spec
from agents.roles.output_tool import FINAL_RESULT
from agents.roles.typed_review import typed_review

REVIEW = [{"role": "system", "content": "You review."}, {"role": "user", "content": "steps: 1 lookup Rome"}]


class Leg(pydantic.BaseModel):
    city: str
    millions: float


def review(llm: LLM) -> str:
    """One typed review in the terse form, as the reflector asks it (its prompt line chosen for ``llm``)."""
    messages, _, _, model = typed_review(REVIEW, None, output_spec(Leg, importable=False), llm)
    return asyncio.run(model.complete(LLMRequest(role="reflector", messages=messages))).text


def record_two_reviews(backend: LLM) -> tuple[list[dict], list[str]]:
    records: list[LLMCallRecord] = []
    recorder = RecordingLLM(backend, records.append)
    texts = [review(recorder), review(recorder)]
    return [r.model_dump(mode="json") for r in records], texts  # as the event log stores them


def hosted(body: dict) -> FakeReply | str:
    if body.get("tools"):
        return FakeReply("accept 5 5 5", [FakeToolCall(FINAL_RESULT, {"city": "Rome", "millions": 2.8})])
    return 'accept 5 5 5\nanswer: {"city": "Rome", "millions": 2.8}'


def chat(server: FakeOpenAIServer) -> OpenAIChat:
    return OpenAIChat("m", base_url=server.base_url, api_key="k", max_retries=0)


def test_a_hosted_typed_review_replays_with_the_native_output_tool_it_was_recorded_with() -> None:
    with FakeOpenAIServer(hosted) as server:
        records, texts = record_two_reviews(chat(server))
    assert all(r["tool_calls"] for r in records), "the recording offered the tool and the model called it"
    replay = ReplayLLM(records)
    assert [review(replay), review(replay)] == texts  # strict: each prompt is the one recorded
    assert replay.tools_supported is True and replay.remaining() == {}


def test_a_recorded_rejection_of_tools_replays_as_it_happened() -> None:
    with FakeOpenAIServer(hosted) as server:
        server.inject(Fault.reject_tools())
        records, texts = record_two_reviews(chat(server))
    assert [r["error_type"] for r in records] == ["LLMToolsUnsupported", None, None]
    replay = ReplayLLM(records)
    assert replay.tools_supported is None, "offered until the rejection is replayed"
    assert [review(replay), review(replay)] == texts
    assert replay.tools_supported is False and replay.remaining() == {}


def test_a_backend_without_tools_replays_with_the_schema_line() -> None:
    records, texts = record_two_reviews(FunctionLLM(lambda r: hosted({})))
    replay = ReplayLLM(records)
    assert [review(replay), review(replay)] == texts
    assert replay.tools_supported is False and replay.remaining() == {}
