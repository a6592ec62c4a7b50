"""A complete plan written as a delta against the steps a replan keeps.

A delta replan (``agents/roles/replan.py``) keeps the previous plan's completed steps and asks the model for
the new or changed steps only, numbered after the old ids. ``as_delta`` computes, for a complete new plan,
the delta a model following that instruction would write: steps that repeat a kept call (same tool, same
input, same dependencies once renumbered) are dropped in favour of the kept id; every other step gets a fresh
id from ``start``, with its references renumbered. The simulated benchmark model answers replans with it,
and ``expand`` is its inverse up to ids (property-tested).

    >>> from planning.models import Plan, PlanStep
    >>> old = [PlanStep(step_id=1, description="a", tool_name="lookup", tool_input={"name": "Rome"})]
    >>> new = Plan(steps=[old[0], PlanStep(step_id=2, description="b", tool_name="calc",
    ...                                    tool_input={"e": "{$step_1_result} * 2"}, depends_on=[1])])
    >>> [(s.step_id, s.tool_input, s.depends_on) for s in as_delta(old, new, start=3)]
    [(3, {'e': '{$step_1_result} * 2'}, [1])]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dag.refs import renumber
from planning.models import Plan, PlanStep

__all__ = ["as_delta", "call_key", "expand", "same_call"]


def _call_key(tool_name: str | None, tool_input: Any, depends_on: Sequence[int]) -> str:
    return json.dumps([tool_name, tool_input, sorted(depends_on)], sort_keys=True, default=str)


def call_key(step: PlanStep) -> str:
    """What two steps share when they make the same call (``same_call``), as a hashable value."""
    return _call_key(step.tool_name, step.tool_input, step.depends_on)


def same_call(a: PlanStep, b: PlanStep) -> bool:
    """The same tool on the same input after the same steps: a kept step written out again."""
    return call_key(a) == call_key(b)


def as_delta(kept: Sequence[PlanStep], new: Plan, *, start: int) -> list[PlanStep]:
    """The steps of ``new`` that a delta replan over ``kept`` writes, ids from ``start`` on."""
    by_call: dict[str, list[int]] = {}
    for s in kept:
        by_call.setdefault(_call_key(s.tool_name, s.tool_input, s.depends_on), []).append(s.step_id)
    mapping: dict[int, int] = {}
    delta: list[PlanStep] = []
    for step in new.steps:
        deps = sorted({mapping.get(d, d) for d in step.depends_on})
        tool_input = renumber(step.tool_input, mapping)
        description = renumber(step.description, mapping) if step.tool_name is None else step.description
        # each kept step stands for one step of the new plan (two equal write calls must stay two calls)
        same = by_call.get(_call_key(step.tool_name, tool_input, deps)) if step.tool_name else None
        reused = same.pop(0) if same else None
        if reused is not None:
            mapping[step.step_id] = reused
            continue
        new_id = start + len(delta)
        mapping[step.step_id] = new_id
        delta.append(step.model_copy(update={"step_id": new_id, "tool_input": tool_input, "depends_on": deps,
                                             "description": description}))
    return delta


def expand(kept: Sequence[PlanStep], delta: Sequence[PlanStep]) -> Plan:
    """The whole plan a delta stands for: the kept steps, then the delta's (what the planner role emits)."""
    return Plan(steps=[*kept, *delta])
