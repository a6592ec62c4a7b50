"""``agents.output_stream.output_values``, the reader behind ``stream_output()``: for any cut of a valid JSON text
into pieces, the last value is the whole text validated, each value before it is part of that one (an item or a
number is never shown half-written), and a reset voids what came before it."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict

from agents.answer_stream import AnswerReset
from agents.output_stream import OutputReset, output_values
from agents.outputs import OutputInvalid, OutputTypeError


class Point(pydantic.BaseModel):
    name: str
    x: float
    tags: list[str] = []


class Facts(TypedDict, total=False):
    name: str
    counts: dict[str, int]
    ratio: float


_TEXT = st.text(max_size=8)
_FLOAT = st.floats(allow_nan=False, allow_infinity=False)
VALUES: list[tuple[Any, st.SearchStrategy[Any]]] = [
    (list[str], st.lists(_TEXT, max_size=6)),
    (dict[str, int], st.dictionaries(_TEXT, st.integers(), max_size=6)),
    (list[Point], st.lists(st.builds(lambda n, x, t: {"name": n, "x": x, "tags": t}, _TEXT, _FLOAT,
                                     st.lists(_TEXT, max_size=3)), max_size=4)),
    (Facts, st.fixed_dictionaries({}, optional={"name": _TEXT, "counts": st.dictionaries(_TEXT, st.integers()),
                                                "ratio": _FLOAT})),
    (Point, st.builds(lambda n, x: {"name": n, "x": x}, _TEXT, _FLOAT)),
    (int, st.integers()),
]
_SPACING = st.sampled_from([(",", ":"), (", ", ": "), (" ,\n ", " :  ")])


def _cut(text: str, data: st.DataObject) -> list[str]:
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=12))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def _part_of(value: Any, whole: Any) -> bool:
    """``value`` shows only what ``whole`` has: a list's first items, a dict's keys with their values (each part
    of the whole's), a model as it is or with fields still at their defaults."""
    match value:
        case list():
            return len(value) <= len(whole) and all(_part_of(v, w) for v, w in zip(value, whole))
        case dict():
            return all(k in whole and _part_of(v, whole[k]) for k, v in value.items())
        case pydantic.BaseModel():
            return all(_part_of(getattr(value, f), getattr(whole, f)) or getattr(value, f) == info.default
                       for f, info in type(value).model_fields.items())
        case _:
            return value == whole


@settings(max_examples=25, deadline=None)
@pytest.mark.parametrize(("output_type", "strategy"), VALUES, ids=lambda v: getattr(v, "__name__", None))
@given(data=st.data(), spacing=_SPACING)
def test_any_cut_of_a_json_text_ends_in_its_validation(output_type, strategy, data, spacing) -> None:
    text = json.dumps(data.draw(strategy), separators=spacing, ensure_ascii=data.draw(st.booleans()))
    whole = pydantic.TypeAdapter(output_type).validate_json(text)
    values = list(output_values(_cut(text, data), output_type))
    assert values[-1] == whole
    assert not any(isinstance(v, OutputReset) for v in values)
    assert all(a != b for a, b in zip(values, values[1:]))
    assert all(_part_of(v, whole) for v in values), values
    if output_type is int:
        assert values == [whole]  # a scalar's partial text is no value of it


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_reset_voids_the_values_before_it(data) -> None:
    first, second = json.dumps(data.draw(st.lists(_TEXT, max_size=4))), json.dumps(data.draw(st.lists(_TEXT)))
    values = list(output_values([*_cut(first, data), AnswerReset("vetoed"), *_cut(second, data)], list[str]))
    resets = [i for i, v in enumerate(values) if isinstance(v, OutputReset)]
    assert resets == [next(i for i, v in enumerate(values) if v == OutputReset("vetoed"))]
    assert values[resets[0] - 1] == json.loads(first)  # a reset follows a value: [] at least, for any list
    assert values[-1] == json.loads(second)
    assert all(_part_of(v, json.loads(second)) for v in values[resets[0] + 1:])


def test_a_stream_voided_at_its_end_has_no_last_value() -> None:
    # a task that ended without accepting: the answer stream ends with a reset, and nothing validates
    assert list(output_values(['["Ro', 'me"]', AnswerReset("the task ended escalated")], list[str])) == [
        [], ["Rome"], OutputReset("the task ended escalated")]
    assert list(output_values([AnswerReset("nothing streamed")], list[str])) == []


def test_an_answer_that_is_not_the_type_is_said_so_at_the_end() -> None:
    with pytest.raises(OutputInvalid, match="x"):
        list(output_values(['{"name": "a"}'], Point))


def test_a_type_pydantic_cannot_validate_is_refused_before_reading() -> None:
    with pytest.raises(OutputTypeError, match="not a type pydantic can validate"):
        output_values(iter(()), object())
