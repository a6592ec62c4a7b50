"""The answer of a typed task, streamed (issue 62): ``stream_answer()`` yields its JSON text in pieces that add up to
``result.answer``; ``stream_output()`` yields validated partial values of the output type, the last one
``result.output``; on the hosted (terse) and the embedded (JSON) reply forms, in-process."""

from __future__ import annotations

import asyncio
import dataclasses
import pickle

import pydantic
import pytest
from support import wire
from support.tools import lookup, subtract
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from agents import Orchestrator, RuntimeConfig
from agents.checks import AnswerReview, Reject
from agents.llm import HOSTED, SMALL_LOCAL, FunctionLLM, ModelProfile
from agents.output_stream import NoOutputTypeError, OutputReset
from agents.outputs import OutputTypeError

TASK = "Which is bigger, Paris or Rome, and by how much?"
PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}))
PROFILES = pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=["hosted-terse", "embedded-json"])
_HEAD = '{"scores":{"completeness":5,"correctness":5,"format":5},"overall_pass":true,"action":"accept",' \
        '"retry_details":null,"feedback":"","answer":'


class CityDiff(pydantic.BaseModel):
    bigger: str
    difference_millions: float


@dataclasses.dataclass
class CityPair:
    bigger: str
    smaller: str


class CityFacts(TypedDict, total=False):
    bigger: str
    cities: list[str]
    population: float


def review(profile: ModelProfile, written: str) -> str:
    """An accept whose answer is ``written`` as the model writes it: compact, a figure with a trailing zero."""
    if profile.reply_form("reflector") == "terse":
        return f"accept 5 5 5\nanswer: {written}"
    return f"{_HEAD}{written}}}"  # the JSON value itself, as the output's schema asks


def _orch(tmp_path, reviews: list[str], profile: ModelProfile, checks=()) -> Orchestrator:
    replies = iter(reviews)

    def model(request) -> str:
        return next(replies) if request.role == "reflector" else {"router": wire.route(), "planner": PLAN}[request.role]

    return Orchestrator(llm=FunctionLLM(model, stream_chunk_size=3, profile=profile), tools=[lookup, subtract],
                        runtime="inprocess", checks=list(checks),
                        config=RuntimeConfig(store_path=tmp_path / "t.db", task_timeout_s=30))


CASES = [
    (CityDiff, '{"bigger":"Rome","difference_millions":0.70}', CityDiff(bigger="Rome", difference_millions=0.7)),
    (CityPair, '{"bigger":"Rome","smaller":"Paris"}', CityPair(bigger="Rome", smaller="Paris")),
    (CityFacts, '{"bigger":"Rome","cities":["Rome","Paris"],"population":2.80}',
     {"bigger": "Rome", "cities": ["Rome", "Paris"], "population": 2.8}),
    (list[str], '["Rome","Paris","Milan"]', ["Rome", "Paris", "Milan"]),
    (list[int], '[12,345]', [12, 345]),
    (int, "345", 345),
]
CASE_IDS = ["model", "dataclass", "typeddict", "list-str", "list-int", "int"]


@PROFILES
@pytest.mark.parametrize(("output_type", "written", "expected"), CASES, ids=CASE_IDS)
def test_a_typed_answer_streams_as_json_text_that_adds_up_to_the_answer(tmp_path, profile, output_type, written,
                                                                       expected) -> None:
    orch = _orch(tmp_path, [review(profile, written)], profile)
    try:
        handle = orch.submit(TASK, output_type=output_type)
        pieces = list(handle.stream_answer())
        result = handle.result(timeout=30)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    assert result.output == expected
    assert all(isinstance(p, str) for p in pieces), pieces  # no reset: what streamed is the answer
    assert "".join(pieces) == result.answer  # type: ignore[arg-type]
    if output_type is not int:
        assert len(pieces) >= 3, pieces  # written as the reviewer writes it, not whole at the end


@PROFILES
@pytest.mark.parametrize(("output_type", "written", "expected"), CASES, ids=CASE_IDS)
def test_stream_output_yields_validated_values_the_last_of_them_the_output(tmp_path, profile, output_type, written,
                                                                           expected) -> None:
    orch = _orch(tmp_path, [review(profile, written)], profile)
    try:
        handle = orch.submit(TASK, output_type=output_type)
        values = list(handle.stream_output())
        result = handle.result(timeout=30)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    assert values and values[-1] == result.output == expected
    assert all(a != b for a, b in zip(values, values[1:]))  # a value only when it changed
    match expected:
        case list():  # grows item by item; a number only once written whole (no [1], no [12, 3])
            assert values == [expected[:n] for n in range(len(expected) + 1)]
        case dict():  # a TypedDict whose keys are not required grows key by key, each value whole
            assert len(values) >= 4 and values[0] == {}
            assert all(v.get("population") in (None, 2.8) for v in values)
        case _:  # a model or a dataclass validates once whole; a scalar only at the end
            assert values == [expected]


def needs_milan(review: AnswerReview) -> None:
    if "Milan" not in (review.output or []):
        raise Reject("the list must name Milan")


@PROFILES
def test_a_vetoed_accept_resets_the_values_and_a_new_stream_follows(tmp_path, profile) -> None:
    first, second = review(profile, '["Rome","Paris"]'), review(profile, '["Rome","Paris","Milan"]')
    orch = _orch(tmp_path, [first, second, second], profile, checks=[needs_milan])
    try:
        handle = orch.submit(TASK, output_type=list[str])
        values = list(handle.stream_output())
        result = handle.result(timeout=30)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    resets = [i for i, v in enumerate(values) if isinstance(v, OutputReset)]
    assert len(resets) == 1, values
    assert values[:resets[0]] == [[], ["Rome"], ["Rome", "Paris"]]
    assert values[resets[0]].reason
    assert values[resets[0] + 1:] == [[], ["Rome"], ["Rome", "Paris"], ["Rome", "Paris", "Milan"]]
    assert values[-1] == result.output


def test_astream_output_yields_the_same(tmp_path) -> None:
    orch = _orch(tmp_path, [review(HOSTED, '["Rome","Paris"]')], HOSTED)

    async def main() -> list[object]:
        handle = orch.submit(TASK, output_type=list[str])
        return [value async for value in handle.astream_output()]

    try:
        values = asyncio.run(main())
    finally:
        orch.shutdown()
    assert values == [[], ["Rome"], ["Rome", "Paris"]]


def test_without_an_output_type_stream_output_says_to_pass_one(tmp_path) -> None:
    orch = _orch(tmp_path, [review(HOSTED, "Rome, by 0.7 million."), review(HOSTED, '["Rome","Paris"]')], HOSTED)
    try:
        untyped = orch.submit(TASK)
        with pytest.raises(NoOutputTypeError, match="output_type=") as raised:
            untyped.stream_output()  # at the call, not at the first value
        assert isinstance(raised.value, OutputTypeError)
        assert untyped.result(timeout=30).status == "accepted"
        typed = orch.submit(TASK, output_type=list[str])
        later = orch.handle(typed.task_id)  # a handle the caller did not submit with: it does not know the type
        with pytest.raises(NoOutputTypeError):
            later.stream_output()
        values = list(later.stream_output(output_type=list[str]))
    finally:
        orch.shutdown()
    assert values[-1] == ["Rome", "Paris"]
    back = pickle.loads(pickle.dumps(raised.value))
    assert type(back) is NoOutputTypeError and str(back) == str(raised.value)
