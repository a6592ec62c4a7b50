"""The reply schemas are generated once and reused: what a caller gets must still be its own (mutating it
changes nothing for the next caller) and equal to a fresh generation. The cycle search skips plans without
dependencies."""

from __future__ import annotations

import pytest

from planning.models import Plan
from planning.parse import drop_titles, inline_refs, json_schema_for, plan_schema, reflection_schema, router_schema
from planning.validate import _find_cycle


@pytest.mark.parametrize("make", [lambda: json_schema_for(Plan), lambda: plan_schema(["b", "a"]),
                                  lambda: plan_schema({"b": {"properties": {"x": {"type": "integer"}}}}),
                                  router_schema, reflection_schema])
def test_each_call_gets_its_own_schema(make):
    first = make()
    expected = make()
    first["properties"].clear()
    first["injected"] = [1]
    again = make()
    assert again == expected and "injected" not in again and again["properties"]


def test_the_cached_schema_equals_a_fresh_generation():
    assert json_schema_for(Plan) == drop_titles(inline_refs(Plan.model_json_schema()))
    names = plan_schema(["b", "a"])["properties"]["steps"]["items"]["properties"]["tool_name"]
    assert names["anyOf"][0]["enum"] == ["a", "b"]
    forms = plan_schema({"b": {}, "a": {}})["properties"]["steps"]["items"]["anyOf"]
    assert [form["properties"]["tool_name"] for form in forms] == [
        {"type": "null"}, {"const": "a"}, {"const": "a"}, {"const": "b"}, {"const": "b"}]


@pytest.mark.parametrize(("deps", "cycle"), [
    ([(1, []), (2, [])], None),
    ([(1, [1]), (2, [2])], None),  # a step naming itself is reported elsewhere, not as a cycle
    ([(1, []), (2, [1])], None),
    ([(1, [2]), (2, [1])], [1, 2]),
])
def test_cycle_search(deps, cycle):
    found = _find_cycle(iter(deps))
    assert (found if found is None else sorted(found)) == cycle
