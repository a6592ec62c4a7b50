"""The worked examples in the embedded planner's templates are plans the product itself accepts: a small model
copies their form, so one with a dangling reference or a step that uses a result it does not wait for would teach
that mistake."""

from __future__ import annotations

import re

import pytest

from agents.llm import HOSTED, SMALL_LOCAL
from planning.parse import parse_plan
from planning.validate import validate_plan
from prompts import load_prompt

_EXAMPLE = re.compile(r'^(\{"steps".*?^\]\})', re.M | re.S)
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


JSON_PLANNERS = sorted({p.prompt("planner") for p in (HOSTED, SMALL_LOCAL) if p.reply_form("planner") == "json"})
"""The JSON-form planner templates a shipped profile uses (the small local model's); the terse one's example:
tests/unit/prompts/test_terse_prompts.py."""


def test_a_shipped_profile_plans_in_the_json_form():
    assert JSON_PLANNERS == ["v10"]


@pytest.mark.parametrize("version", JSON_PLANNERS)
def test_every_worked_example_is_a_valid_plan(version):
    examples = _examples(version)
    assert examples
    for text, tools in examples:
        plan = parse_plan(text)
        validate_plan(plan, tools, max_steps=50)
        assert {s.tool_name for s in plan.steps} - {None} <= set(tools)

