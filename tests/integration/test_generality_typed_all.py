"""Issue 62's target on the whole generality suite, both halves: every task, given ``output_type`` of its answer's
shape, returns a validated ``result.output`` equal to the expected value, in both reply forms, with every role
scripted (no Ray, no model; ~10 s: the fast tier runs a sample, tests/unit/benchmarks/test_generality_typed.py)."""

from __future__ import annotations

import pytest

from benchmarks.generality.measure import config_for
from benchmarks.generality.scripted import run_scripted
from benchmarks.generality.suite import select, suite_tools
from benchmarks.generality.typed import expected_value
from benchmarks.generality.typed_measure import PROFILES, typed_script

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("half", ["dev", "heldout"])
@pytest.mark.parametrize("profile", list(PROFILES))
def test_every_task_of_the_half_returns_its_expected_value_typed(half, profile, tmp_path):
    config = config_for("default", tmp_path / "t.db")
    wrong = []
    for task in select(half):
        out = run_scripted(typed_script(task), suite_tools(), config, PROFILES[profile])
        if not (out.schema_shown and out.output == expected_value(task.expect)):
            wrong.append((task.id, out.status, out.stopped_reason, out.feedback[:120]))
    assert not wrong
