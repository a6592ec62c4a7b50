"""The plan cache's table: templates of accepted tasks, their reuse record, and eviction of bad ones.

Table ``memory_plan_templates`` (in the store file): one row per template id with the template's JSON, its
shape key (indexed: a lookup reads only the templates of the task's shape), the tools it calls, and its record:
``sources`` (accepted tasks that produced it), ``hits`` (reuses with a recorded outcome), ``successes`` and
``failures`` (reuses the reflector accepted / rejected). ``EvictionPolicy`` decides when a template goes.

Example:
    >>> from planning.models import Plan
    >>> plan = Plan.model_validate({"steps": [{"step_id": 1, "description": "population of Paris",
    ...     "tool_name": "lookup", "tool_input": {"city": "Paris"}, "depends_on": []}]})
    >>> cache = PlanCacheStore(":memory:")
    >>> cached = cache.put("Population of Paris?", plan)
    >>> hit = cache.lookup("Population of Rome?")
    >>> hit.template_id == cached.template_id, hit.reuse.plan.steps[0].tool_input
    (True, {'city': 'Rome'})
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from agents.memory._db import Database
from agents.memory.errors import TemplateNotFoundError
from agents.memory.literals import shape_key
from agents.memory.plan_cache import (
    Adapt,
    Filled,
    NoMatch,
    PlanTemplate,
    extract_template,
    plan_reuse,
    template_from_json,
    template_id,
    template_to_json,
)
from planning.models import Plan

__all__ = ["CacheHit", "CachedTemplate", "EvictionPolicy", "PlanCacheStore", "should_evict"]

SCHEMA_VERSION = 1
_DDL = (
    """CREATE TABLE IF NOT EXISTS memory_plan_templates (
        template_id TEXT PRIMARY KEY, shape_key TEXT NOT NULL, template_json TEXT NOT NULL,
        tools_json TEXT NOT NULL, example_task TEXT NOT NULL, fillable INTEGER NOT NULL,
        sources INTEGER NOT NULL DEFAULT 1, hits INTEGER NOT NULL DEFAULT 0,
        successes INTEGER NOT NULL DEFAULT 0, failures INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL, last_used_at REAL)""",
    "CREATE INDEX IF NOT EXISTS memory_plan_templates_by_key ON memory_plan_templates(shape_key)",
)
_COLUMNS = ("template_id, template_json, example_task, sources, hits, successes, failures, created_at, "
            "last_used_at")


@dataclass(frozen=True, slots=True)
class EvictionPolicy:
    """A template is evicted after ``max_failures`` wrong reuses, or once its failure rate exceeds
    ``max_failure_rate`` over at least ``min_outcomes`` outcomes. The accepted tasks that produced it count as
    successes: one early failure of a template that worked twice does not evict it."""

    max_failures: int = 2
    max_failure_rate: float = 0.5
    min_outcomes: int = 2


def should_evict(sources: int, successes: int, failures: int, policy: EvictionPolicy = EvictionPolicy()) -> bool:
    """The eviction rule, pure.

    >>> should_evict(1, 0, 1), should_evict(1, 0, 2), should_evict(1, 2, 1)
    (False, True, False)
    """
    outcomes = sources + successes + failures
    if failures >= policy.max_failures:
        return True
    return outcomes >= policy.min_outcomes and failures / outcomes > policy.max_failure_rate


@dataclass(frozen=True, slots=True)
class CachedTemplate:
    """A row of the cache: the template and its reuse record (``tetrarch cache list`` prints these)."""

    template_id: str
    template: PlanTemplate
    example_task: str
    sources: int
    hits: int
    successes: int
    failures: int
    created_at: float
    last_used_at: float | None


@dataclass(frozen=True, slots=True)
class CacheHit:
    """A usable template for a task: ``reuse`` is ``Filled`` (skip the planner) or ``Adapt`` (the planner
    adapts ``reuse.guidance``). Report the outcome with ``record_outcome(template_id, accepted)``."""

    template_id: str
    reuse: Filled | Adapt


def _row(row: tuple) -> CachedTemplate:
    return CachedTemplate(row[0], template_from_json(row[1]), *row[2:])


class PlanCacheStore:
    """Plan templates in the store file.

    Example:
        >>> cache = PlanCacheStore(":memory:")
        >>> cache.lookup("anything at all") is None, cache.list(), cache.clear()
        (True, [], 0)
    """

    def __init__(self, path: str | os.PathLike[str], *, policy: EvictionPolicy = EvictionPolicy(),
                 clock: Callable[[], float] = time.time) -> None:
        self._db = Database(path)
        self._db.ensure_schema("plan_cache", SCHEMA_VERSION, _DDL)
        self._policy, self._clock = policy, clock

    def put(self, task: str, plan: Plan) -> CachedTemplate:
        """Store the template of an accepted task (the same template again counts one more source)."""
        return self.put_template(extract_template(task, plan))

    def put_template(self, template: PlanTemplate) -> CachedTemplate:
        tid = template_id(template)
        with self._db.write() as conn:
            conn.execute(
                """INSERT INTO memory_plan_templates (template_id, shape_key, template_json, tools_json,
                   example_task, fillable, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT(template_id) DO UPDATE SET sources = memory_plan_templates.sources + 1""",
                (tid, template.key, template_to_json(template), json.dumps(sorted(template.tools)),
                 template.example_task, int(template.fillable), self._clock()))
        return self.get(tid)

    def get(self, template_id: str) -> CachedTemplate:
        rows = self._db.read(f"SELECT {_COLUMNS} FROM memory_plan_templates WHERE template_id = ?", (template_id,))
        if not rows:
            raise TemplateNotFoundError(template_id)
        return _row(rows[0])

    def lookup(self, task: str, *, available_tools: Collection[str] | None = None) -> CacheHit | None:
        """The best template for ``task``: same shape, tools all available, best record first (successes minus
        failures, then fillable ones, then the most recently used). None: plan from scratch."""
        rows = self._db.read(
            f"""SELECT {_COLUMNS} FROM memory_plan_templates WHERE shape_key = ?
                ORDER BY successes + sources - failures DESC, fillable DESC, COALESCE(last_used_at, created_at) DESC,
                template_id""", (shape_key(task),))
        for cached in map(_row, rows):
            if available_tools is not None and not cached.template.tools <= set(available_tools):
                continue
            reuse = plan_reuse(cached.template, task)
            if not isinstance(reuse, NoMatch):
                return CacheHit(cached.template_id, reuse)
        return None

    def record_outcome(self, template_id: str, accepted: bool) -> CachedTemplate | None:
        """Record one reuse: ``accepted`` when the reflector accepted the reused plan at first reflection, False
        when it asked for a retry, a replan or escalated (a wrong reuse). Returns the updated record, or None
        when this outcome evicted the template."""
        column = "successes" if accepted else "failures"
        with self._db.write() as conn:
            row = conn.execute(
                f"UPDATE memory_plan_templates SET hits = hits + 1, {column} = {column} + 1, last_used_at = ? "
                "WHERE template_id = ? RETURNING sources, successes, failures",
                (self._clock(), template_id)).fetchone()
            if row is None:
                raise TemplateNotFoundError(template_id)
            if should_evict(*row, policy=self._policy):
                conn.execute("DELETE FROM memory_plan_templates WHERE template_id = ?", (template_id,))
                return None
        return self.get(template_id)

    def list(self) -> list[CachedTemplate]:
        """Every template, most used first."""
        rows = self._db.read(f"SELECT {_COLUMNS} FROM memory_plan_templates ORDER BY hits DESC, created_at, template_id")
        return [_row(r) for r in rows]

    def remove(self, template_id: str) -> None:
        with self._db.write() as conn:
            if conn.execute("DELETE FROM memory_plan_templates WHERE template_id = ?", (template_id,)).rowcount == 0:
                raise TemplateNotFoundError(template_id)

    def clear(self) -> int:
        """Drop every template; returns how many there were."""
        with self._db.write() as conn:
            return conn.execute("DELETE FROM memory_plan_templates").rowcount

    def close(self) -> None:
        self._db.close()
