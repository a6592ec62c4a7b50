"""The engine's side of memory (docs/memory.md): a session turn's history and outcome, and the plan cache.

A Supervisor holds one ``MemoryLink`` on the task store's file; its tables (``agents.memory``) are opened on
first use. Memory is an aid, never a reason for a task to fail: a memory table that cannot be read or written
is logged and the task goes on without it.

    >>> link = MemoryLink(RuntimeConfig(store_path=":memory:", plan_cache=True))        # doctest: +SKIP
    >>> history = link.start_turn(session_id, "And Rome?", task_id)                      # doctest: +SKIP
    >>> reuse = link.cached_plan("Population of Rome?", tool_schema, max_steps=50)      # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agents.config import RuntimeConfig
from agents.llm.base import Spend
from agents.memory.cache_store import PlanCacheStore
from agents.memory.errors import MemoryLayerError
from agents.memory.history import compact_evidence
from agents.memory.plan_cache import Adapt, Filled, PlanTemplate, plan_reuse
from agents.memory.sessions import SessionStore
from agents.results import TaskResult
from agents.roles.messages import PlanCompleted, PlanItem, StepEmitted
from planning.errors import PlanningError
from planning.models import Plan
from planning.validate import validate_plan

__all__ = ["CachedPlan", "MemoryLink", "PlanHint", "best_guess", "cached_plan_stream", "hint_block"]

log = logging.getLogger("tetrarch.memory")

_MEMORY_ERRORS = (MemoryLayerError, sqlite3.Error, OSError)


@dataclass(frozen=True, slots=True)
class CachedPlan:
    """A plan filled by code from a cached template: no planner call."""

    template_id: str
    plan: Plan


@dataclass(frozen=True, slots=True)
class PlanHint:
    """A cached template the planner adapts (``Adapt``: the task has its shape, code cannot fill it): ``text`` is
    the marked block the planner's user message gets (``hint_block``). The planner call happens and is charged."""

    template_id: str
    text: str
    guess: Plan | None = None
    """The template filled as if code could (``best_guess``): where speculated reads may start from. A wrong guess
    costs a read no step takes; it never reaches the plan."""


def best_guess(template: PlanTemplate, task: str) -> Plan | None:
    """``template`` filled for ``task`` where a value is unambiguous, keeping what code cannot rewrite as it was (None:
    a slot would get two values, or a value does not fit its type)."""
    reuse = plan_reuse(dataclasses.replace(template, fillable=True), task)
    return reuse.plan if isinstance(reuse, Filled) else None


_HINT_OPEN, _HINT_CLOSE = "<plan-hint>", "</plan-hint>"


def hint_block(guidance: str) -> str:
    """The template guidance as the planner reads it: marked as a hint from memory (neither the task nor tool
    output), inside tags nothing in it can close (it holds the task's own words)."""
    body = guidance.replace(_HINT_OPEN, "<plan hint>").replace(_HINT_CLOSE, "</plan hint>")
    return (f"Hint from the plan cache (a plan of an earlier accepted task of the same shape; use it if it fits, "
            f"the task below decides):\n{_HINT_OPEN}\n{body}\n{_HINT_CLOSE}")


async def cached_plan_stream(plan: Plan) -> AsyncIterator[PlanItem]:
    """The plan as the planner would have streamed it, at no cost (an empty ``Spend``)."""
    for step in plan.steps:
        yield StepEmitted(step)
    yield PlanCompleted(plan, Spend())


class MemoryLink:
    def __init__(self, config: RuntimeConfig) -> None:
        self._cfg = config
        self._sessions: SessionStore | None = None
        self._cache: PlanCacheStore | None = None

    @property
    def sessions(self) -> SessionStore:
        if self._sessions is None:
            self._sessions = SessionStore(self._cfg.store_location())
        return self._sessions

    @property
    def cache(self) -> PlanCacheStore:
        if self._cache is None:
            self._cache = PlanCacheStore(self._cfg.store_location())
        return self._cache

    # ------------------------------------------------------------------ sessions
    def start_turn(self, session_id: str, task: str, task_id: str) -> str:
        """Number the task's turn and return the history its router and planner see (the finished turns
        within ``session_history_tokens``). An unknown session raises ``SessionNotFoundError``."""
        budget = self._cfg.session_history_tokens
        history = self.sessions.context(session_id, budget) if budget > 0 else ""
        self.sessions.begin_turn(session_id, task, task_id)
        return history

    def finish_turn(self, result: TaskResult) -> None:
        """Record a turn's outcome: its answer (or question back, or error) and the step outputs it used."""
        try:
            turn = self.sessions.turn_for_task(result.task_id)
            if turn is None:
                return
            outputs = {s.step_id: s.output for s in result.steps if s.status == "completed"}
            # A failed turn has no answer: its error says what to do to the user, and is no fact for the next
            # turn's planner (the turn's status records that it failed).
            answer = result.answer or result.question
            self.sessions.finish_turn(turn.session_id, turn.turn_no, answer=answer, status=result.status,
                                      evidence=compact_evidence(result.plan, outputs))
        except _MEMORY_ERRORS:
            log.exception("could not record the session turn of task %s", result.task_id)

    # ------------------------------------------------------------------ plan cache
    def cached_plan(self, task: str, tool_schema: Callable[[str], Mapping[str, Any] | None], *,
                    max_steps: int) -> CachedPlan | PlanHint | None:
        """What the plan cache offers ``task``: a plan filled by code (validated, as the planner's plan would be,
        against the tools available now), a template for the planner to adapt, or None (plan as usual: no match,
        or a template that calls a tool gone since)."""
        if not self._cfg.plan_cache:
            return None
        try:
            hit = self.cache.lookup(task)
        except _MEMORY_ERRORS:
            log.exception("plan cache lookup failed; planning as usual")
            return None
        if hit is None:
            return None
        if isinstance(hit.reuse, Adapt):
            return self._hint(hit.template_id, hit.reuse, tool_schema, task)
        plan = hit.reuse.plan
        schemas = {s.tool_name: tool_schema(s.tool_name) for s in plan.steps if s.tool_name is not None}
        if any(schema is None for schema in schemas.values()):
            return None
        try:
            validate_plan(plan, {k: v for k, v in schemas.items() if v is not None}, max_steps=max_steps)
        except PlanningError as exc:
            log.info("cached template %s does not fit the current tools (%s); planning as usual",
                     hit.template_id, exc)
            return None
        return CachedPlan(hit.template_id, plan)

    def _hint(self, template_id: str, reuse: Adapt,
              tool_schema: Callable[[str], Mapping[str, Any] | None], task: str) -> PlanHint | None:
        try:
            template = self.cache.get(template_id).template
        except _MEMORY_ERRORS:  # TemplateNotFoundError: evicted or cleared since the lookup
            return None
        if any(tool_schema(name) is None for name in template.tools):
            return None  # a hint naming a tool that is gone would mislead the planner
        return PlanHint(template_id, hint_block(reuse.guidance), best_guess(template, task))

    def record_reuse(self, template_id: str, accepted: bool) -> None:
        """The reflector's first verdict on a reused plan (filled, or adapted by the planner from the template): a
        rejection counts against the template."""
        if not self._cfg.plan_cache:
            return
        try:
            if self.cache.record_outcome(template_id, accepted) is None:
                log.info("plan template %s evicted after wrong reuses", template_id)
        except _MEMORY_ERRORS:  # TemplateNotFoundError: cleared meanwhile (`tetrarch cache clear`)
            log.info("could not record the outcome of plan template %s", template_id)

    def remember(self, task: str, plan: Plan) -> None:
        """An accepted task's plan becomes (or strengthens) a template."""
        if not self._cfg.plan_cache or not plan.steps:
            return
        try:
            self.cache.put(task, plan)
        except _MEMORY_ERRORS:
            log.exception("could not store the plan template of an accepted task")

    def close(self) -> None:
        for store in (self._sessions, self._cache):
            if store is not None:
                store.close()
        self._sessions = self._cache = None
