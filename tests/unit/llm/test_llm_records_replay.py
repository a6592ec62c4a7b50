"""LLMCallRecord, RecordingLLM and ReplayLLM: record every call (failures too), replay it exactly."""

from __future__ import annotations

import asyncio
import contextlib
import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.llm import (
    LLM,
    FunctionLLM,
    LLMCallRecord,
    LLMRateLimitError,
    LLMReplayMismatch,
    LLMReply,
    LLMRequest,
    LLMServerError,
    LLMStreamTruncated,
    RecordingLLM,
    ReplayLLM,
    ScriptedLLM,
    Usage,
)
from agents.llm.records import ABANDONED, request_fingerprint
from agents.llm.replay import error_class
from prompts import count_message_tokens, count_tokens
from support.tiers import examples

_SETTINGS = settings(max_examples=examples(40), deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])


def msgs(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "You execute."}, {"role": "user", "content": text}]


def req(role: str, text: str, **metadata: str) -> LLMRequest:
    return LLMRequest(role=role, messages=msgs(text), metadata=metadata)


def record_all(llm: LLM, requests: list[LLMRequest], task_id: str = "t1") -> list[LLMCallRecord]:
    records: list[LLMCallRecord] = []
    recorder = RecordingLLM(llm, records.append, task_id=task_id)

    async def run() -> None:
        for r in requests:
            with contextlib.suppress(Exception):
                await recorder.complete(r)

    asyncio.run(run())
    return records


# ---------------------------------------------------------------------------------------------- records
def test_the_fingerprint_is_canonical_and_filled_in():
    a = [{"role": "user", "content": "x", "name": "n"}]
    b = [{"name": "n", "content": "x", "role": "user"}]  # same message, other key order
    assert request_fingerprint("router", a) == request_fingerprint("router", b)
    assert request_fingerprint("router", a) != request_fingerprint("planner", a)
    assert request_fingerprint("router", a) != request_fingerprint("router", [{**a[0], "content": "y"}])
    record = LLMCallRecord(role="router", messages=a)
    assert record.request_fingerprint == request_fingerprint("router", a)


def test_a_record_is_frozen_and_accepts_the_roles_compact_dicts():
    record = LLMCallRecord.model_validate({"role": "planner", "messages": msgs("p"), "reply_text": "{}",
                                           "usage": {"llm_calls": 1, "input_tokens": 3, "output_tokens": 1},
                                           "latency_s": 0.5, "model": "m", "error": None, "ended_at": 12.0})
    assert record.reply() == LLMReply(text="{}", usage=Usage(llm_calls=1, input_tokens=3, output_tokens=1),
                                      latency_s=0.5, model="m")
    with pytest.raises(ValueError):
        record.reply_text = "changed"  # type: ignore[misc]


def test_recording_passes_replies_through_and_numbers_the_calls():
    llm = FunctionLLM(lambda r: f"answer to {r.messages[-1]['content']}", model="fn")
    records = record_all(llm, [req("router", "a"), req("planner", "b")], task_id="task-9")
    assert [(r.seq, r.role, r.reply_text, r.task_id) for r in records] == [
        (1, "router", "answer to a", "task-9"), (2, "planner", "answer to b", "task-9")]
    assert records[0].usage == Usage(llm_calls=1, input_tokens=count_message_tokens(msgs("a")),
                                     output_tokens=count_tokens("answer to a"))
    assert records[0].model == "fn" and not records[0].failed


def test_the_task_id_defaults_to_the_requests_metadata():
    records: list[LLMCallRecord] = []
    recorder = RecordingLLM(FunctionLLM(lambda r: "x"), records.append)
    asyncio.run(recorder.complete(req("router", "a", task_id="m-1")))
    assert records[0].task_id == "m-1"


def test_failures_are_recorded_with_their_class_and_re_raised():
    llm = ScriptedLLM({"executor": [LLMRateLimitError("slow down")]})
    records: list[LLMCallRecord] = []
    with pytest.raises(LLMRateLimitError):
        asyncio.run(RecordingLLM(llm, records.append).complete(req("executor", "a")))
    [record] = records
    assert record.failed and record.error_type == "LLMRateLimitError"
    assert record.error == "LLMRateLimitError: slow down" and record.reply_text == ""


def test_streams_are_recorded_whole_truncated_and_abandoned():
    records: list[LLMCallRecord] = []
    recorder = RecordingLLM(FunctionLLM(lambda r: "abcdef", stream_chunk_size=2), records.append)

    async def read_all() -> list[str | LLMReply]:
        return [item async for item in recorder.stream(req("planner", "p"))]

    async def read_one() -> None:
        stream = recorder.stream(req("planner", "p"))
        assert await anext(stream) == "ab"
        await stream.aclose()  # the planner stops at the first invalid step

    items = asyncio.run(read_all())
    asyncio.run(read_one())
    assert items[-1].text == "abcdef" and records[0].reply_text == "abcdef" and records[0].error is None
    abandoned = records[1]
    assert abandoned.error == ABANDONED and not abandoned.failed and abandoned.reply_text == "ab"
    assert abandoned.usage == Usage(llm_calls=1, input_tokens=count_message_tokens(msgs("p")),
                                    output_tokens=count_tokens("ab"))


def test_a_stream_failing_midway_is_recorded_with_the_partial_text():
    async def fail_midway(request: LLMRequest):
        yield "par"
        raise LLMStreamTruncated("cut")

    class Truncating:
        stream = staticmethod(fail_midway)

        async def complete(self, request: LLMRequest) -> LLMReply:
            raise NotImplementedError

    records: list[LLMCallRecord] = []

    async def run() -> None:
        async for _ in RecordingLLM(Truncating(), records.append).stream(req("planner", "p")):
            pass

    with pytest.raises(LLMStreamTruncated):
        asyncio.run(run())
    assert records[0].error_type == "LLMStreamTruncated" and records[0].reply_text == "par"


# ---------------------------------------------------------------------------------------------- replay
def test_replay_reproduces_a_recording_exactly():
    llm = ScriptedLLM({"router": ['{"route": "plan"}'], "planner": ["plan-1", "plan-2"],
                       "executor": [LLMServerError("HTTP 503")]})
    requests = [req("router", "t"), req("planner", "t"), req("executor", "x"), req("planner", "t")]
    records = record_all(llm, requests)
    replay = ReplayLLM([r.model_dump() for r in records])  # as read back from the event log
    assert asyncio.run(replay.complete(requests[0])) == records[0].reply()
    assert asyncio.run(replay.complete(requests[1])).text == "plan-1"
    with pytest.raises(LLMServerError, match="replayed: LLMServerError: HTTP 503"):
        asyncio.run(replay.complete(requests[2]))
    assert asyncio.run(replay.complete(requests[3])).text == "plan-2", "same fingerprint: recorded order"
    assert replay.remaining() == {}


@given(order=st.permutations(range(6)))
@_SETTINGS
def test_parallel_calls_in_any_order_get_their_own_recorded_answers(order):
    requests = [req("executor", f"step {i}") for i in range(6)]
    records = [LLMCallRecord(seq=i + 1, role="executor", messages=r.messages, reply_text=f"out {i}")
               for i, r in enumerate(requests)]
    replay = ReplayLLM(records)
    got = {i: asyncio.run(replay.complete(requests[i])).text for i in order}
    assert got == {i: f"out {i}" for i in range(6)}


def test_strict_mismatch_names_the_role_and_the_first_differing_message():
    replay = ReplayLLM([LLMCallRecord(seq=4, role="planner", messages=msgs("old prompt"), reply_text="{}")])
    with pytest.raises(LLMReplayMismatch) as caught:
        asyncio.run(replay.complete(req("planner", "new prompt")))
    text = str(caught.value)
    assert "'planner'" in text and "seq 4" in text and "message 1 differs" in text
    assert "old prompt" in text and "new prompt" in text and "strict=False" in text


def test_non_strict_replay_falls_back_to_the_next_record_of_the_role():
    records = [LLMCallRecord(role="planner", messages=msgs("old"), reply_text="p1"),
               LLMCallRecord(role="planner", messages=msgs("new"), reply_text="p2")]
    replay = ReplayLLM(records, strict=False)
    assert asyncio.run(replay.complete(req("planner", "new"))).text == "p2", "an exact match wins"
    assert asyncio.run(replay.complete(req("planner", "changed"))).text == "p1"
    with pytest.raises(LLMReplayMismatch, match="no recorded 'planner' call left"):
        asyncio.run(replay.complete(req("planner", "new")))


def test_replayed_streams_come_in_chunks_with_the_recorded_usage():
    usage = Usage(llm_calls=1, input_tokens=11, output_tokens=22)
    replay = ReplayLLM([LLMCallRecord(role="planner", messages=msgs("p"), reply_text="abcdefg", usage=usage,
                                      latency_s=1.5, model="rec")], stream_chunk_size=3)

    async def run() -> list[str | LLMReply]:
        return [item async for item in replay.stream(req("planner", "p"))]

    items = asyncio.run(run())
    assert items[:-1] == ["abc", "def", "g"]
    assert items[-1] == LLMReply(text="abcdefg", usage=usage, latency_s=1.5, model="rec")


def test_error_classes_resolve_by_name_with_a_safe_default():
    assert error_class("LLMStreamTruncated") is LLMStreamTruncated
    assert error_class("ValueError").__name__ == "LLMError" and error_class(None).__name__ == "LLMError"


def test_records_never_hold_more_than_the_request_and_pickle_cleanly():
    record = record_all(FunctionLLM(lambda r: "ok"), [req("router", "a")])[0]
    assert set(record.model_dump()) == {"task_id", "seq", "role", "messages", "request_fingerprint",
                                        "reply_text", "tool_calls", "usage", "latency_s", "model", "error", "error_type"}
    assert pickle.loads(pickle.dumps(record)) == record
