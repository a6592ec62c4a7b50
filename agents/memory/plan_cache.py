"""Plan templates (episodic memory): lift an accepted task's literals out of its plan, refill them for a new
task of the same shape. Pure: no I/O, no clock, no LLM.

The template rule: a literal of the task (``literals.extract_literals``: quoted text, numbers, capitalised
names) that also appears in the plan's ``tool_input`` values becomes a slot; every occurrence of it in the
inputs and step descriptions is replaced by the slot (inside ``$step_N_result`` references never). Literals the
plan does not use stay constants of the shape: a new task must repeat them to match. A new task matches when
it has the same shape key and the same constants; it is *filled by code* when every slot gets exactly one value
of the right type and the plan spells no slot value in a way code cannot substitute (say, "paris" for "Paris");
otherwise the planner gets the template to adapt.

Example:
    >>> plan = Plan.model_validate({"steps": [
    ...     {"step_id": 1, "description": "population of Paris", "tool_name": "lookup", "tool_input": {"city": "Paris"}},
    ...     {"step_id": 2, "description": "population of Rome", "tool_name": "lookup", "tool_input": {"city": "Rome"}}]})
    >>> template = extract_template("Which is bigger, Paris or Rome?", plan)
    >>> [s.tool_input["city"] for s in fill(template, "Which is bigger, Berlin or Vienna?").steps]
    ['Berlin', 'Vienna']
    >>> fill(template, "How far is Paris from Rome?") is None
    True
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from agents.memory._template_nodes import (
    Node,
    StepTemplate,
    TConst,
    TDict,
    TList,
    TNum,
    TText,
    build,
    node_from_json,
    node_to_json,
    render_node,
    spelled_elsewhere,
)
from agents.memory.literals import LiteralKind, TaskLiteral, extract_literals, parse_number, shape_key
from planning.models import Plan

__all__ = ["Adapt", "Filled", "NoMatch", "PlanTemplate", "Reuse", "Slot", "bind", "extract_template", "fill",
           "plan_reuse", "render_for_planner", "template_from_json", "template_id", "template_to_json"]


@dataclass(frozen=True, slots=True)
class Slot:
    """A parameter of a template: the literal's kind and its value in the task the template came from."""

    kind: LiteralKind
    example: str


@dataclass(frozen=True, slots=True)
class PlanTemplate:
    """A plan with its task's literals lifted into slots, and what a task must look like to reuse it.

    ``positions[i]`` says what the task's i-th literal is: a slot index, or the constant text it must repeat.
    ``fillable`` is False (with ``reason``) when code cannot fill it for new values; the planner adapts it.
    """

    key: str
    example_task: str
    slots: tuple[Slot, ...]
    positions: tuple[int | str, ...]
    kinds: tuple[LiteralKind, ...]
    steps: tuple[StepTemplate, ...]
    fillable: bool = True
    reason: str = ""

    @property
    def tools(self) -> frozenset[str]:
        return frozenset(s.tool_name for s in self.steps if s.tool_name is not None)


@dataclass(frozen=True, slots=True)
class Filled:
    """Reuse decision: the plan, filled by code; the planner call is skipped."""

    plan: Plan


@dataclass(frozen=True, slots=True)
class Adapt:
    """Reuse decision: the task has the template's shape but code cannot fill it; ``guidance`` is the text
    the planner gets (the template and the likely slot values) to adapt instead of planning from scratch."""

    guidance: str
    reason: str


@dataclass(frozen=True, slots=True)
class NoMatch:
    """Reuse decision: the task does not have the template's shape."""

    reason: str


Reuse = Filled | Adapt | NoMatch


def _slot_literals(literals: tuple[TaskLiteral, ...], plan: Plan) -> list[TaskLiteral]:
    """The task's distinct literals that the plan's tool inputs use (first occurrence of each text)."""
    seen: dict[str, TaskLiteral] = {}
    for lit in literals:
        seen.setdefault(lit.text, lit)
    candidates = list(seen.values())
    used: set[int] = set()
    for step in plan.steps:
        build(step.tool_input, candidates, used)
    return [lit for i, lit in enumerate(candidates) if i in used]


def extract_template(task: str, plan: Plan) -> PlanTemplate:
    """The template of an accepted ``task`` and its wire ``plan`` (see the module's rule)."""
    literals = extract_literals(task)
    slot_lits = _slot_literals(literals, plan)
    index = {lit.text: i for i, lit in enumerate(slot_lits)}
    steps = tuple(StepTemplate(s.step_id, build(s.description, slot_lits, set()), s.tool_name,
                               build(s.tool_input, slot_lits, set()), tuple(s.depends_on)) for s in plan.steps)
    positions = tuple(index.get(lit.text, lit.text) for lit in literals)
    where = spelled_elsewhere(steps, slot_lits)
    return PlanTemplate(
        key=shape_key(task, literals), example_task=task,
        slots=tuple(Slot(lit.kind, lit.text) for lit in slot_lits), positions=positions,
        kinds=tuple(lit.kind for lit in literals), steps=steps, fillable=where is None,
        reason="" if where is None else f"the plan also spells {where} in a form code cannot substitute")


def bind(template: PlanTemplate, task: str) -> tuple[str, ...] | NoMatch | Adapt:
    """The slot values ``task`` gives the template, or why it cannot (``NoMatch``: another shape; ``Adapt``:
    same shape, but a slot would get two different values)."""
    literals = extract_literals(task)
    if shape_key(task, literals) != template.key or tuple(lit.kind for lit in literals) != template.kinds:
        return NoMatch("the task's shape differs from the template's")
    values: list[str | None] = [None] * len(template.slots)
    for lit, position in zip(literals, template.positions, strict=True):
        if isinstance(position, str):
            if lit.text.casefold() != position.casefold():
                return NoMatch(f"the template needs {position!r} where the task has {lit.text!r}")
        elif values[position] not in (None, lit.text):
            return Adapt(render_for_planner(template, task), f"slot {position + 1} would be both "
                         f"{values[position]!r} and {lit.text!r}")
        else:
            values[position] = lit.text
    return tuple(v if v is not None else template.slots[i].example for i, v in enumerate(values))


def _fill_node(node: Node, values: tuple[str, ...], slots: tuple[Slot, ...]) -> Any:
    match node:
        case TConst(value):
            return value
        case TText(parts):
            return "".join(values[p] if isinstance(p, int) else p for p in parts)
        case TNum(slot, as_int):
            number = parse_number(values[slot], as_int)
            if number is None:
                raise _Unfillable(f"slot {slot + 1} needs a whole number, the task gives {values[slot]!r}")
            return number
        case TList(items):
            return [_fill_node(i, values, slots) for i in items]
        case TDict(items):
            return {k: _fill_node(v, values, slots) for k, v in items}
    raise TypeError(f"not a template node: {node!r}")  # pragma: no cover - the node types are closed


class _Unfillable(Exception):
    """Internal control flow of ``plan_reuse``: a value does not fit its slot's type."""


def plan_reuse(template: PlanTemplate, task: str) -> Reuse:
    """What reusing ``template`` for ``task`` means: ``Filled``, ``Adapt`` or ``NoMatch``."""
    values = bind(template, task)
    if isinstance(values, (NoMatch, Adapt)):
        return values
    same_values = values == tuple(s.example for s in template.slots)
    if not template.fillable and not same_values:  # the same values need no substitution at all
        return Adapt(render_for_planner(template, task), template.reason)
    try:
        steps = [{"step_id": s.step_id, "description": _fill_node(s.description, values, template.slots),
                  "tool_name": s.tool_name, "tool_input": _fill_node(s.tool_input, values, template.slots),
                  "depends_on": list(s.depends_on)} for s in template.steps]
    except _Unfillable as exc:
        return Adapt(render_for_planner(template, task), str(exc))
    return Filled(Plan.model_validate({"steps": steps}))


def fill(template: PlanTemplate, task: str) -> Plan | None:
    """The template's plan for ``task`` when code can fill it unambiguously, else None (see ``plan_reuse``
    for the reason and for the text the planner adapts instead)."""
    reuse = plan_reuse(template, task)
    return reuse.plan if isinstance(reuse, Filled) else None


_SLOT_NAME = "<<{kind}_{n}>>"


def render_for_planner(template: PlanTemplate, task: str) -> str:
    """The template as a plan with named slots, and the new task's likely values for them: the planner's
    starting point when code cannot fill the template."""
    names = [_SLOT_NAME.format(kind=s.kind, n=i + 1) for i, s in enumerate(template.slots)]
    lines = [(f"A plan that was accepted for a task of the same shape ({_slotted_task(template, names)!r}), with "
              "its task-specific values written as slots:")]
    for s in template.steps:
        lines.append(f"  step {s.step_id}: {render_node(s.description, names)} | tool {s.tool_name} | input "
                     f"{render_node(s.tool_input, names)} | depends on {list(s.depends_on)}")
    literals = extract_literals(task)
    hints = [f"{names[p]} = {lit.text!r}" for lit, p in zip(literals, template.positions) if isinstance(p, int)]
    if hints and len(literals) == len(template.positions):
        lines.append("In the new task the slots are probably: " + ", ".join(dict.fromkeys(hints)) + ".")
    lines.append("Adapt this plan to the new task (keep what fits, change what differs) and write the whole plan.")
    return "\n".join(lines)


def _slotted_task(template: PlanTemplate, names: list[str]) -> str:
    """The template's example task with each slot's value replaced by the slot's name: the shape in words, without
    the earlier values (they would invite copying; a model that finds its task by its text would find the wrong
    one). Constants stay: a matching task repeats them."""
    task, literals = template.example_task, extract_literals(template.example_task)
    if len(literals) != len(template.positions):  # pragma: no cover - a template's positions come from its task
        return template.key
    out, last = [], 0
    for lit, position in zip(literals, template.positions):
        if isinstance(position, int):
            out += [task[last:lit.start], names[position]]
            last = lit.end
    return "".join(out) + task[last:]


def template_to_json(template: PlanTemplate) -> str:
    """Canonical JSON of a template (what the cache stores; its hash is the template id)."""
    return json.dumps({
        "key": template.key, "example_task": template.example_task,
        "slots": [[s.kind, s.example] for s in template.slots], "positions": list(template.positions),
        "kinds": list(template.kinds), "fillable": template.fillable, "reason": template.reason,
        "steps": [{"step_id": s.step_id, "description": node_to_json(s.description), "tool_name": s.tool_name,
                   "tool_input": node_to_json(s.tool_input), "depends_on": list(s.depends_on)} for s in template.steps],
    }, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def template_from_json(text: str) -> PlanTemplate:
    data = json.loads(text)
    return PlanTemplate(
        key=data["key"], example_task=data["example_task"], slots=tuple(Slot(k, e) for k, e in data["slots"]),
        positions=tuple(data["positions"]), kinds=tuple(data["kinds"]), fillable=data["fillable"],
        reason=data["reason"],
        steps=tuple(StepTemplate(s["step_id"], node_from_json(s["description"]), s["tool_name"],
                                 node_from_json(s["tool_input"]), tuple(s["depends_on"])) for s in data["steps"]))


def template_id(template: PlanTemplate) -> str:
    """Stable id: the same task shape with the same plan structure is one template, whichever task it came from
    (the example task and its literal values are not part of the id)."""
    canonical = json.loads(template_to_json(template))
    for field in ("example_task", "slots", "fillable", "reason"):
        canonical.pop(field)
    canonical["positions"] = [p if isinstance(p, int) else p.casefold() for p in canonical["positions"]]
    return "tpl-" + hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()[:16]
