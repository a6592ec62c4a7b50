"""The generality suite itself: its size and coverage, a stable disjoint split, plans that fit their tools'
schemas and run, wrong variants that really are wrong (no Ray, no model)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from agents.tools import ToolRegistry
from benchmarks.generality.model import SHAPES, WRONG_CLASSES, split_of
from benchmarks.generality.scoring import answer_right
from benchmarks.generality.suite import build_suite, select, suite_tools
from planning.models import Plan
from planning.validate import validate_plan

ROOT = Path(__file__).resolve().parents[3]
TASKS = build_suite()


def test_at_least_200_tasks_over_12_shapes_and_4_languages_with_unique_ids():
    assert len(TASKS) >= 200
    assert len({t.id for t in TASKS}) == len(TASKS)
    assert {t.shape for t in TASKS} == set(SHAPES) and len(SHAPES) >= 12
    assert {t.lang for t in TASKS} == {"en", "fr", "de", "es"}
    pairs = Counter((t.shape, t.lang) for t in TASKS)
    assert len(pairs) == len(SHAPES) * 4 and min(pairs.values()) >= 4


def test_every_wrong_class_is_present_and_every_variant_differs_from_the_right_answer():
    counts = Counter(cls for t in TASKS for cls, _ in t.wrong)
    assert set(counts) == set(WRONG_CLASSES) and min(counts.values()) >= 20
    for t in TASKS:
        answers = [w for _, w in t.wrong]
        assert answers and t.answer not in answers and len(set(answers)) == len(answers), t.id


def test_split_is_disjoint_covers_everything_and_both_halves_see_every_shape():
    dev, held = select("dev"), select("heldout")
    assert {t.id for t in dev}.isdisjoint({t.id for t in held})
    assert len(dev) + len(held) == len(TASKS)
    assert min(len(dev), len(held)) >= 0.4 * len(TASKS)
    assert {t.shape for t in dev} == {t.shape for t in held} == set(SHAPES)


def test_split_does_not_depend_on_the_interpreter_hash_seed():
    code = "from benchmarks.generality.suite import select; print(','.join(t.id for t in select('heldout')))"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2")}
    assert len(outs) == 1 and outs.pop().strip() == ",".join(t.id for t in select("heldout"))
    assert split_of(TASKS[0].id) == split_of(TASKS[0].id)


def test_a_limit_takes_an_even_spread_of_the_half():
    some = select("heldout", 24)
    assert len(some) == 24 and len({t.shape for t in some}) >= 10 and {t.split for t in some} == {"heldout"}


def test_every_scripted_plan_validates_against_its_tools_schemas():
    schemas = ToolRegistry(suite_tools()).schemas()
    for t in TASKS:
        plan = Plan.model_validate(t.plan)
        validate_plan(plan, schemas, max_steps=50)
        assert {s.tool_name for s in plan.steps} <= set(schemas), t.id


def test_every_first_call_of_every_plan_runs_on_its_tool():
    tools = {tool.name: tool for tool in suite_tools()}
    for t in TASKS:
        for step in t.plan["steps"]:
            if not step["depends_on"]:
                assert tools[step["tool_name"]](**step["tool_input"]) not in (None, "", []), t.id


def test_right_answers_score_right_and_entity_sign_and_ratio_slips_score_wrong():
    for t in TASKS:
        assert answer_right(t.expect, t.answer), t.id
        for cls, wrong in t.wrong:
            if cls in ("wrong_entity", "wrong_sign", "ratio_inverted"):
                assert not answer_right(t.expect, wrong), (t.id, cls)


@pytest.mark.parametrize("lang,fragment", [("de", "1.512.491 Einwohner"), ("de", "1,51 Millionen"),
                                           ("fr", "522 250 habitants"), ("es", "807.693 habitantes"),
                                           ("fr", "3,9 %")])
def test_tool_outputs_use_each_languages_number_format(lang, fragment):
    tools = {tool.name: tool for tool in suite_tools()}
    outputs = [str(tools[s["tool_name"]](**s["tool_input"])) for t in TASKS if t.lang == lang
               for s in t.plan["steps"] if not s["depends_on"]]
    assert any(fragment in out for out in outputs)


def test_a_decimal_is_never_read_as_grouped_thousands():
    """"0.5" for a ratio of 4.94 was scored right: its dot was also read as a thousands separator (5)."""
    from benchmarks.generality.model import Expect
    from benchmarks.generality.scoring import answer_right, readings

    assert readings("0.5") == {0.5} and readings("12,5") == {12.5} and readings("4,806") == {4806.0, 4.806}
    assert not answer_right(Expect(number=4.94), "0.5")
    assert answer_right(Expect(number=4.94), "4,94") and answer_right(Expect(number=1971689), "1.971.689")
