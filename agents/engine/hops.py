"""Reasoning steps that only name something for arithmetic ("the name of the city"): which search a step's
figure is read through, and, with the opt-in numeric check set, which of them code answers in the model's place.
Pure: the plan execution's dispatch (``agents.engine.step_dispatch``) passes its steps, outputs and scheduler
states in.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from agents.checks.numeric.name_hops import title_answer
from agents.engine.runtime import Runtime
from agents.roles.figure_fit import numeric_refs
from planning.models import PlanStep

__all__ = ["names_by_code", "number_slots", "read_through"]


def number_slots(runtime: Runtime, step: PlanStep) -> frozenset[int]:
    """The steps whose outputs ``step``'s call takes where its tool wants a number (``figure_fit.numeric_refs``)."""
    spec = runtime.tool_spec(step.tool_name)
    return frozenset() if spec is None else numeric_refs(spec.parameters, spec.returns or "", step.tool_input)


def read_through(step: PlanStep, steps: Mapping[int, PlanStep], completed: Callable[[int], bool]) -> dict[int, int]:
    """Each dependency of a tool step that is a reasoning step reading exactly one completed tool step → that
    step. A small planner reads a figure through a reasoning step ("the name of the city") that then answers a
    name; the executor reads the figure from the passage of that name instead of failing the step."""
    if step.tool_name is None:
        return {}
    through = {}
    for dep in step.depends_on:
        reasoning = steps.get(dep)
        if reasoning is None or reasoning.tool_name is not None or len(reasoning.depends_on) != 1:
            continue
        source = steps.get(reasoning.depends_on[0])
        if source is not None and source.tool_name is not None and completed(source.step_id):
            through[dep] = source.step_id
    return through


def names_by_code(ready: Iterable[int], steps: Mapping[int, PlanStep], values: Mapping[int, Any],
                  modified: Collection[int], slots: Callable[[PlanStep], frozenset[int]]) -> list[tuple[int, str]]:
    """The ready reasoning steps code answers (``agents.checks.numeric.name_hops.title_answer``), each with its
    answer: a step not changed by the reviewer, reading one completed tool step, whose every user wants a number."""
    answers = []
    for sid in ready:
        step = steps[sid]
        if step.tool_name is not None or sid in modified or len(step.depends_on) != 1:
            continue
        source = steps.get(step.depends_on[0])
        if source is None or source.tool_name is None or source.step_id not in values:
            continue
        consumers = [s for s in steps.values() if sid in s.depends_on]
        title = title_answer(step, values[source.step_id], consumers, number_slots=slots)
        if title is not None:
            answers.append((sid, title))
    return answers
