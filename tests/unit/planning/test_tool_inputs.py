"""The JSON plan's schema with each tool's own arguments: every plan the validator accepts fits it (the grammar
never forbids a valid plan), and the argument mistakes a tool schema rules out do not."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.tools.builtins.calculator import calculator
from agents.tools.registry import ToolRegistry
from planning.models import Plan, PlanStep
from planning.parse import plan_schema
from planning.tool_inputs import grammar_safe, step_forms, tool_input_schema
from planning.validate import PlanValidationError, validate_plan
from support.tiers import examples

SEARCH = {"type": "object", "properties": {"query": {"type": "string"}, "k": {"type": "integer", "default": 3}},
          "required": ["query"], "additionalProperties": False}
LATENCY = {"type": "object", "properties": {"service": {"type": "string", "enum": ["api", "db"]},
                                            "week": {"type": "integer"}},
           "required": ["service", "week"], "additionalProperties": False}
TOOLS = {"search": SEARCH, "latency": LATENCY, "calculator": calculator.spec.parameters}


def _fits(plan: dict, tools: dict = TOOLS) -> bool:
    return jsonschema.Draft202012Validator(plan_schema(tools)).is_valid(plan)


def test_a_plan_with_references_in_each_kind_of_argument_fits():
    plan = {"steps": [
        {"step_id": 1, "tool_name": "search", "tool_input": {"query": "size of Rome"}},
        {"step_id": 2, "description": "the busiest service", "tool_name": None, "depends_on": [1]},
        {"step_id": 3, "tool_name": "latency", "tool_input": {"service": "$step_2_result", "week": 11},
         "depends_on": [2]},
        {"step_id": 4, "description": "the change", "tool_name": "calculator",
         "tool_input": {"expression": "{$step_3_result} - max($step_1_result.value, 2.5 million)"}, "depends_on": [3]},
    ]}
    assert _fits(plan)


@pytest.mark.parametrize("step", [
    {"step_id": 1, "tool_name": "search", "tool_input": {"q": "Rome"}},  # an argument the tool does not take
    {"step_id": 1, "tool_name": "search", "tool_input": {}},  # a required argument left out
    {"step_id": 1, "tool_name": "latency", "tool_input": {"service": "web", "week": 11}},  # outside the enum
    {"step_id": 1, "tool_name": "latency", "tool_input": {"service": "api", "week": "eleven"}},  # not a number
    {"step_id": 1, "tool_name": "calculator", "tool_input": {"expression": "Q2 - Q1"}},  # names it cannot read
    {"step_id": 1, "tool_name": "calculator", "tool_input": {"expression": "sum({$step_2_result})"}},
    {"step_id": 1, "tool_name": "lookup", "tool_input": {}},  # no such tool
    {"step_id": 1, "tool_name": None, "description": ""},  # a reasoning step that says nothing
])
def test_argument_mistakes_the_tools_rule_out_do_not_fit(step):
    assert not _fits({"steps": [step]})


def test_key_order_follows_the_prompts_description_first_and_depends_on_last():
    for form in step_forms(TOOLS):
        keys = list(form["properties"])
        assert keys[0] == "step_id" and keys[-1] == "depends_on"
        assert set(form["required"]) == set(keys) - {"depends_on", "tool_input" if form["properties"]["tool_name"]
                                                     == {"type": "null"} else ""}
        # converters put required keys first: the required ones must already lead
        assert keys[:len(form["required"])] == form["required"]


def test_a_schema_outside_the_converters_subset_keeps_a_plain_object():
    referenced = {"type": "object", "properties": {"where": {"$ref": "#/$defs/Place"}}, "$defs": {}}
    assert not grammar_safe(referenced)
    assert tool_input_schema(referenced) == {"type": "object"}
    assert tool_input_schema({}) == {"type": "object"}  # no parameters described: nothing to constrain
    assert not grammar_safe({"type": "string", "pattern": "[a-z]+"})  # unanchored: converters refuse it
    assert not grammar_safe({"type": "string", "format": "email"})  # decoded as any string otherwise


@pytest.mark.parametrize(("pattern", "safe"), [
    (r"^[A-Z]-[0-9]+$", True), (r"^\(x\)$", True), (r"^[\[]$", True), (r"^[.$]$", True),
    # llama.cpp's converter copies these escapes into the grammar, whose parser then refuses the whole request
    (r"^\d+$", False), (r"^a\.b$", False), (r"^[\(]$", False), ("^a\\", False),
])
def test_only_patterns_the_converter_keeps_valid_are_constrained(pattern, safe):
    assert grammar_safe({"type": "string", "pattern": pattern}) is safe


def test_names_alone_keep_the_enumerated_form():
    schema = plan_schema(["search", "calculator"])
    assert schema["properties"]["steps"]["items"]["properties"]["tool_name"]["anyOf"][0]["enum"] == [
        "calculator", "search"]


_NAME = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
_REF = st.integers(1, 9).map(lambda n: f"$step_{n}_result")
_SCALAR_SCHEMAS = st.sampled_from([
    ({"type": "string"}, st.text(max_size=12)),
    ({"type": "integer"}, st.integers(-50, 50)),
    ({"type": "number"}, st.floats(-1e6, 1e6, allow_nan=False)),
    ({"type": "boolean"}, st.booleans()),
    ({"type": "string", "enum": ["a", "b"]}, st.sampled_from(["a", "b"])),
    ({"type": "array", "items": {"type": "integer"}}, st.lists(st.integers(0, 9) | _REF, max_size=3)),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}, st.none() | st.integers(0, 9)),
])


@st.composite
def _tool_and_call(draw):
    names = draw(st.lists(_NAME, min_size=1, max_size=4, unique=True))
    params = [draw(_SCALAR_SCHEMAS) for _ in names]
    required = [name for name in names if draw(st.booleans())]
    schema = {"type": "object", "properties": {n: p[0] for n, p in zip(names, params, strict=True)},
              "required": required, "additionalProperties": False}
    args = {}
    for name, (_, values) in zip(names, params, strict=True):
        if name in required or draw(st.booleans()):
            args[name] = draw(_REF) if draw(st.booleans()) else draw(values)
    return schema, args


@settings(max_examples=examples(200), deadline=None)
@given(_tool_and_call())
def test_every_call_the_validator_accepts_fits_the_grammar(tool_and_call):
    """The schema only narrows what validation would refuse anyway: a constrained model loses no valid plan (values
    written in JSON's own types; the validator also takes "3" for a number, the grammar asks for 3)."""
    schema, args = tool_and_call
    refs = sorted({int(v[6]) for v in _strings(args) if v.startswith("$step_")})
    tools = {"t": schema, "r": {"type": "object", "properties": {}, "additionalProperties": False}}
    call = PlanStep(step_id=10, tool_name="t", tool_input=args, depends_on=refs)
    try:
        validate_plan(Plan(steps=[*(PlanStep(step_id=n, tool_name="r") for n in refs), call]), tools, max_steps=20)
    except PlanValidationError:
        return
    assert _fits({"steps": [call.model_dump(exclude_none=True)]}, tools)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_the_registry_schemas_of_the_builtin_tools_are_all_constrained(tmp_path):
    from agents.tools.builtins import builtin_tools

    schemas = ToolRegistry(builtin_tools(tmp_path)).schemas()
    unconstrained = [name for name, schema in schemas.items() if tool_input_schema(schema) == {"type": "object"}]
    assert unconstrained == []


def test_arguments_keep_the_tools_own_order():
    """Key order is decoding order: the model writes the arguments in the order the catalog shows them."""
    tool = {"type": "object", "properties": {"product": {"type": "string"}, "month": {"type": "string"}},
            "required": ["product", "month"]}
    forms = plan_schema({"churn": tool})["properties"]["steps"]["items"]["anyOf"]
    assert list(forms[1]["properties"]["tool_input"]["properties"]) == ["product", "month"]
