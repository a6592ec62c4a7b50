"""Meaning checks of a plan, with messages a model can act on in its repair round.

``validate_step`` runs on each step as it streams in (a dependency on a step that has not arrived yet is
allowed to be pending); ``validate_plan`` runs on the whole plan and finds everything, including what
only the whole plan can show (dependencies that never arrived, cycles).

    >>> from planning.models import Plan, PlanStep
    >>> plan = Plan(steps=[PlanStep(step_id=1, tool_name="search", tool_input={"q": "$step_2_result"})])
    >>> try:
    ...     validate_plan(plan, {"search": {"type": "object", "properties": {"q": {"type": "string"}}}}, max_steps=5)
    ... except PlanValidationError as err:
    ...     print(err.problems[0].message)
    step 1 uses $step_2_result, but the plan has no step 2; refer only to steps of the plan (listing each one in depends_on), or add the step that produces this value.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from dag.refs import references
from planning.errors import PlanValidationError
from planning.models import Plan, PlanStep

__all__ = [
    "PlanProblem",
    "PlanValidationError",
    "ProblemCode",
    "ToolSchemas",
    "answer_draft",
    "check_arguments",
    "omit_null_optionals",
    "validate_plan",
    "validate_step",
]

ToolSchemas = Mapping[str, Mapping[str, Any]]


class ProblemCode(enum.StrEnum):
    EMPTY_PLAN = "empty_plan"
    TOO_MANY_STEPS = "too_many_steps"
    DUPLICATE_STEP_ID = "duplicate_step_id"
    SELF_DEPENDENCY = "self_dependency"
    UNKNOWN_DEPENDENCY = "unknown_dependency"
    CYCLE = "cycle"
    UNKNOWN_TOOL = "unknown_tool"
    UNDECLARED_REFERENCE = "undeclared_reference"
    INVALID_ARGUMENTS = "invalid_arguments"
    REJECTED_CALL = "rejected_call"
    """A replan repeats a call the tool already rejected in this task (``planning.rejected``)."""
    BLIND_CALL = "blind_call"
    """A call whose result cannot depend on the task (``planning.blind_calls``); asked about once."""


@dataclass(frozen=True, slots=True)
class PlanProblem:
    code: ProblemCode
    message: str
    step_id: int | None = None


def validate_plan(plan: Plan, tools: ToolSchemas, *, max_steps: int, completed: Collection[int] = ()) -> None:
    """Raise PlanValidationError listing every problem of the whole plan; return None when it is sound.

    ``completed``: ids of steps finished under an earlier plan that this plan may depend on.
    """
    problems: list[PlanProblem] = []
    if not plan.steps:
        problems.append(PlanProblem(ProblemCode.EMPTY_PLAN, "the plan has no steps; add at least one step."))
    if len(plan.steps) > max_steps:
        problems.append(PlanProblem(ProblemCode.TOO_MANY_STEPS, f"the plan has {len(plan.steps)} steps; the limit "
                                    f"is {max_steps}. Merge steps or drop the ones the task does not need."))
    ids = [s.step_id for s in plan.steps]
    seen: set[int] = set()
    for sid in ids:
        if sid in seen:
            problems.append(_duplicate(sid))
        seen.add(sid)
    known = set(ids) | set(completed)
    for step in plan.steps:
        problems.extend(_step_problems(step, tools, known))
        for dep in step.depends_on:
            if dep != step.step_id and dep not in known:
                problems.append(_unknown_dependency(step.step_id, dep))
    cycle = _find_cycle((s.step_id, s.depends_on) for s in plan.steps)
    if cycle:
        problems.append(_cycle(cycle))
    if problems:
        raise PlanValidationError(tuple(problems))


def validate_step(step: PlanStep, known: Mapping[int, PlanStep], tools: ToolSchemas, *, max_steps: int,
                  completed: Collection[int] = (), waited_for: Collection[int] | None = None) -> None:
    """Check one streamed step against the steps already accepted (``known``). Dependencies on ids that
    have not arrived are pending, not errors; ``validate_plan`` settles them at the end. ``waited_for``: the
    ids the known steps depend on, kept by a caller that streams many steps (else computed, O(known))."""
    problems: list[PlanProblem] = []
    if len(known) + 1 > max_steps:
        problems.append(PlanProblem(ProblemCode.TOO_MANY_STEPS, f"the plan has more than {max_steps} steps; the "
                                    f"limit is {max_steps}. Merge steps or drop the ones the task does not need.",
                                    step.step_id))
    if step.step_id in known:
        problems.append(_duplicate(step.step_id))
    problems.extend(_step_problems(step, tools, {*known, *completed, step.step_id}))
    # The known steps passed this check one by one, so a new cycle must run through the new step, and it
    # can only if some known step waits for it (a forward reference). Without one, skip the graph: a
    # whole-graph search per streamed step made long plans O(n²).
    forward = (step.step_id in waited_for if waited_for is not None
               else any(step.step_id in s.depends_on for s in known.values()))
    if forward:
        deps = {s.step_id: s.depends_on for s in known.values()}
        deps[step.step_id] = step.depends_on
        cycle = _find_cycle(deps.items())
        if cycle:
            problems.append(_cycle(cycle))
    if problems:
        raise PlanValidationError(tuple(problems))


def _duplicate(sid: int) -> PlanProblem:
    return PlanProblem(ProblemCode.DUPLICATE_STEP_ID, f"step_id {sid} is used by more than one step; give every "
                       "step a unique step_id.", sid)


def _cycle(cycle: list[int]) -> PlanProblem:
    path = " -> ".join(str(s) for s in [*cycle, cycle[0]])
    return PlanProblem(ProblemCode.CYCLE, f"steps {path} depend on each other in a cycle; a step may only depend "
                       "on steps that can finish before it starts.", cycle[0])


def _find_cycle(deps: Iterable[tuple[int, Iterable[int]]]) -> list[int] | None:
    edges_of = [(sid, [(d, sid) for d in on if d != sid]) for sid, on in deps]
    if not any(edges for _, edges in edges_of):
        return None  # no dependency, no cycle: a graph library call per plan is not needed to say so
    graph = nx.DiGraph()
    for sid, edges in edges_of:
        graph.add_node(sid)
        graph.add_edges_from(edges)
    try:
        edges = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return None
    return [u for u, _ in edges]


def _unknown_dependency(sid: int, dep: int) -> PlanProblem:
    # "which does not exist" alone: the 1.5B planner, whose calculator step referred to two look-ups it had not
    # written, wrote the same plan again. Saying what the missing step would be gives it something to add.
    return PlanProblem(ProblemCode.UNKNOWN_DEPENDENCY, (
        f"step {sid} depends on step {dep}, which the plan does not have: add step {dep}, the step that produces "
        f"the value step {sid} uses (a look-up with one of the tools), or remove {dep} from step {sid}'s "
        "depends_on."), sid)


def _undeclared(sid: int, ref: int, existing: Collection[int]) -> str:
    # "add 9 to depends_on" for a step 9 that does not exist sent the model after a dependency it cannot have.
    if ref == sid:  # "add 1 to depends_on" would make the step wait for itself (seen: a follow-up's "that result")
        return (f"step {sid} uses its own result ($step_{sid}_result), which does not exist before it runs; write the "
                "value itself (a figure from the task or an earlier turn), or refer to the step that computes it.")
    if ref in existing:
        return f"step {sid} uses $step_{ref}_result but does not list {ref} in depends_on; add {ref} to depends_on."
    return (f"step {sid} uses $step_{ref}_result, but the plan has no step {ref}; refer only to steps of the plan "
            "(listing each one in depends_on), or add the step that produces this value.")


def _step_problems(step: PlanStep, tools: ToolSchemas, existing: Collection[int]) -> list[PlanProblem]:
    from dag.refs import references

    problems: list[PlanProblem] = []
    sid = step.step_id
    if sid in step.depends_on:
        problems.append(PlanProblem(ProblemCode.SELF_DEPENDENCY, f"step {sid} depends on itself; remove {sid} "
                                    "from its depends_on.", sid))
    for ref in sorted(references(step.tool_input)):
        if ref not in step.depends_on:
            problems.append(PlanProblem(ProblemCode.UNDECLARED_REFERENCE, _undeclared(sid, ref, existing), sid))
    if step.tool_name is None:
        return problems
    if step.tool_name not in tools:
        listing = ", ".join(sorted(tools)) or "(no tools)"
        problems.append(PlanProblem(ProblemCode.UNKNOWN_TOOL, f"step {sid} uses unknown tool '{step.tool_name}'; "
                                    f"use one of: {listing}; or null for a reasoning step.", sid))
        return problems
    for issue in check_arguments(step.tool_input, tools[step.tool_name]):
        problems.append(PlanProblem(ProblemCode.INVALID_ARGUMENTS, f"step {sid} ({step.tool_name}): {issue}.", sid))
    return problems


_JSON_TYPE_NAMES = {"string": "a string", "number": "a number", "integer": "an integer", "boolean": "true or false",
                    "array": "an array", "object": "an object", "null": "null"}


def omit_null_optionals(args: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` without the optional arguments given as null where the schema does not allow null: a model
    writes ``"k": null`` to mean "not given" (strict structured-output modes even require it), so the
    parameter's default applies instead of the plan failing validation.

        >>> schema = {"properties": {"query": {"type": "string"}, "k": {"type": "integer", "default": 3}},
        ...           "required": ["query"]}
        >>> omit_null_optionals({"query": "Paris", "k": None}, schema)
        {'query': 'Paris'}
        >>> omit_null_optionals({"query": None}, schema)  # required: left for validation to report
        {'query': None}
    """
    props: Mapping[str, Any] = schema.get("properties", {}) or {}
    required = set(schema.get("required", []) or [])

    def not_given(name: str, value: Any) -> bool:
        prop = props.get(name)
        if value is not None or name in required or not isinstance(prop, Mapping):
            return False
        allowed = _allowed_types(prop)
        return bool(allowed) and "null" not in allowed

    return {name: value for name, value in args.items() if not not_given(name, value)}


def check_arguments(args: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """Problems of literal arguments against a tool's parameter schema: unknown names, missing required
    names, JSON types that cannot fit. ``$step_N_result`` values are skipped: unknown until run time.

    The type check is as lenient as the tool's own (pydantic) validation, so a plan is never rejected for
    something the call would have accepted ("3" for a number), nor for null given to an optional
    parameter (``omit_null_optionals``: the call runs with the default)."""
    from dag.refs import references

    args = omit_null_optionals(args, schema)
    props: Mapping[str, Any] = schema.get("properties", {}) or {}
    issues: list[str] = []
    if schema.get("additionalProperties") is not True:
        for name in args:
            if name not in props:
                expected = ", ".join(props) or "no arguments"
                issues.append(f"unknown argument '{name}' (expected: {expected})")
    for name in schema.get("required", []) or []:
        if name not in args:
            issues.append(f"missing required argument '{name}'")
    for name, value in args.items():
        prop = props.get(name)
        if not isinstance(prop, Mapping) or references(value):
            continue
        allowed = _allowed_types(prop)
        if allowed and not any(_fits(value, t) for t in allowed):
            wanted = " or ".join(_JSON_TYPE_NAMES.get(t, t) for t in allowed)
            got = "null" if value is None else f"{_json_type(value)} {_short(value)}"
            issues.append(f"argument '{name}' should be {wanted}, got {got}")
        elif "enum" in prop and value not in prop["enum"]:
            issues.append(f"argument '{name}' must be one of {', '.join(map(_short, prop['enum']))}; "
                          f"got {_short(value)}")
    return issues


def _allowed_types(prop: Mapping[str, Any]) -> list[str]:
    branches = prop.get("anyOf") or prop.get("oneOf")
    if branches:
        types: list[str] = []
        for branch in branches:
            sub = _allowed_types(branch) if isinstance(branch, Mapping) else []
            if not sub:
                return []  # an untyped branch accepts anything
            types.extend(sub)
        return types
    kind = prop.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return []


def _fits(value: Any, kind: str) -> bool:
    match kind:
        case "string":
            return isinstance(value, str)
        case "boolean":
            return isinstance(value, bool) or (isinstance(value, str) and value.lower() in ("true", "false")) \
                or value in (0, 1)
        case "integer":
            if isinstance(value, bool):
                return False
            if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
                return True
            return isinstance(value, str) and value.strip().lstrip("+-").isdigit()
        case "number":
            if isinstance(value, bool):
                return False
            if isinstance(value, (int, float)):
                return True
            try:
                float(value) if isinstance(value, str) else None
            except ValueError:
                return False
            return isinstance(value, str)
        case "array":
            return isinstance(value, list)
        case "object":
            return isinstance(value, dict)
        case "null":
            return value is None
    return True


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _short(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def answer_draft(answer: str | None, steps: list[PlanStep]) -> str | None:
    """The plan's answer draft when it rests on the plan: it names at least one step, and only steps of the
    plan. A draft that names no step would be an answer written before any result; one naming a step that is
    not there could never be filled."""
    if not answer:
        return None
    named = references(answer)
    return answer if named and named <= {s.step_id for s in steps} else None
