"""The case files (``cases/<role>.jsonl``): the case types, and loading them with every mistake named."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import ValidationError

from agents.config import RuntimeConfig
from agents.roles.messages import StepView
from planning.errors import PlanningError
from planning.models import Plan, ReflectionAction, Route
from planning.validate import validate_plan

__all__ = [
    "ACTIONS",
    "CASES_DIR",
    "EXPECTED_REFLECTION",
    "MIN_CASES",
    "ROLES",
    "ROUTES",
    "STEP_STATUSES",
    "Case",
    "CaseError",
    "PlannerCase",
    "ReflectorCase",
    "RoleName",
    "RouterCase",
    "load_cases",
]

RoleName = Literal["router", "planner", "reflector"]
ROLES: tuple[RoleName, ...] = ("router", "planner", "reflector")
CASES_DIR = Path(__file__).parent / "cases"
MIN_CASES = 20
ROUTES: tuple[str, ...] = get_args(Route)
ACTIONS: tuple[str, ...] = get_args(ReflectionAction)
EXPECTED_REFLECTION = ("accept", "not_accept")
STEP_STATUSES = ("completed", "failed", "skipped", "cancelled")
"""The terminal statuses a step has when the reflector sees it."""


class CaseError(ValueError):
    """A case file is malformed; the message names the file, the line and what to fix."""


@dataclass(frozen=True, slots=True)
class RouterCase:
    id: str
    task: str
    expected: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class PlannerCase:
    id: str
    task: str
    expect_tools: tuple[str, ...] = ()
    min_steps: int = 1
    parallel: bool = False
    """At least two steps depend on nothing (they can start at once)."""
    note: str = ""


@dataclass(frozen=True, slots=True)
class ReflectorCase:
    id: str
    task: str
    plan: Plan
    results: tuple[StepView, ...]
    expected: str
    """``accept`` or ``not_accept``."""
    why: str = ""
    expected_actions: tuple[str, ...] = ()
    """Actions that fit a ``not_accept`` case (informational)."""
    answer_mentions: tuple[tuple[str, ...], ...] = ()
    """For ``accept`` cases: each entry is a figure (any of its spellings) the final answer should state."""


Case = RouterCase | PlannerCase | ReflectorCase


def _req_str(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CaseError(f"{where}: '{key}' must be a non-empty string")
    return value


def _opt_str(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = obj.get(key, "")
    if not isinstance(value, str):
        raise CaseError(f"{where}: '{key}' must be a string")
    return value


def _check_keys(obj: Mapping[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        raise CaseError(f"{where}: unknown key(s) {', '.join(extra)}; allowed: {', '.join(sorted(allowed))}")


def _router_case(obj: Mapping[str, Any], where: str, tool_schemas: Mapping[str, Any] | None) -> RouterCase:
    _check_keys(obj, {"id", "task", "expected", "note"}, where)
    expected = _req_str(obj, "expected", where)
    if expected not in ROUTES:
        raise CaseError(f"{where}: expected route {expected!r} is not one of {', '.join(ROUTES)}")
    return RouterCase(_req_str(obj, "id", where), _req_str(obj, "task", where), expected, _opt_str(obj, "note", where))


def _planner_case(obj: Mapping[str, Any], where: str, tool_schemas: Mapping[str, Any] | None) -> PlannerCase:
    _check_keys(obj, {"id", "task", "expect_tools", "min_steps", "parallel", "note"}, where)
    tools = obj.get("expect_tools", [])
    if not isinstance(tools, list) or not all(isinstance(t, str) and t for t in tools):
        raise CaseError(f"{where}: 'expect_tools' must be a list of tool names")
    if tool_schemas is not None:
        unknown = [t for t in tools if t not in tool_schemas]
        if unknown:
            raise CaseError(f"{where}: expect_tools names unknown tool(s) {', '.join(unknown)}; "
                            f"the tools are {', '.join(tool_schemas)}")
    min_steps = obj.get("min_steps", 1)
    if not isinstance(min_steps, int) or isinstance(min_steps, bool) or min_steps < 1:
        raise CaseError(f"{where}: 'min_steps' must be an integer >= 1")
    parallel = obj.get("parallel", False)
    if not isinstance(parallel, bool):
        raise CaseError(f"{where}: 'parallel' must be true or false")
    return PlannerCase(_req_str(obj, "id", where), _req_str(obj, "task", where), tuple(tools), min_steps, parallel,
                       _opt_str(obj, "note", where))


def _reflector_plan(obj: Mapping[str, Any], where: str, tool_schemas: Mapping[str, Any] | None) -> Plan:
    try:
        plan = Plan.model_validate(obj.get("plan"))
    except ValidationError as exc:
        raise CaseError(f"{where}: 'plan' is not a valid plan: {exc}") from None
    if not plan.steps:
        raise CaseError(f"{where}: 'plan' has no steps")
    if tool_schemas is not None:
        try:
            validate_plan(plan, tool_schemas, max_steps=RuntimeConfig().max_steps)
        except PlanningError as exc:
            raise CaseError(f"{where}: the plan does not validate against the tool schemas: {exc}") from None
    return plan


def _step_views(obj: Mapping[str, Any], plan: Plan, where: str) -> list[StepView]:
    """The recorded step results as the reflector sees them: one per plan step, in plan order."""
    raw_results = obj.get("results")
    if not isinstance(raw_results, list) or not raw_results:
        raise CaseError(f"{where}: 'results' must be a non-empty list of step results")
    by_id = {s.step_id: s for s in plan.steps}
    seen: set[int] = set()
    views = []
    for r in raw_results:
        if not isinstance(r, dict):
            raise CaseError(f"{where}: every result must be an object")
        sid = r.get("step_id")
        if sid not in by_id:
            raise CaseError(f"{where}: a result references step {sid!r}, which is not in the plan "
                            f"(steps {sorted(by_id)})")
        if sid in seen:
            raise CaseError(f"{where}: step {sid} has two results")
        seen.add(sid)
        status = r.get("status")
        if status not in STEP_STATUSES:
            raise CaseError(f"{where}: step {sid} has status {status!r}; use one of {', '.join(STEP_STATUSES)}")
        error = r.get("error")
        if status == "completed" and error is not None:
            raise CaseError(f"{where}: completed step {sid} carries an error")
        if status != "completed" and not (isinstance(error, str) and error):
            raise CaseError(f"{where}: {status} step {sid} needs an 'error' text (what the reflector sees)")
        step = by_id[sid]
        views.append(StepView(step_id=sid, description=step.description, tool_name=step.tool_name, status=status,
                              output=r.get("output") if status == "completed" else None, error=error))
    missing = sorted(set(by_id) - seen)
    if missing:
        raise CaseError(f"{where}: plan step(s) {missing} have no result")
    order = {s.step_id: i for i, s in enumerate(plan.steps)}
    views.sort(key=lambda v: order[v.step_id])
    return views


def _expected_actions(obj: Mapping[str, Any], expected: str, where: str) -> list[str]:
    actions = obj.get("expected_actions", [])
    if not isinstance(actions, list) or any(a not in ACTIONS for a in actions):
        raise CaseError(f"{where}: 'expected_actions' must be a list of {', '.join(ACTIONS)}")
    if expected == "accept" and actions and actions != ["accept"]:
        raise CaseError(f"{where}: an accept case cannot list other expected_actions")
    return actions


def _answer_mentions(obj: Mapping[str, Any], expected: str, where: str) -> list[tuple[str, ...]]:
    mentions_raw = obj.get("answer_mentions", [])
    mentions: list[tuple[str, ...]] = []
    if not isinstance(mentions_raw, list):
        raise CaseError(f"{where}: 'answer_mentions' must be a list")
    for m in mentions_raw:
        alts = [m] if isinstance(m, str) else m
        if not isinstance(alts, list) or not alts or not all(isinstance(a, str) and a for a in alts):
            raise CaseError(f"{where}: each answer_mentions entry is a string or a list of alternative strings")
        mentions.append(tuple(alts))
    if mentions and expected != "accept":
        raise CaseError(f"{where}: answer_mentions only make sense for accept cases")
    return mentions


def _reflector_case(obj: Mapping[str, Any], where: str, tool_schemas: Mapping[str, Any] | None) -> ReflectorCase:
    _check_keys(obj, {"id", "task", "plan", "results", "expected", "why", "expected_actions", "answer_mentions"},
                where)
    plan = _reflector_plan(obj, where, tool_schemas)
    views = _step_views(obj, plan, where)
    expected = _req_str(obj, "expected", where)
    if expected not in EXPECTED_REFLECTION:
        raise CaseError(f"{where}: 'expected' must be 'accept' or 'not_accept', not {expected!r}")
    actions = _expected_actions(obj, expected, where)
    mentions = _answer_mentions(obj, expected, where)
    return ReflectorCase(_req_str(obj, "id", where), _req_str(obj, "task", where), plan, tuple(views), expected,
                         _opt_str(obj, "why", where), tuple(actions), tuple(mentions))


_BUILDERS: dict[str, Callable[[Mapping[str, Any], str, Mapping[str, Any] | None], Case]] = {
    "router": _router_case, "planner": _planner_case, "reflector": _reflector_case}


def load_cases(role: str, path: Path | str | None = None, *,
               tool_schemas: Mapping[str, Any] | None = None) -> list[Case]:
    """The cases of ``role`` from ``path`` (default ``cases/<role>.jsonl``), checked. With ``tool_schemas``,
    planner cases' tool names and reflector cases' plans are checked against the real tools too."""
    if role not in _BUILDERS:
        raise CaseError(f"unknown role {role!r}; the roles are {', '.join(ROLES)}")
    file = Path(path) if path is not None else CASES_DIR / f"{role}.jsonl"
    cases: list[Case] = []
    ids: set[str] = set()
    for lineno, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{file.name}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CaseError(f"{where}: not JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise CaseError(f"{where}: a case is one JSON object per line")
        case = _BUILDERS[role](obj, where, tool_schemas)
        if case.id in ids:
            raise CaseError(f"{where}: duplicate case id {case.id!r}")
        ids.add(case.id)
        cases.append(case)
    return cases
