"""How the model is held to a typed output's schema, through the public API against a local OpenAI-compatible
server (issue 62): the hosted (terse) reviewer's answer is a final native ``final_result`` tool call whose parameters
are the output's schema, its arguments stream as the answer's JSON, a server without tools falls back to the prompt's
schema line (remembered by the client), an invalid output gets one repair then escalates naming the field; the
embedded model's JSON reviewer sends the output's schema as the reply schema's ``answer``."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pydantic
import pytest
from support import wire
from support.hosted_flows import _role_of as role_of
from support.tools import lookup, subtract

from agents import Orchestrator, RuntimeConfig
from agents.llm import HOSTED, SMALL_LOCAL, ModelProfile, OpenAIChat
from agents.llm.fake_server import FakeOpenAIServer, FakeReply, FakeToolCall, Fault
from agents.outputs import schema_line
from agents.roles.output_tool import FINAL_RESULT, output_tool, tool_line

TASK = "Which is bigger, Paris or Rome, and by how much?"
PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                 wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]))
RIGHT = {"bigger": "Rome", "difference_millions": 0.7}


class CityDiff(pydantic.BaseModel):
    bigger: str
    difference_millions: float


def _role(body: dict[str, Any]) -> str:
    """The role by its reply schema's name (the embedded profile's JSON forms), else by its hosted system prompt."""
    named = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
    return named.removesuffix("_reply") if named else role_of(body)


class Model:
    """Plays every role; the reviewer with ``reviews``, each a function of the request body."""

    def __init__(self, reviews: list[Callable[[dict[str, Any]], str | FakeReply]], plans: tuple[str, ...] = (PLAN,)
                 ) -> None:
        self.reviews, self.plans, self.bodies = list(reviews), list(plans), list[dict[str, Any]]()
        self.server: FakeOpenAIServer | None = None
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str | FakeReply:
        role = _role(body)
        with self._lock:
            if role == "planner":
                return self.plans.pop(0) if len(self.plans) > 1 else self.plans[0]
            if role == "router":
                return wire.route()
            self.bodies.append(body)
            return self.reviews.pop(0)(body)


def tool_answer(arguments: dict[str, Any] | str, verdict: str = "accept 5 5 5") -> Callable[..., FakeReply]:
    def reply(body: dict[str, Any]) -> FakeReply:
        assert body.get("tools"), "the reviewer was not offered the output tool"
        return FakeReply(verdict, [FakeToolCall(FINAL_RESULT, arguments)])
    return reply


def text_answer(answer: str) -> Callable[..., str]:
    return lambda body: f"accept 5 5 5\nanswer: {answer}"


@pytest.fixture
def run(tmp_path) -> Iterator[Callable[..., Orchestrator]]:
    opened: list[tuple[FakeOpenAIServer, Orchestrator]] = []

    def start(model: Model, profile: ModelProfile = HOSTED, faults: tuple[Fault, ...] = ()) -> Orchestrator:
        """An orchestrator on a fresh fake server (``model.server`` after this)."""
        server = FakeOpenAIServer(responder=model, stream_chunk_chars=5).start()
        server.inject(*faults)
        llm = OpenAIChat("hosted-model", base_url=server.base_url, api_key="sk-fake", max_retries=0,
                         profile=profile)
        orch = Orchestrator(llm=llm, tools=[lookup, subtract], runtime="inprocess",
                            config=RuntimeConfig(store_path=tmp_path / f"{len(opened)}.db", task_timeout_s=60))
        opened.append((server, orch))
        model.server = server
        return orch

    yield start
    for server, orch in opened:
        orch.shutdown()
        server.stop()


def test_a_hosted_typed_answer_is_a_final_tool_call_held_to_the_schema_and_streamed(run) -> None:
    model = Model([tool_answer(RIGHT)])
    orch = run(model)
    handle = orch.submit(TASK, output_type=CityDiff)
    pieces = list(handle.stream_answer())
    result = handle.result(timeout=60)
    assert result.status == "accepted", (result.error, result.question)
    assert result.output == CityDiff(**RIGHT)
    assert json.loads(result.answer) == RIGHT
    [body] = model.bodies
    [tool] = body["tools"]
    assert tool == output_tool(orch_spec(CityDiff))[0] and tool["function"]["strict"] is True
    assert tool["function"]["parameters"]["additionalProperties"] is False
    assert set(tool["function"]["parameters"]["required"]) == {"bigger", "difference_millions"}
    assert body["tool_choice"] == "auto" and body["parallel_tool_calls"] is False and body["stream"] is True
    last = body["messages"][-1]["content"]
    assert tool_line(False) in last and "JSON schema" not in last  # the schema travels once, in the tool
    deltas = [e.payload.text for e in handle.events() if e.type == "answer_delta"]
    assert len(deltas) > 3, deltas  # the arguments' pieces, as the server streamed them
    assert "".join(deltas) == "".join(p for p in pieces if isinstance(p, str)) == result.answer


def orch_spec(tp: Any):
    from agents.outputs import output_spec

    return output_spec(tp, importable=False)


@pytest.mark.parametrize(("output_type", "value", "expected"), [
    (list[str], ["Rome", "Paris"], ["Rome", "Paris"]),
    (CityDiff | None, RIGHT, CityDiff(**RIGHT)),  # ends in the value's own brace, held back until the call ends
], ids=["list", "optional model"])
def test_a_non_object_type_is_wrapped_in_the_tool_and_unwrapped_in_the_answer(run, output_type, value,
                                                                              expected) -> None:
    model = Model([tool_answer({"response": value})])
    handle = run(model).submit(TASK, output_type=output_type)
    result = handle.result(timeout=60)
    assert result.status == "accepted" and result.output == expected, (result.error, result.question)
    assert json.loads(result.answer) == value
    deltas = [e.payload.text for e in handle.events() if e.type == "answer_delta"]
    assert "".join(deltas) == result.answer and len(deltas) > 1
    params = model.bodies[0]["tools"][0]["function"]["parameters"]
    assert params["required"] == ["response"] and params["additionalProperties"] is False


def test_a_server_that_rejects_tools_gets_the_schema_line_and_the_client_remembers(run) -> None:
    model = Model([text_answer(json.dumps(RIGHT)), text_answer(json.dumps(RIGHT))])
    orch = run(model, faults=(Fault.reject_tools(),))
    first = orch.run(TASK, output_type=CityDiff, timeout=60)
    second = orch.run(TASK, output_type=CityDiff, timeout=60)
    assert (first.status, second.status) == ("accepted", "accepted"), (first.error, second.error)
    assert first.output == second.output == CityDiff(**RIGHT)
    assert [bool(b.get("tools")) for b in model.bodies] == [False, False]  # the rejected one never reached the model
    for body in model.bodies:
        last = body["messages"][-1]["content"]
        assert schema_line(orch_spec(CityDiff)) in last and tool_line(False) not in last
    assert model.server is not None
    tooled = [b for b in model.server.requests if b.get("tools")]
    assert len(tooled) == 1  # tried once: the second task's review went without tools at once


def test_an_invalid_output_is_repaired_once_then_escalates_naming_the_field(run) -> None:
    model = Model([tool_answer({"bigger": "Rome"}), tool_answer({"bigger": "Rome", "difference_millions": "lots"})])
    result = run(model).run(TASK, output_type=CityDiff, timeout=60)
    assert (result.status, result.stopped_reason) == ("escalated", "invalid_output")
    assert "difference_millions" in result.question and result.output is None
    repair = model.bodies[1]
    assert repair["tools"] and "difference_millions" in repair["messages"][-1]["content"]


def test_one_repair_makes_a_valid_output(run) -> None:
    model = Model([tool_answer({"bigger": "Rome"}), tool_answer(RIGHT)])
    result = run(model).run(TASK, output_type=CityDiff, timeout=60)
    assert result.status == "accepted" and result.output == CityDiff(**RIGHT)


def test_a_retry_or_replan_needs_no_tool_call(run) -> None:
    first = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}))
    model = Model([lambda body: "replan 2 2 4: compute the difference", tool_answer(RIGHT)], plans=(first, PLAN))
    result = run(model).run(TASK, output_type=CityDiff, timeout=60)
    assert result.status == "accepted" and result.output == CityDiff(**RIGHT), (result.stopped_reason, result.question)
    assert len(model.bodies) == 2 and all(b.get("tools") for b in model.bodies)


def test_a_model_that_writes_the_answer_line_instead_is_still_validated(run) -> None:
    model = Model([text_answer(json.dumps(RIGHT))])
    result = run(model).run(TASK, output_type=CityDiff, timeout=60)
    assert result.status == "accepted" and result.output == CityDiff(**RIGHT)


def test_an_untyped_hosted_review_sends_no_tools(run) -> None:
    model = Model([text_answer("Rome, by 0.7 million.")])
    result = run(model).run(TASK, timeout=60)
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million."
    assert model.server is not None and len(model.server.requests) == 3
    assert not any("tools" in b or "tool_choice" in b for b in model.server.requests)


def test_the_embedded_profile_sends_the_output_schema_as_the_answer_schema(run) -> None:
    def json_review(body: dict[str, Any]) -> str:
        return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                           "action": "accept", "retry_details": None, "feedback": "", "answer": RIGHT})
    model = Model([json_review])
    result = run(model, profile=SMALL_LOCAL).run(TASK, output_type=CityDiff, timeout=60)
    assert result.status == "accepted" and result.output == CityDiff(**RIGHT), (result.error, result.question)
    [body] = model.bodies
    assert "tools" not in body
    sent = body["response_format"]["json_schema"]["schema"]
    answer = sent["properties"]["answer"]["anyOf"][0]
    assert answer["properties"] == CityDiff.model_json_schema()["properties"]
    assert set(answer["required"]) == {"bigger", "difference_millions"}
