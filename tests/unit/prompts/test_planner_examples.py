"""The worked examples in the embedded planner's templates are plans the product itself accepts: a small model
copies their form, so one with a dangling reference or a step that uses a result it does not wait for would teach
that mistake."""

from __future__ import annotations

import re

import pytest

from planning.parse import parse_plan
from planning.validate import validate_plan
from prompts import load_prompt

_EXAMPLE = re.compile(r'^(\{"(?:needs|steps)".*?^\]\})', re.M | re.S)
_TOOLS = re.compile(r"\b(\w+)\((\w+)(?:\)| )")  # "search(query)", "country_profile(country) -> text"


def _examples(version: str) -> list[tuple[str, dict[str, dict]]]:
    text = dict(load_prompt("planner", version).sections)["system"]
    found = []
    for block in text.split("Example. ")[1:]:
        plan = _EXAMPLE.search(block)
        assert plan is not None, block[:200]
        header = block[: plan.start()]
        tools = {name: {"type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]}
                 for name, arg in _TOOLS.findall(header.split(" with tools ", 1)[1])}
        found.append((plan.group(1), tools))
    return found


@pytest.mark.parametrize("version", ["v10", "v11", "v12", "v13"])
def test_every_worked_example_is_a_valid_plan(version):
    examples = _examples(version)
    assert examples
    for text, tools in examples:
        plan = parse_plan(text)
        validate_plan(plan, tools, max_steps=50)
        assert {s.tool_name for s in plan.steps} - {None} <= set(tools)


def test_v12_adds_a_total_over_a_profile_tool_named_for_no_fact():
    _, (second_text, second) = _examples("v12")
    assert set(second) == {"country_profile", "calculator"}
    assert '"expression": "{$step_1_result} + {$step_2_result}"' in second_text
