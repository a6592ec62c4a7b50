"""Run the prompt regression set against a local model and write the results.

    python -m benchmarks.prompt_regression.run [--model qwen2.5-coder-1.5b] [--role planner] [--limit N]
        [--case ID] [--prompt planner=v2] [--out benchmarks/results]
    python -m benchmarks.prompt_regression.run --rerender benchmarks/results/prompt-regression-MODEL.json

The embedded llama.cpp server is started once (``agents.llm.local.start_local_llm``, the client the
Orchestrator uses with ``llm=None``) and stopped at the end, also on Ctrl-C, SIGTERM or an error. Every case
goes through the real role class — ``Router``, ``Planner``, ``Reflector`` — built the way
``agents.cluster.actors.create_actors`` builds them for the demo: the built-in tools (``builtin_tools(workspace)``:
calculator, doc_search, run_python, read_file, write_file, list_files), their catalogue text and JSON
Schemas, and the demo's ``RuntimeConfig`` (latest prompt versions unless pinned with ``--prompt``). Nothing
runs a tool: reflector cases carry recorded step results.

Metrics (each case passes or fails; a model reply that stays invalid after the repair round is a failure):

- router: the route production acts on — the model's route after ``effective_route`` (low confidence
  becomes ``clarify``) — equals the expected route; the model's raw route is reported beside it;
- planner: valid plan rate — the Planner yields ``PlanCompleted``, i.e. its streamed output parsed and
  validated against the real tool schemas, possibly after its one repair round (counted). Structural
  expectations (tools used, at least N steps, independent first steps) are reported separately;
- reflector: agreement — ``planning.policy.decide`` (the code that has the last word in production, with
  fresh retry/replan counters) accepts exactly when the case expects acceptance. The raw action's agreement,
  whether the action is one the case lists as fitting, and whether an accepted answer states the expected
  figures are reported beside it.

Results: ``<out>/prompt-regression-<model>.md`` and ``.json`` (``.partial.*`` when interrupted).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import ValidationError

from agents.config import RuntimeConfig
from agents.errors import InvalidLLMOutputError
from agents.llm.base import LLM, LLMError, Usage
from agents.roles.messages import PlanCompleted, PlanFailed, PlanItem, PlanRestarted, StepEmitted, StepView
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router
from agents.tools.registry import ToolRegistry
from planning.errors import PlanningError
from planning.models import Plan, Reflection, ReflectionAction, Route, RouterDecision
from planning.parse import parse_router_decision
from planning.policy import Accept, Escalate, PolicyLimits, ReflectionContext, Replan, RetryStep, decide
from planning.validate import validate_plan
from prompts import load_prompt

__all__ = [
    "CASES_DIR",
    "PLANNER_TARGET",
    "ROLES",
    "CaseError",
    "CaseResult",
    "PlannerCase",
    "ReflectorCase",
    "RouterCase",
    "build_report",
    "build_roles",
    "demo_config",
    "load_cases",
    "main",
    "model_info",
    "prompt_info",
    "regression_tools",
    "render_markdown",
    "rerender",
    "run_cases",
    "run_planner_case",
    "run_reflector_case",
    "run_router_case",
    "score_planner",
    "score_reflector",
    "score_router",
    "summarize",
]

RoleName = Literal["router", "planner", "reflector"]
ROLES: tuple[RoleName, ...] = ("router", "planner", "reflector")
CASES_DIR = Path(__file__).parent / "cases"
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "results"
PLANNER_TARGET = 0.90
"""The issue's target: at least 90% valid plans for the default model."""
MIN_CASES = 20
ROUTES: tuple[str, ...] = get_args(Route)
ACTIONS: tuple[str, ...] = get_args(ReflectionAction)
EXPECTED_REFLECTION = ("accept", "not_accept")
STEP_STATUSES = ("completed", "failed", "skipped", "cancelled")
"""The terminal statuses a step has when the reflector sees it."""
PROMPTS_USED = ("router", "planner", "reflector", "repair")
_ABORT_AFTER_TRANSPORT_ERRORS = 3


# ====================================================================================== cases
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


def _reflector_case(obj: Mapping[str, Any], where: str, tool_schemas: Mapping[str, Any] | None) -> ReflectorCase:
    _check_keys(obj, {"id", "task", "plan", "results", "expected", "why", "expected_actions", "answer_mentions"},
                where)
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
    expected = _req_str(obj, "expected", where)
    if expected not in EXPECTED_REFLECTION:
        raise CaseError(f"{where}: 'expected' must be 'accept' or 'not_accept', not {expected!r}")
    actions = obj.get("expected_actions", [])
    if not isinstance(actions, list) or any(a not in ACTIONS for a in actions):
        raise CaseError(f"{where}: 'expected_actions' must be a list of {', '.join(ACTIONS)}")
    if expected == "accept" and actions and actions != ["accept"]:
        raise CaseError(f"{where}: an accept case cannot list other expected_actions")
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
    order = {s.step_id: i for i, s in enumerate(plan.steps)}
    views.sort(key=lambda v: order[v.step_id])
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


# ====================================================================================== scoring
@dataclass(slots=True)
class CaseResult:
    role: str
    case_id: str
    passed: bool
    expected: str
    got: str
    reason: str = ""
    """Why the case failed (empty when it passed)."""
    latency_s: float = 0.0
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    repaired: bool = False
    """The role needed its one repair round (a second LLM call after unusable output)."""
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _usage_fields(usage: Usage | None) -> dict[str, int]:
    u = usage or Usage()
    return {"llm_calls": u.llm_calls, "input_tokens": u.input_tokens, "output_tokens": u.output_tokens}


def _needed_repair(records: Iterable[Mapping[str, Any]]) -> bool:
    """A repair-round request carries the bad answer back as an assistant message (``repair_messages``)."""
    return any(any(m.get("role") == "assistant" for m in rec.get("messages", ())) for rec in records)


def _last_reply(records: Sequence[Mapping[str, Any]]) -> str:
    return str(records[-1].get("reply_text", "")) if records else ""


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def score_router(case: RouterCase, decision: RouterDecision | None, *, records: Sequence[Mapping[str, Any]] = (),
                 usage: Usage | None = None, error: str | None = None, latency_s: float = 0.0) -> CaseResult:
    """``decision`` is what ``Router.route`` returned (the route production acts on); ``records`` its LLM-call
    records, from which the model's raw route is read. ``decision=None`` with ``error``: no usable reply."""
    repaired = _needed_repair(records)
    base = dict(role="router", case_id=case.id, expected=case.expected, latency_s=latency_s, repaired=repaired,
                **_usage_fields(usage))
    if decision is None:
        return CaseResult(passed=False, got="invalid", reason=f"no usable router decision: {_short(error or '')}",
                          details={"raw_reply": _short(_last_reply(records), 400)}, **base)
    raw_route: str | None = None
    try:
        raw_route = parse_router_decision(_last_reply(records)).route if records else decision.route
    except PlanningError:
        raw_route = None
    details = {"raw_route": raw_route, "confidence": decision.confidence, "model_reason": _short(decision.reason),
               "answer": _short(decision.answer or "")}
    passed = decision.route == case.expected
    reason = ""
    if not passed:
        reason = f"routed {decision.route!r}, expected {case.expected!r}"
        if raw_route and raw_route != decision.route:
            reason += f" (the model said {raw_route!r} with confidence {decision.confidence:.2f}, below the threshold)"
        if decision.reason:
            reason += f"; model's reason: {_short(decision.reason, 120)}"
    return CaseResult(passed=passed, got=decision.route, reason=reason, details=details, **base)


def _structure_problems(case: PlannerCase, plan: Plan) -> list[str]:
    problems = []
    used = {s.tool_name for s in plan.steps if s.tool_name}
    missing = [t for t in case.expect_tools if t not in used]
    if missing:
        problems.append(f"does not use {', '.join(missing)}")
    if len(plan.steps) < case.min_steps:
        problems.append(f"{len(plan.steps)} step(s), expected at least {case.min_steps}")
    if case.parallel and sum(1 for s in plan.steps if not s.depends_on) < 2:
        problems.append("no two steps can start at once (expected independent look-ups)")
    return problems


def _render_plan_compact(plan: Plan) -> list[str]:
    return [f"{s.step_id}. {s.tool_name or 'reasoning'}({json.dumps(s.tool_input, ensure_ascii=False)})"
            + (f" after {s.depends_on}" if s.depends_on else "") for s in plan.steps]


def score_planner(case: PlannerCase, items: Sequence[PlanItem], *, error: str | None = None,
                  latency_s: float = 0.0, first_step_s: float | None = None) -> CaseResult:
    """``items`` is everything ``Planner.plan`` yielded. Valid = it ended with ``PlanCompleted``."""
    final = items[-1] if items else None
    restarts = [i.error for i in items if isinstance(i, PlanRestarted)]
    emitted = sum(1 for i in items if isinstance(i, StepEmitted))
    base = {"role": "planner", "case_id": case.id, "expected": "valid plan", "latency_s": latency_s}
    if isinstance(final, PlanCompleted):
        repaired = _needed_repair(final.spend.calls)
        problems = _structure_problems(case, final.plan)
        details = {"steps": len(final.plan.steps), "tools": sorted({s.tool_name or "reasoning" for s in final.plan.steps}),
                   "structure_ok": not problems, "structure_problems": problems, "restarts": restarts,
                   "first_step_s": first_step_s, "steps_emitted": emitted, "plan": _render_plan_compact(final.plan)}
        if repaired:
            details["first_round_error"] = _short(restarts[0] if restarts else _first_round_error(final.spend.calls), 300)
        got = "valid (repaired)" if repaired else "valid"
        return CaseResult(passed=True, got=got, repaired=repaired, details=details, **base, **_usage_fields(final.spend.usage))
    if isinstance(final, PlanFailed):
        reason = f"{final.reason}: {_short(final.error, 300)}"
        details = {"failure": final.reason, "restarts": restarts, "first_step_s": first_step_s,
                   "steps_emitted": emitted, "last_reply": _short(_last_reply(final.spend.calls), 600)}
        return CaseResult(passed=False, got=final.reason, reason=reason, repaired=_needed_repair(final.spend.calls),
                          details=details, **base, **_usage_fields(final.spend.usage))
    reason = f"the planner did not finish: {_short(error or 'no PlanCompleted/PlanFailed was yielded')}"
    return CaseResult(passed=False, got="error", reason=reason, details={"restarts": restarts}, **base)


def _first_round_error(records: Sequence[Mapping[str, Any]]) -> str:
    """The repair request's last user message states the error of the first round."""
    for rec in records:
        msgs = list(rec.get("messages", ()))
        if any(m.get("role") == "assistant" for m in msgs):
            return str(msgs[-1].get("content", ""))
    return ""


_DECISION_KIND = {Accept: "accept", RetryStep: "retry_step", Replan: "replan", Escalate: "escalate"}


def _norm(text: str) -> str:
    """Lower case, digit-group commas and spaces removed: '8,950,000' and '8 950 000' both read '8950000'."""
    out = text.lower().replace("\u202f", " ").replace("\u00a0", " ")
    chars = list(out)
    keep = []
    for i, c in enumerate(chars):
        if c in ", " and 0 < i < len(chars) - 1 and chars[i - 1].isdigit() and chars[i + 1].isdigit():
            continue
        keep.append(c)
    return "".join(keep)


def _mentions(answer: str, mentions: Sequence[Sequence[str]]) -> list[str]:
    """The expected figures the answer does not state (each entry: any one of its spellings)."""
    text = _norm(answer)
    return [alts[0] for alts in mentions if not any(_norm(a) in text for a in alts)]


def score_reflector(case: ReflectorCase, reflection: Reflection | None, *, limits: PolicyLimits | None = None,
                    records: Sequence[Mapping[str, Any]] = (), usage: Usage | None = None, error: str | None = None,
                    latency_s: float = 0.0) -> CaseResult:
    """Agreement of the policy's decision with the case: accept exactly when ``case.expected == 'accept'``."""
    repaired = _needed_repair(records)
    base = dict(role="reflector", case_id=case.id, expected=case.expected, latency_s=latency_s, repaired=repaired,
                **_usage_fields(usage))
    if reflection is None:
        return CaseResult(passed=False, got="invalid", reason=f"no usable reflection: {_short(error or '')}",
                          details={"raw_reply": _short(_last_reply(records), 400)}, **base)
    decision = decide(ReflectionContext(reflection=reflection, step_retries={}, replans=0,
                                        limits=limits or PolicyLimits(),
                                        step_ids=frozenset(s.step_id for s in case.plan.steps)))
    kind = _DECISION_KIND[type(decision)]
    want_accept = case.expected == "accept"
    passed = (kind == "accept") == want_accept
    raw_agrees = (reflection.action == "accept") == want_accept
    s = reflection.scores
    details: dict[str, Any] = {
        "decision": kind, "raw_action": reflection.action, "raw_agrees": raw_agrees,
        "scores": {"completeness": s.completeness, "correctness": s.correctness, "format": s.format},
        "overall_pass": reflection.overall_pass, "feedback": _short(reflection.feedback),
        "answer": _short(reflection.answer or ""),
        "action_fits": (reflection.action in case.expected_actions) if case.expected_actions else None,
        "missing_mentions": None,
    }
    if want_accept and kind == "accept" and case.answer_mentions:
        details["missing_mentions"] = _mentions(reflection.answer or "", case.answer_mentions)
    reason = ""
    if not passed:
        scores = f"scores {s.completeness}/{s.correctness}/{s.format}, overall_pass={reflection.overall_pass}"
        if want_accept:
            via = (f"the model proposed {reflection.action!r}" if reflection.action != "accept"
                   else "the policy overruled the model's accept")
            reason = f"correct results not accepted: {via} ({scores}); feedback: {_short(reflection.feedback, 150)}"
        else:
            reason = (f"accepted results that are wrong/incomplete ({case.why}); {scores}; "
                      f"answer: {_short(reflection.answer or '', 150)}")
    return CaseResult(passed=passed, got=kind, reason=reason, details=details, **base)


# ====================================================================================== running
def _unavailable(role: str, case: RouterCase | ReflectorCase, exc: LLMError, latency_s: float) -> CaseResult:
    return CaseResult(role=role, case_id=case.id, passed=False, expected=case.expected, got="llm_unavailable",
                      reason=f"the model call failed: {type(exc).__name__}: {_short(str(exc))}", latency_s=latency_s)


async def run_router_case(router: Router, case: RouterCase) -> CaseResult:
    started = time.perf_counter()
    try:
        result = await router.route(f"regression-{case.id}", case.task)
    except InvalidLLMOutputError as exc:
        return score_router(case, None, records=(exc.spend.calls if exc.spend else ()), usage=(exc.spend.usage if exc.spend else None), error=str(exc),
                            latency_s=time.perf_counter() - started)
    except LLMError as exc:  # the server did not answer: production fails the task with llm_unavailable
        return _unavailable("router", case, exc, time.perf_counter() - started)
    return score_router(case, result.value, records=result.spend.calls, usage=result.spend.usage,
                        latency_s=time.perf_counter() - started)


async def run_planner_case(planner: Planner, case: PlannerCase) -> CaseResult:
    started = time.perf_counter()
    items: list[PlanItem] = []
    first_step: float | None = None
    error: str | None = None
    try:
        async for item in planner.plan(f"regression-{case.id}", case.task):
            if first_step is None and isinstance(item, StepEmitted):
                first_step = time.perf_counter() - started
            items.append(item)
    except LLMError as exc:  # the Planner turns these into PlanFailed; kept for safety
        error = f"{type(exc).__name__}: {exc}"
    return score_planner(case, items, error=error, latency_s=time.perf_counter() - started, first_step_s=first_step)


async def run_reflector_case(reflector: Reflector, case: ReflectorCase, limits: PolicyLimits | None = None) -> CaseResult:
    started = time.perf_counter()
    try:
        result = await reflector.reflect(f"regression-{case.id}", case.task, case.plan, case.results)
    except InvalidLLMOutputError as exc:
        return score_reflector(case, None, limits=limits, records=(exc.spend.calls if exc.spend else ()), usage=(exc.spend.usage if exc.spend else None), error=str(exc),
                               latency_s=time.perf_counter() - started)
    except LLMError as exc:
        return _unavailable("reflector", case, exc, time.perf_counter() - started)
    return score_reflector(case, result.value, limits=limits, records=result.spend.calls, usage=result.spend.usage,
                           latency_s=time.perf_counter() - started)


def demo_config(prompt_versions: Mapping[str, str] | None = None) -> RuntimeConfig:
    """The ``RuntimeConfig`` ``make demo`` runs with (agents/demo.py), the role-relevant part: default limits,
    ``context_token_budget``, streamed plans, latest prompts unless pinned."""
    return RuntimeConfig(step_timeout_s=120, task_timeout_s=600, prompt_versions=dict(prompt_versions or {}))


def regression_tools(workspace: Path) -> ToolRegistry:
    """The tools the demo's Orchestrator gets with ``tools=None``: the built-ins plus the workspace tools."""
    from agents.tools.builtins import builtin_tools

    return ToolRegistry(builtin_tools(workspace))


@dataclass(frozen=True, slots=True)
class Roles:
    router: Router
    planner: Planner
    reflector: Reflector
    limits: PolicyLimits


def build_roles(llm: LLM, registry: ToolRegistry, config: RuntimeConfig) -> Roles:
    """The three roles exactly as ``agents.cluster.actors.create_actors`` constructs them, and the task runner's
    policy limits."""
    catalog, schemas = registry.catalog_text(), registry.schemas()
    limits = PolicyLimits(max_step_retries=config.max_step_retries, max_replans=config.max_replans,
                          accept_min_score=config.accept_min_score,
                          accept_min_correctness=config.accept_min_correctness)
    return Roles(Router(llm, catalog, config.router_options()), Planner(llm, schemas, catalog, config.planner_options()), Reflector(llm, config.prompt_options()), limits)


class _TooManyTransportErrors(RuntimeError):
    pass


async def run_cases(roles: Roles, cases: Mapping[str, Sequence[Case]], *,
                    progress: Callable[[str], None] | None = None,
                    sink: list[CaseResult] | None = None) -> list[CaseResult]:
    """Every case, one role after the other (consecutive calls share the prompt prefix the server caches).
    Results are appended to ``sink`` as they arrive, so an interrupted run keeps what it measured."""
    out = sink if sink is not None else []
    transport_errors = 0
    for role in ROLES:
        todo = cases.get(role, ())
        for n, case in enumerate(todo, 1):
            if role == "router":
                res = await run_router_case(roles.router, case)  # type: ignore[arg-type]
            elif role == "planner":
                res = await run_planner_case(roles.planner, case)  # type: ignore[arg-type]
            else:
                res = await run_reflector_case(roles.reflector, case, roles.limits)  # type: ignore[arg-type]
            out.append(res)
            if progress:
                mark = "ok  " if res.passed else "FAIL"
                extra = " (repaired)" if res.repaired and "repaired" not in res.got else ""
                progress(f"[{role} {n}/{len(todo)}] {mark} {case.id}: expected {res.expected}, got {res.got}{extra} "
                         f"in {res.latency_s:.1f}s" + (f" — {res.reason}" if res.reason else ""))
            transport_errors = transport_errors + 1 if res.got == "llm_unavailable" else 0
            if transport_errors >= _ABORT_AFTER_TRANSPORT_ERRORS:
                raise _TooManyTransportErrors(f"{transport_errors} model calls in a row failed to reach the server; "
                                              f"last: {res.reason}")
    return out


# ====================================================================================== summary + report
def _pct(n: int, d: int) -> str:
    return f"{n}/{d} = {100 * n / d:.0f}%" if d else "0/0"


def _latency_tokens(results: Sequence[CaseResult]) -> dict[str, Any]:
    lat = sorted(r.latency_s for r in results)
    return {
        "median_latency_s": round(statistics.median(lat), 2) if lat else None,
        "p90_latency_s": round(lat[min(len(lat) - 1, int(0.9 * len(lat)))], 2) if lat else None,
        "max_latency_s": round(lat[-1], 2) if lat else None,
        "total_latency_s": round(sum(lat), 1),
        "llm_calls": sum(r.llm_calls for r in results),
        "input_tokens": sum(r.input_tokens for r in results),
        "output_tokens": sum(r.output_tokens for r in results),
        "mean_input_tokens": round(statistics.mean(r.input_tokens for r in results)) if results else None,
        "mean_output_tokens": round(statistics.mean(r.output_tokens for r in results)) if results else None,
    }


def summarize(role: str, results: Sequence[CaseResult]) -> dict[str, Any]:
    """The role's metric with counts, plus latency and token totals."""
    rs = [r for r in results if r.role == role]
    total = len(rs)
    passed = sum(r.passed for r in rs)
    summary: dict[str, Any] = {"total": total, "passed": passed, "rate": passed / total if total else None,
                               "repaired": sum(r.repaired for r in rs), **_latency_tokens(rs)}
    if role == "router":
        confusion: dict[str, Counter[str]] = {}
        for r in rs:
            confusion.setdefault(r.expected, Counter())[r.got] += 1
        summary.update(
            metric="router accuracy",
            headline=f"router accuracy: {_pct(passed, total)}",
            raw_correct=sum(1 for r in rs if r.details.get("raw_route") == r.expected),
            invalid_output=sum(1 for r in rs if r.got == "invalid"),
            by_expected={k: {"correct": c[k], "total": sum(c.values())} for k, c in sorted(confusion.items())},
            confusion={k: dict(c) for k, c in sorted(confusion.items())})
    elif role == "planner":
        valid = [r for r in rs if r.passed]
        repaired_valid = sum(r.repaired for r in valid)
        summary.update(
            metric="valid plan rate",
            headline=f"planner valid plans: {_pct(passed, total)} ({repaired_valid} of them needed the repair round)",
            valid=passed, repaired_valid=repaired_valid, valid_first_round=passed - repaired_valid,
            target=PLANNER_TARGET, meets_target=(passed / total >= PLANNER_TARGET) if total else None,
            structure_ok=sum(1 for r in valid if r.details.get("structure_ok")),
            failure_reasons=dict(Counter(r.got for r in rs if not r.passed)),
            median_first_step_s=(round(statistics.median(fs), 2) if (fs := [r.details["first_step_s"] for r in rs
                                 if r.details.get("first_step_s") is not None]) else None))
    elif role == "reflector":
        acc = [r for r in rs if r.expected == "accept"]
        rej = [r for r in rs if r.expected == "not_accept"]
        fits = [r for r in rej if r.details.get("action_fits") is not None]
        mentioned = [r for r in acc if r.details.get("missing_mentions") is not None]
        summary.update(
            metric="reflector agreement",
            headline=f"reflector agreement: {_pct(passed, total)}",
            raw_agree=sum(1 for r in rs if r.details.get("raw_agrees")),
            accept_cases={"agree": sum(r.passed for r in acc), "total": len(acc)},
            not_accept_cases={"agree": sum(r.passed for r in rej), "total": len(rej)},
            false_accepts=sum(1 for r in rej if r.got == "accept"),
            false_rejects=sum(1 for r in acc if r.got not in ("accept",)),
            invalid_output=sum(1 for r in rs if r.got == "invalid"),
            decisions=dict(Counter(r.got for r in rs)),
            action_fits={"fits": sum(1 for r in fits if r.details["action_fits"]), "total": len(fits)},
            answers_state_figures={"ok": sum(1 for r in mentioned if not r.details["missing_mentions"]),
                                   "total": len(mentioned)})
    return summary


def _git() -> dict[str, Any]:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10, check=False,
                              cwd=Path(__file__).parent).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                    text=True, timeout=10, check=False, cwd=Path(__file__).parent).stdout.strip())
        return {"commit": head or None, "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def prompt_info(config: RuntimeConfig) -> dict[str, dict[str, str]]:
    out = {}
    for name in PROMPTS_USED:
        t = load_prompt(name, config.prompt_versions.get(name))
        out[name] = {"template_id": t.template_id, "fingerprint": t.fingerprint}
    return out


def build_report(results: Sequence[CaseResult], cases: Mapping[str, Sequence[Case]], *, model: Mapping[str, Any],
                 config: RuntimeConfig, wall_s: float, started_at: str, command: str,
                 complete: bool = True) -> dict[str, Any]:
    roles = [r for r in ROLES if cases.get(r)]
    return {
        "kind": "prompt-regression",
        "generated_at": started_at,
        "complete": complete,
        "command": command,
        "wall_s": round(wall_s, 1),
        "model": dict(model),
        "prompts": prompt_info(config),
        "config": {"context_token_budget": config.context_token_budget, "stream_plan": config.stream_plan,
                   "max_steps": config.max_steps, "router_min_confidence": config.router_min_confidence,
                   "accept_min_score": config.accept_min_score,
                   "accept_min_correctness": config.accept_min_correctness,
                   "prompt_versions": dict(config.prompt_versions)},
        "host": {"python": platform.python_version(), "machine": platform.machine(), **_git()},
        "cases_run": {r: len([x for x in results if x.role == r]) for r in roles},
        "cases_in_set": {r: len(cases[r]) for r in roles},
        "summary": {r: summarize(r, results) for r in roles},
        "cases": [r.as_dict() for r in results],
    }


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Mapping[str, Any]) -> str:
    m = report["model"]
    summ = report["summary"]
    lines = [f"# Prompt regression — {m.get('name', '?')}", ""]
    if not report.get("complete", True):
        lines += ["> **Incomplete run** (interrupted): only the cases listed below were measured.", ""]
    lines += [(f"Generated {report['generated_at']} by `{report['command']}`; wall time {report['wall_s']:.0f} s "
              f"({report['wall_s'] / 60:.1f} min)."), ""]
    lines += ["| role | metric | result | target |", "|---|---|---|---|"]
    if "router" in summ:
        s = summ["router"]
        lines.append(f"| router | accuracy (route acted on) | **{_pct(s['passed'], s['total'])}** (model's raw route "
                     f"{_pct(s['raw_correct'], s['total'])}; {s['invalid_output']} invalid replies) | — |")
    if "planner" in summ:
        s = summ["planner"]
        lines.append(f"| planner | valid plans | **{_pct(s['valid'], s['total'])}** ({s['repaired_valid']} of them needed the "
                     f"repair round; {s['structure_ok']}/{s['valid']} valid plans meet the structural expectations) "
                     f"| ≥ {PLANNER_TARGET:.0%} {'✓' if s['meets_target'] else '✗'} |")
    if "reflector" in summ:
        s = summ["reflector"]
        lines.append(f"| reflector | agreement (policy decision) | **{_pct(s['passed'], s['total'])}** (raw action "
                     f"{_pct(s['raw_agree'], s['total'])}; {s['false_accepts']} false accepts, {s['false_rejects']} "
                     f"correct results not accepted) | — |")
    lines += [""]
    for role in ROLES:
        if role in summ:
            lines.append(f"- {summ[role]['headline']}")
    lines += [""]

    lines += ["## Model and prompts", "",
              (f"- model: `{m.get('name')}` — {m.get('title', '')}, {m.get('quantization', '')}, "
              f"server n_ctx {m.get('n_ctx')}, {m.get('n_threads', '?')} threads"),
              (f"- weights: `{m.get('path', '')}`, {m.get('size', 0):,} bytes, sha256 `{m.get('sha256') or 'unknown'}` "
              f"({m.get('sha256_source', '')})"),
              (f"- server: llama-cpp-python {m.get('llama_cpp_python', '?')}, structured output "
              f"`{m.get('structured_output', '?')}`, temperature 0"),
              (f"- host: Python {report['host']['python']} on {report['host']['machine']}; tetrarch commit "
              f"`{report['host'].get('commit')}`{' + uncommitted changes' if report['host'].get('dirty') else ''}"),
              (f"- config: the demo's RuntimeConfig (context_token_budget {report['config']['context_token_budget']}, "
              f"streamed plans {report['config']['stream_plan']}, router_min_confidence "
              f"{report['config']['router_min_confidence']}, accept needs every score ≥ "
              f"{report['config']['accept_min_score']}); tools: the built-ins + workspace tools"), "",
              "| prompt | fingerprint (sha256 of the template file) |", "|---|---|"]
    for p in report["prompts"].values():
        lines.append(f"| `{p['template_id']}` | `{p['fingerprint']}` |")
    lines += [""]

    lines += ["## Per role", "",
              ("Latency is per case (all LLM calls of the role, including a repair round). The server reports no usage "
              "for streamed replies, so the planner's tokens are counted with tiktoken (an estimate for this "
              "tokenizer); router and reflector tokens are the server's counts."), ""]
    lines += ["| role | cases | median / p90 / max latency | LLM calls | input / output tokens (total) | needed repair |",
              "|---|---|---|---|---|---|"]
    for role in ROLES:
        if role in summ:
            s = summ[role]
            lines.append(f"| {role} | {s['total']} | {s['median_latency_s']} / {s['p90_latency_s']} / "
                         f"{s['max_latency_s']} s | {s['llm_calls']} | {s['input_tokens']:,} / {s['output_tokens']:,} | "
                         f"{s['repaired']} |")
    lines += [""]
    if "router" in summ:
        s = summ["router"]
        got_cols = list(ROUTES) + ["invalid"]
        lines += ["### Router confusion (rows: expected, columns: routed)", "",
                  "| expected | " + " | ".join(got_cols) + " | correct |",
                  "|---|" + "---|" * (len(got_cols) + 1)]
        for exp, row in s["confusion"].items():
            lines.append(f"| {exp} | " + " | ".join(str(row.get(c, 0)) for c in got_cols)
                         + f" | {_pct(s['by_expected'][exp]['correct'], s['by_expected'][exp]['total'])} |")
        lines += [""]
    if "planner" in summ:
        s = summ["planner"]
        lines += ["### Planner", "",
                  (f"- valid on the first round: {s['valid_first_round']}/{s['total']}; after the repair round: "
                  f"{s['valid']}/{s['total']}"),
                  f"- failures by reason: {s['failure_reasons'] or 'none'}",
                  (f"- structural expectations met (expected tools used, minimum steps, independent first steps): "
                  f"{s['structure_ok']}/{s['valid']} valid plans"),
                  f"- median time to the first streamed step: {s['median_first_step_s']} s", ""]
    if "reflector" in summ:
        s = summ["reflector"]
        lines += ["### Reflector", "",
                  (f"- correct results accepted: {s['accept_cases']['agree']}/{s['accept_cases']['total']}; wrong, "
                  f"failed or incomplete results not accepted: {s['not_accept_cases']['agree']}/"
                  f"{s['not_accept_cases']['total']}"),
                  f"- decisions after the policy: {s['decisions']}",
                  (f"- the model's action is one the case lists as fitting (not-accept cases): "
                  f"{s['action_fits']['fits']}/{s['action_fits']['total']}"),
                  (f"- accepted answers that state the expected figures: {s['answers_state_figures']['ok']}/"
                  f"{s['answers_state_figures']['total']}"), ""]

    failures = [c for c in report["cases"] if not c["passed"]]
    lines += ["## Failures", ""]
    if failures:
        lines += ["| role | case | expected | got | reason |", "|---|---|---|---|---|"]
        for c in failures:
            lines.append(f"| {c['role']} | {c['case_id']} | {_cell(c['expected'])} | {_cell(c['got'])} | "
                         f"{_cell(c['reason'])} |")
    else:
        lines.append("None.")
    lines += [""]
    notes = []
    for c in report["cases"]:
        d = c["details"]
        if c["role"] == "planner" and c["passed"] and d.get("structure_problems"):
            notes.append(f"| planner | {c['case_id']} | valid, but {_cell('; '.join(d['structure_problems']))} |")
        if c["role"] == "planner" and c["repaired"] and c["passed"]:
            notes.append(f"| planner | {c['case_id']} | valid after the repair round; first round: "
                         f"{_cell(d.get('first_round_error', ''))} |")
        if c["role"] == "reflector" and c["passed"] and d.get("missing_mentions"):
            notes.append(f"| reflector | {c['case_id']} | accepted, but the answer does not state "
                         f"{_cell(', '.join(d['missing_mentions']))}: {_cell(d.get('answer', ''))} |")
    if notes:
        lines += ["## Passed with remarks", "", "| role | case | remark |", "|---|---|---|", *notes, ""]

    lines += ["## All cases", "", "| role | case | pass | expected | got | latency | tokens in/out | repaired |",
              "|---|---|---|---|---|---|---|---|"]
    for c in report["cases"]:
        lines.append(f"| {c['role']} | {c['case_id']} | {'✓' if c['passed'] else '✗'} | {_cell(c['expected'])} | "
                     f"{_cell(c['got'])} | {c['latency_s']:.1f} s | {c['input_tokens']}/{c['output_tokens']} | "
                     f"{'yes' if c['repaired'] else ''} |")
    lines += ["", ("Cases: `benchmarks/prompt_regression/cases/*.jsonl`; per-case details (plans, scores, answers) in the "
              "JSON file beside this one."), ""]
    return "\n".join(lines)


# ====================================================================================== model + CLI
def model_info(name: str) -> dict[str, Any]:
    """Catalogue facts and the weights' sha256 (checked against the catalogue pin; cheap when the pull's
    verification stamp matches, else the file is hashed)."""
    from agents.llm.local import get_model, model_path
    from agents.llm.local.provision import _verified

    model = get_model(name)
    path = model_path(model.name)
    verified = _verified(path, model)
    try:
        llama_version: str | None = package_version("llama_cpp_python")
    except PackageNotFoundError:  # start_local_llm will say how to install it
        llama_version = None
    return {"name": model.name, "title": model.title, "quantization": model.quantization, "n_ctx": model.n_ctx,
            "path": str(path), "size": path.stat().st_size, "sha256": model.sha256 if verified else None,
            "sha256_source": "verified against the catalogue pin" if verified else "MISMATCH with the catalogue pin",
            "llama_cpp_python": llama_version}


def _parse_pins(values: Sequence[str]) -> dict[str, str]:
    pins = {}
    for v in values:
        role, sep, version = v.partition("=")
        if not sep or not role or not version:
            raise SystemExit(f"--prompt takes ROLE=VERSION (e.g. planner=v1), got {v!r}")
        load_prompt(role, version)  # fails early, naming the versions that exist
        pins[role] = version
    return pins


def _select(cases: Mapping[str, list[Case]], ids: Sequence[str], limit: int | None) -> dict[str, list[Case]]:
    out = {}
    for role, cs in cases.items():
        chosen = [c for c in cs if not ids or c.id in ids]
        out[role] = chosen[:limit] if limit else chosen
    unknown = set(ids) - {c.id for cs in cases.values() for c in cs}
    if unknown:
        raise SystemExit(f"unknown case id(s): {', '.join(sorted(unknown))}")
    return out


def _write(report: Mapping[str, Any], out_dir: Path, stem: str) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    jpath, mpath = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    jpath.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    mpath.write_text(render_markdown(report), encoding="utf-8")
    return jpath, mpath


def rerender(json_path: Path) -> Path:
    """Recompute the summaries and the markdown of a results JSON from its recorded cases (no model): for a
    change of the report's wording, never of what was measured."""
    report = json.loads(Path(json_path).read_text(encoding="utf-8"))
    results = [CaseResult(**c) for c in report["cases"]]
    report["summary"] = {r: summarize(r, results) for r in ROLES if r in report["summary"]}
    Path(json_path).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    md = Path(json_path).with_suffix(".md")
    md.write_text(render_markdown(report), encoding="utf-8")
    return md


def main(argv: Sequence[str] | None = None) -> int:
    from agents.llm.local import DEFAULT_MODEL

    p = argparse.ArgumentParser(prog="python -m benchmarks.prompt_regression.run",
                                description="Run the prompt regression set against a local model.")
    p.add_argument("--model", default=DEFAULT_MODEL, help=f"local model name (default {DEFAULT_MODEL})")
    p.add_argument("--role", action="append", choices=ROLES, help="only this role (repeatable); default: all")
    p.add_argument("--limit", type=int, default=None, help="at most N cases per role")
    p.add_argument("--case", action="append", default=[], help="only this case id (repeatable)")
    p.add_argument("--prompt", action="append", default=[], metavar="ROLE=VERSION",
                   help="pin a prompt version, e.g. planner=v1 (default: the latest of each)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results directory (default benchmarks/results)")
    p.add_argument("--n-threads", type=int, default=2, help="llama.cpp threads (default 2, as the Orchestrator)")
    p.add_argument("--rerender", type=Path, metavar="RESULTS.json",
                   help="only rewrite the summary and .md of an earlier run from its JSON (no model)")
    args = p.parse_args(argv)
    if args.rerender:
        print(f"wrote {rerender(args.rerender)}")
        return 0
    if args.limit is not None and args.limit < 1:
        p.error("--limit must be >= 1")

    config = demo_config(_parse_pins(args.prompt))
    roles = tuple(args.role) if args.role else ROLES
    workspace = Path(tempfile.mkdtemp(prefix="tetrarch-regression-ws-"))
    registry = regression_tools(workspace)
    cases = _select({r: load_cases(r, tool_schemas=registry.schemas()) for r in roles}, args.case, args.limit)
    info = model_info(args.model)
    command = "python -m benchmarks.prompt_regression.run " + " ".join(sys.argv[1:] if argv is None else argv)
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(f"prompt regression: {', '.join(f'{r} {len(cases[r])}' for r in roles)} cases on {args.model}", flush=True)

    from agents.llm.local import start_local_llm

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, on_term)
    results: list[CaseResult] = []
    complete = False
    t0 = time.perf_counter()
    server = None
    try:
        llm, server = start_local_llm(args.model, n_threads=args.n_threads)
        info.update(n_threads=args.n_threads, structured_output=getattr(llm, "mode", "json_object_schema"))
        print(f"server up at {server.base_url} after {time.perf_counter() - t0:.1f}s", flush=True)
        asyncio.run(run_cases(build_roles(llm, registry, config), cases, progress=lambda s: print(s, flush=True),
                              sink=results))
        complete = True
    except KeyboardInterrupt:
        print("interrupted: writing what was measured as .partial", flush=True)
    except _TooManyTransportErrors as exc:
        print(f"aborted: {exc}", flush=True)
    finally:
        if server is not None:
            server.stop()
        signal.signal(signal.SIGTERM, previous)
    wall = time.perf_counter() - t0
    report = build_report(results, cases, model=info, config=config, wall_s=wall, started_at=started_at,
                          command=command, complete=complete)
    stem = f"prompt-regression-{args.model}" + ("" if complete else ".partial")
    jpath, mpath = _write(report, args.out, stem)
    for role in roles:
        if role in report["summary"]:
            print(report["summary"][role]["headline"], flush=True)
    print(f"wall {wall:.0f}s; wrote {mpath} and {jpath}", flush=True)
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
