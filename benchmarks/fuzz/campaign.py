"""A fuzz run: many hypothesis examples per role, every outcome counted, crashes sampled — never raised."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from benchmarks.fuzz.example import Outcome, run_example
from benchmarks.fuzz.strategies import texts_for

__all__ = ["ROLES", "SAMPLES_KEPT", "FuzzStats", "RoleStats", "fuzz", "fuzz_role"]

ROLES = ("router", "planner", "executor", "executor_repair", "reflector")
SAMPLES_KEPT = 5
"""Unhandled examples kept per role for the report (text and traceback), enough to reproduce."""


@dataclass
class RoleStats:
    examples: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    unhandled: int = 0
    samples: list[tuple[list[str], str]] = field(default_factory=list)
    wall_s: float = 0.0

    def record(self, texts: Sequence[str], outcome: Outcome) -> None:
        self.examples += 1
        self.statuses[outcome.status] += 1
        self.reasons[outcome.stopped_reason] += 1
        if outcome.unhandled is not None:
            self.unhandled += 1
            if len(self.samples) < SAMPLES_KEPT:
                self.samples.append((list(texts), outcome.unhandled))


@dataclass
class FuzzStats:
    seed: int
    roles: dict[str, RoleStats] = field(default_factory=dict)
    wall_s: float = 0.0

    @property
    def examples(self) -> int:
        return sum(r.examples for r in self.roles.values())

    @property
    def unhandled(self) -> int:
        return sum(r.unhandled for r in self.roles.values())


def fuzz_role(role: str, examples: int, seed_value: int) -> RoleStats:
    """Run ``examples`` hypothesis examples against ``role``. Never raises for a crash of the system under
    test: crashes are counted (a fuzz run reports all of them, not the first)."""
    stats = RoleStats()
    loop = asyncio.new_event_loop()
    # A background task that failed with nobody awaiting it is a crash too, only a silent one: asyncio
    # reports it (when the task is freed, at the latest when its example's objects are) to this handler.
    silent: list[str] = []
    loop.set_exception_handler(lambda _loop, context: silent.append(
        f"{context.get('message', '')}: {context.get('exception')!r}"))

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(st.lists(texts_for(role), min_size=1, max_size=3))
    def one(texts: list[str]) -> None:
        outcome = loop.run_until_complete(run_example(role, texts))
        if silent and outcome.unhandled is None:
            outcome = Outcome(outcome.status, outcome.stopped_reason, "; ".join(silent))
        silent.clear()
        stats.record(texts, outcome)

    started = time.perf_counter()
    try:
        one()
    finally:
        loop.close()
        stats.wall_s += time.perf_counter() - started
    return stats


def fuzz(roles: Sequence[str] = ROLES, examples_per_role: int = 100, seed_value: int = 0,
         progress: Callable[[str], None] | None = None) -> FuzzStats:
    # The runner logs every internal error with a traceback; the counts and samples carry that here.
    # The level is put back afterwards: callers (the test suite) keep their own logging.
    logger = logging.getLogger("tetrarch")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        stats = FuzzStats(seed=seed_value)
        started = time.perf_counter()
        for role in roles:
            role_stats = stats.roles[role] = fuzz_role(role, examples_per_role, seed_value)
            if progress is not None:
                progress(f"{role}: {role_stats.examples} examples, {role_stats.unhandled} unhandled, "
                         f"{role_stats.wall_s:.1f}s")
        stats.wall_s = time.perf_counter() - started
        return stats
    finally:
        logger.setLevel(level)
