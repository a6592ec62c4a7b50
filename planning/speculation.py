"""Which steps of a cached plan may start before the planner writes them, and when a started call's result may
stand in for the planner's step. Pure: no I/O, no clock; the engine's side is ``agents.engine.speculation``.

A step is *speculable* when running it early can change nothing but when it runs: its tool only reads
(permission ``read``), is idempotent, needs no human, takes no idempotency key (the key names the step), and
its arguments are fully known from the task: no ``$step_N_result`` reference and no ``depends_on`` (a
dependency may be a write the read must follow, and a reference's value is not known before its step ran —
speculating on a speculated read's output would stack one guess on another for a step that is cheap once its
input is there). A speculated call is *used* for a planner's step only when it is the same call: the same tool
and the same arguments as canonical JSON (``1`` and ``1.0``, ``true`` and ``1`` differ), at the step's first
attempt with no reviewer's change.

    >>> from planning.models import Plan
    >>> plan = Plan.model_validate({"steps": [
    ...     {"step_id": 1, "tool_name": "lookup", "tool_input": {"city": "Paris"}},
    ...     {"step_id": 2, "tool_name": "save", "tool_input": {"text": "x"}},
    ...     {"step_id": 3, "tool_name": "calc", "tool_input": {"e": "$step_1_result * 2"}, "depends_on": [1]}]})
    >>> facts = {"lookup": ToolFacts(), "calc": ToolFacts(), "save": ToolFacts(read=False, idempotent=False)}
    >>> [s.step_id for s in speculable_steps(plan.steps, facts.get)]
    [1]
    >>> call_key("lookup", {"city": "Paris"}) == call_key("lookup", {"city": "Paris"})
    True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from dag.refs import references
from planning.models import PlanStep

__all__ = ["MAX_SPECULATED", "ToolFacts", "call_key", "may_use", "speculable", "speculable_steps"]

MAX_SPECULATED = 16
"""At most this many calls started early per task: a cached plan of many reads must not flood the executors
with calls the planner may not ask for."""


@dataclass(frozen=True, slots=True)
class ToolFacts:
    """What speculation needs to know of a tool (from its ``ToolSpec``)."""

    read: bool = True
    """Its permission is ``read``."""
    idempotent: bool = True
    needs_human: bool = False
    """``requires_confirmation``: it waits for a human's approval before it runs."""
    takes_key: bool = False
    """It receives the step's idempotency key, which names the step (another step id, another key)."""


def call_key(tool_name: str, tool_input: Any) -> str:
    """The call as canonical JSON: equal keys, the same call."""
    return json.dumps([tool_name, tool_input], sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False)


def speculable(step: PlanStep, facts: ToolFacts | None) -> bool:
    """Whether ``step`` may run before the planner writes it (see the module's rule). An unknown tool never."""
    if step.tool_name is None or facts is None or step.depends_on:
        return False
    if not facts.read or not facts.idempotent or facts.needs_human or facts.takes_key:
        return False
    if references(step.tool_input):
        return False
    try:
        call_key(step.tool_name, step.tool_input)
    except (TypeError, ValueError):  # not JSON (NaN, an object): it could never be matched
        return False
    return True


def speculable_steps(steps: Iterable[PlanStep], facts: Callable[[str], ToolFacts | None], *,
                     limit: int = MAX_SPECULATED) -> tuple[PlanStep, ...]:
    """The steps to start early, in plan order: speculable ones, one per distinct call, at most ``limit``."""
    out: list[PlanStep] = []
    seen: set[str] = set()
    for step in steps:
        if len(out) >= limit:
            break
        if step.tool_name is None or not speculable(step, facts(step.tool_name)):
            continue
        key = call_key(step.tool_name, step.tool_input)
        if key not in seen:
            seen.add(key)
            out.append(step)
    return tuple(out)


def may_use(step: PlanStep, *, attempt: int, modification: str | None, plan_version: int) -> str | None:
    """The call key under which a speculated result may serve this dispatch of ``step``, or None: only the first
    attempt of a step of the first plan, unchanged by a reviewer, with its arguments fully known (the same rule as
    for starting it: a step with references or dependencies is never served)."""
    if attempt != 1 or modification is not None or plan_version != 1 or step.tool_name is None:
        return None
    if step.depends_on or references(step.tool_input):
        return None
    try:
        return call_key(step.tool_name, step.tool_input)
    except (TypeError, ValueError):
        return None
