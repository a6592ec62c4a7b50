"""Running the cases through the real role classes, built the way the demo builds them."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.checks.review import DEFAULT_CHECKS
from agents.config import NUMERIC_QA_CHECKS, RuntimeConfig
from agents.errors import InvalidLLMOutputError
from agents.llm.base import LLM, LLMError, Spend
from agents.roles.messages import PlanItem, SecondLook, StepEmitted
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router
from agents.tools.registry import ToolRegistry
from benchmarks.prompt_regression.case_files import ROLES, Case, PlannerCase, ReflectorCase, RouterCase
from benchmarks.prompt_regression.scoring import (
    CaseResult,
    _short,
    reflector_decision,
    score_planner,
    score_reflector,
    score_router,
)
from planning.models import Reflection
from planning.policy import PolicyLimits, ReviewAgain

__all__ = [
    "Roles",
    "TooManyTransportErrors",
    "build_roles",
    "demo_config",
    "regression_tools",
    "run_cases",
    "run_planner_case",
    "run_reflector_case",
    "run_router_case",
]

_ABORT_AFTER_TRANSPORT_ERRORS = 3


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


async def run_reflector_case(reflector: Reflector, case: ReflectorCase, limits: PolicyLimits | None = None,
                             checks: Sequence[str] | None = None) -> CaseResult:
    """One review, and a second one where production's policy asks for it (``planning.policy.ReviewAgain``):
    scored on the verdict production would end on, so a false accept on the second review counts. ``checks``:
    the built-in check sets the policy's context is built with (default: the ones the reviewer's prompt shows)."""
    checks = reflector.checks if checks is None else tuple(checks)
    started = time.perf_counter()
    spent = Spend()
    first: Reflection | None = None
    again: SecondLook | None = None
    for _ in range(2):
        try:
            result = await reflector.reflect(f"regression-{case.id}", case.task, case.plan, case.results, again)
        except InvalidLLMOutputError as exc:
            spent = spent + (exc.spend or Spend())
            return score_reflector(case, None, limits=limits, records=spent.calls, usage=spent.usage, error=str(exc),
                                   latency_s=time.perf_counter() - started, first=first, checks=checks)
        except LLMError as exc:
            return _unavailable("reflector", case, exc, time.perf_counter() - started)
        spent = spent + result.spend
        decision = reflector_decision(case, result.value, limits, reviewed_again=first is not None, checks=checks)
        if first is not None or not isinstance(decision, ReviewAgain):
            break
        first = result.value
        again = SecondLook(decision.feedback, decision.reason, first)
    return score_reflector(case, result.value, limits=limits, checks=checks, records=spent.calls, usage=spent.usage,
                           latency_s=time.perf_counter() - started, first=first)


def demo_config() -> RuntimeConfig:
    """The ``RuntimeConfig`` ``make demo`` runs with (agents/cli/demo.py), the role-relevant part: default limits,
    ``context_token_budget``, streamed plans and the demo's built-in check sets. The prompts are the model's
    (``SMALL_LOCAL``, the embedded server's profile)."""
    return RuntimeConfig(step_timeout_s=120, task_timeout_s=600, builtin_checks=NUMERIC_QA_CHECKS)


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
    checks: tuple[str, ...] = DEFAULT_CHECKS
    """The built-in check sets (``RuntimeConfig.builtin_checks``) the reviewer's decisions are taken with."""


def build_roles(llm: LLM, registry: ToolRegistry, config: RuntimeConfig) -> Roles:
    """The three roles exactly as ``agents.cluster.actor_set.create_actors`` constructs them, and the task runner's
    policy limits."""
    catalog, schemas = registry.catalog_text(), registry.schemas()
    limits = PolicyLimits(max_step_retries=config.max_step_retries, max_replans=config.max_replans,
                          accept_min_score=config.accept_min_score,
                          accept_min_correctness=config.accept_min_correctness)
    return Roles(Router(llm, catalog, config.router_options()), Planner(llm, schemas, catalog, config.planner_options()), Reflector(llm, config.prompt_options(), catalog), limits,
                 tuple(config.builtin_checks))


class TooManyTransportErrors(RuntimeError):
    """The server stopped answering: the run ends early, and the CLI writes what was measured."""


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
                res = await run_reflector_case(roles.reflector, case, roles.limits, roles.checks)  # type: ignore[arg-type]
            out.append(res)
            if progress:
                mark = "ok  " if res.passed else "FAIL"
                extra = " (repaired)" if res.repaired and "repaired" not in res.got else ""
                progress(f"[{role} {n}/{len(todo)}] {mark} {case.id}: expected {res.expected}, got {res.got}{extra} "
                         f"in {res.latency_s:.1f}s" + (f" — {res.reason}" if res.reason else ""))
            transport_errors = transport_errors + 1 if res.got == "llm_unavailable" else 0
            if transport_errors >= _ABORT_AFTER_TRANSPORT_ERRORS:
                raise TooManyTransportErrors(f"{transport_errors} model calls in a row failed to reach the server; "
                                             f"last: {res.reason}")
    return out

