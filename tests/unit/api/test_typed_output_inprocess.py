"""Typed outputs (``output_type=``) through the public API without Ray, with the hosted terse reviewer and the
small local model's JSON reviewer, as a user's own tests would pin them."""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

import pydantic
import pytest

from agents import Orchestrator, RuntimeConfig, tool
from agents.errors import InvalidOutputError
from agents.llm import FunctionLLM, LLMRequest
from agents.llm.profile import HOSTED, SMALL_LOCAL, ModelProfile
from agents.outputs import OutputTypeError


@tool(permission="read")
def population(city: str) -> float:
    """Population of a city in millions.

    Args:
        city: English city name.
    """
    return {"paris": 2.1, "rome": 2.8}[city.lower()]


class CityDiff(pydantic.BaseModel):
    bigger: str
    difference_millions: float


@dataclasses.dataclass
class CityPair:
    bigger: str
    smaller: str


class CityDict(TypedDict):
    bigger: str
    population: float


def script(answers: list[str], profile: ModelProfile, seen: list[LLMRequest] | None = None):
    def reply(request: LLMRequest) -> str:
        if request.role == "router":
            return json.dumps({"route": "plan", "confidence": 0.9, "reason": "needs lookups", "answer": None})
        if request.role == "planner":
            return json.dumps({"steps": [
                {"step_id": i, "description": c, "tool_name": "population", "tool_input": {"city": c},
                 "depends_on": []} for i, c in ((1, "Paris"), (2, "Rome"))]})
        if seen is not None:
            seen.append(request)
        answer = answers.pop(0)
        if profile.reply_form("reflector") == "terse":
            return "accept 5 5 5" if answer is None else f"accept 5 5 5\nanswer: {answer}"
        return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                           "action": "accept", "retry_details": None, "feedback": "",
                           "answer": None if answer is None else json.loads(answer)})  # the value itself
    return reply


def _orch(tmp_path, answers, profile, seen=None):
    return Orchestrator(llm=FunctionLLM(script(answers, profile, seen), profile=profile), tools=[population],
                        config=RuntimeConfig(store_path=tmp_path / "t.db"), runtime="inprocess")


CASES = [
    (CityDiff, '{"bigger": "Rome", "difference_millions": 0.7}', CityDiff(bigger="Rome", difference_millions=0.7)),
    (CityPair, '{"bigger": "Rome", "smaller": "Paris"}', CityPair(bigger="Rome", smaller="Paris")),
    (CityDict, '{"bigger": "Rome", "population": 2.8}', {"bigger": "Rome", "population": 2.8}),
    (int, "3", 3),
    (list[str], '["Rome", "Paris"]', ["Rome", "Paris"]),
]


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=["hosted-terse", "small-local-json"])
@pytest.mark.parametrize(("output_type", "answer", "expected"), CASES, ids=lambda c: getattr(c, "__name__", None))
def test_the_output_is_the_validated_value(tmp_path, profile, output_type, answer, expected):
    seen: list[LLMRequest] = []
    orch = _orch(tmp_path, [answer], profile, seen)
    try:
        result = orch.run("Which is bigger, Paris or Rome?", timeout=30, output_type=output_type)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    assert result.output == expected and type(result.output) is type(expected)
    assert json.loads(result.answer) == json.loads(answer)  # the answer stays the text
    if profile.reply_form("reflector") == "json":  # the server holds the reviewer to the output's schema
        answer_schema = seen[0].json_schema["properties"]["answer"]["anyOf"][0]
        assert "properties" in answer_schema or "type" in answer_schema
    else:
        assert "JSON schema" in seen[0].messages[-1]["content"]


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=["hosted-terse", "small-local-json"])
def test_an_invalid_output_is_repaired_once_with_the_error(tmp_path, profile):
    seen: list[LLMRequest] = []
    orch = _orch(tmp_path, ['{"bigger": "Rome"}', '{"bigger": "Rome", "difference_millions": 0.7}'], profile, seen)
    try:
        result = orch.run("Which is bigger, Paris or Rome?", timeout=30, output_type=CityDiff)
    finally:
        orch.shutdown()
    assert result.status == "accepted"
    assert result.output == CityDiff(bigger="Rome", difference_millions=0.7)
    assert "difference_millions" in seen[1].messages[-1]["content"]  # the repair round shows the field


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=["hosted-terse", "small-local-json"])
def test_an_accept_without_an_answer_is_repaired_and_never_takes_a_steps_output(tmp_path, profile):
    """Seen on the embedded model: an accept whose answer was null ended accepted with the last step's output (the
    passages) as its answer and no output. Under a type the accept must carry the value: it gets the repair round."""
    seen: list[LLMRequest] = []
    orch = _orch(tmp_path, [None, '{"bigger": "Rome", "difference_millions": 0.7}'], profile, seen)
    try:
        result = orch.run("Which is bigger, Paris or Rome?", timeout=30, output_type=CityDiff)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    assert result.output == CityDiff(bigger="Rome", difference_millions=0.7)
    assert "no answer" in seen[1].messages[-1]["content"]


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=["hosted-terse", "small-local-json"])
def test_an_accept_without_an_answer_twice_escalates(tmp_path, profile):
    orch = _orch(tmp_path, [None, None], profile)
    try:
        result = orch.run("Which is bigger, Paris or Rome?", timeout=30, output_type=CityDiff)
    finally:
        orch.shutdown()
    assert (result.status, result.stopped_reason) == ("escalated", "invalid_output")
    assert result.output is None and result.answer is None


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=["hosted-terse", "small-local-json"])
def test_an_output_invalid_twice_escalates_naming_the_field(tmp_path, profile):
    orch = _orch(tmp_path, ['{"bigger": "Rome"}', '{"bigger": "Rome", "difference_millions": "lots"}'], profile)
    try:
        result = orch.run("Which is bigger, Paris or Rome?", timeout=30, output_type=CityDiff)
    finally:
        orch.shutdown()
    assert (result.status, result.stopped_reason) == ("escalated", "invalid_output")
    assert "difference_millions" in result.question and result.output is None


def test_without_output_type_there_is_no_output(tmp_path):
    orch = _orch(tmp_path, ['Rome, by 0.7 million'], HOSTED)
    try:
        result = orch.run("Which is bigger, Paris or Rome?", timeout=30)
    finally:
        orch.shutdown()
    assert result.status == "accepted" and result.output is None and result.output_type is None


def test_a_local_class_works_in_process_but_not_where_it_must_be_imported(tmp_path):
    class Local(pydantic.BaseModel):
        bigger: str

    orch = _orch(tmp_path, ['{"bigger": "Rome"}'], HOSTED)
    try:
        assert orch.run("Which is bigger, Paris or Rome?", timeout=30, output_type=Local).output == Local(bigger="Rome")
    finally:
        orch.shutdown()
    from agents.outputs import output_spec

    with pytest.raises(OutputTypeError, match="cannot be imported by its path"):
        output_spec(Local, importable=True)


def test_a_type_pydantic_cannot_validate_is_refused_at_submit(tmp_path):
    orch = _orch(tmp_path, [], HOSTED)
    try:
        with pytest.raises(OutputTypeError, match="not a type pydantic can validate"):
            orch.submit("Which is bigger, Paris or Rome?", output_type=object())
    finally:
        orch.shutdown()


def test_the_errors_pickle_intact():
    for exc in (OutputTypeError("output_type x cannot be imported"),
                InvalidOutputError("reflector", "field 'a': Field required", "raw")):
        back = pickle.loads(pickle.dumps(exc))
        assert type(back) is type(exc) and str(back) == str(exc)


def test_a_users_check_sees_the_typed_output(tmp_path):
    seen = []

    def small_difference(review):
        seen.append(review.output)
        if review.output.difference_millions > 1:
            from agents.checks import Reject
            raise Reject("the difference is under a million")

    orch = Orchestrator(llm=FunctionLLM(script(['{"bigger": "Rome", "difference_millions": 7}',
                                                '{"bigger": "Rome", "difference_millions": 0.7}'], HOSTED)),
                        tools=[population], config=RuntimeConfig(store_path=tmp_path / "t.db"),
                        runtime="inprocess", checks=[small_difference])
    try:
        result = orch.run("Which is bigger, Paris or Rome?", timeout=30, output_type=CityDiff)
    finally:
        orch.shutdown()
    assert seen == [CityDiff(bigger="Rome", difference_millions=7), CityDiff(bigger="Rome", difference_millions=0.7)]
    assert result.status == "accepted" and result.output == seen[-1]


def test_a_session_turn_takes_an_output_type(tmp_path):
    orch = _orch(tmp_path, ['["Rome", "Paris"]'], SMALL_LOCAL)
    try:
        result = orch.session().run("Order Paris and Rome by size", timeout=30, output_type=list[str])
    finally:
        orch.shutdown()
    assert result.output == ["Rome", "Paris"]


def test_a_new_orchestrator_continuing_the_task_rebuilds_the_type_from_the_store(tmp_path, monkeypatch):
    """Escalated here (invalid twice); answered from a new Orchestrator that was never given the type: the
    Supervisor and the caller's result rebuild it by its import path from the task's record."""
    import agents.outputs

    first = _orch(tmp_path, ['{"bigger": "Rome"}', '{"bigger": "Rome"}'], HOSTED)
    try:
        task_id = first.submit("Which is bigger, Paris or Rome?", output_type=CityDiff).task_id
        assert first.handle(task_id).result(timeout=30).status == "escalated"
    finally:
        first.shutdown()
    monkeypatch.setattr(agents.outputs, "_LIVE", {})  # as in a new process: only the path is known
    second = _orch(tmp_path, ['{"bigger": "Rome", "difference_millions": 0.7}'], HOSTED)
    try:
        result = second.respond(task_id, "give the difference in millions too").result(timeout=30)
    finally:
        second.shutdown()
    assert result.status == "accepted", result.error
    assert result.output == CityDiff(bigger="Rome", difference_millions=0.7)
    assert result.output_type == f"{__name__}:CityDiff"


def test_a_type_a_new_process_cannot_import_is_refused_on_resume(tmp_path, monkeypatch):
    import agents.outputs

    class Local(pydantic.BaseModel):
        bigger: str

    first = _orch(tmp_path, ['{"other": 1}', '{"other": 1}'], HOSTED)
    try:
        task_id = first.submit("Which is bigger, Paris or Rome?", output_type=Local).task_id
        assert first.handle(task_id).result(timeout=30).status == "escalated"
    finally:
        first.shutdown()
    monkeypatch.setattr(agents.outputs, "_LIVE", {})
    second = _orch(tmp_path, [], HOSTED)
    try:
        with pytest.raises(OutputTypeError, match="cannot be imported here"):
            second.respond(task_id, "try again")
    finally:
        second.shutdown()


def test_a_plan_from_the_cache_still_has_its_output_validated(tmp_path):
    roles: list[str] = []
    reply = script(['{"bigger": "Rome"}', '{"bigger": "Rome", "difference_millions": 0.7}', '{"bigger": "Rome"}',
                    '{"bigger": "Rome", "difference_millions": 0.5}'], HOSTED)

    def counted(request: LLMRequest) -> str:
        roles.append(request.role)
        return reply(request)

    orch = Orchestrator(llm=FunctionLLM(counted), tools=[population], runtime="inprocess",
                        config=RuntimeConfig(store_path=tmp_path / "t.db", plan_cache=True))
    try:
        first = orch.run("Which is bigger, Paris or Rome?", timeout=30, output_type=CityDiff)
        planned = roles.count("planner")
        second = orch.run("Which is bigger, Paris or Rome?", timeout=30, output_type=CityDiff)
    finally:
        orch.shutdown()
    assert first.output == CityDiff(bigger="Rome", difference_millions=0.7)
    assert roles.count("planner") == planned  # the second plan came from the cache
    assert second.output == CityDiff(bigger="Rome", difference_millions=0.5)  # repaired like the first
