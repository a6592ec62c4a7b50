"""One dispatched step attempt as the execution tracks it, and how its outcome is awaited.

Kept apart from ``agents.engine.execution`` (the plan loop): awaiting an outcome is the same whichever way the
step travelled (alone or in a batch), and the outer bound that detects a wedged executor lives here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agents.engine.runtime import Runtime, StepHandle
from agents.roles.messages import StepOutcome, StepRequest
from planning.models import PlanStep

__all__ = ["BY_CODE", "Running", "about", "await_outcome", "preview"]

BY_CODE = "code"
"""The ``executor`` of a step the engine answered itself, without an executor or a model call
(``agents.checks.numeric.name_hops``): the trace and the progress view say so."""

_PREVIEW_CHARS = 200
_WEDGED_AFTER_S = 10.0
"""How long past its own timeout a step may stay unanswered before its executor counts as wedged."""


@dataclass(slots=True)
class Running:
    step_id: int
    attempt: int
    request: StepRequest
    handle: StepHandle
    redispatches: int = 0


async def await_outcome(run: Running, rt: Runtime, clock: Callable[[], float]) -> tuple[StepOutcome, Any]:
    """The outcome and, for a success, the output value (inline in the outcome when small; fetched here
    when not, so the step's completion, its output and its event are written together)."""
    # The executor enforces the step timeout itself; this outer bound also covers a wedged executor.
    try:
        async with asyncio.timeout(run.request.timeout_s + _WEDGED_AFTER_S):
            outcome = await run.handle.outcome()
            if not outcome.ok or outcome.output_inline:
                return outcome, outcome.output
            return outcome, await rt.fetch(run.handle.output_ref)
    except TimeoutError:
        settled = run.handle.settled()
        if settled is not None and (not settled.ok or settled.output_inline):
            # The outcome had arrived: this loop ran late, and the bound's timer came before the outcome's wake-up.
            # Blaming the executor would restart a live process and fail the steps it was running.
            return settled, settled.output
        run.handle.cancel()
        # The executor did not even enforce the step timeout itself: its process is wedged (a tool blocked its
        # event loop or ended it). It is replaced; the step is not sent elsewhere, since it would wedge the next.
        run.handle.replace_executor()
        now = clock()
        executor = getattr(run.handle, "executor", "") or "its executor"
        return StepOutcome(step_id=run.step_id, attempt=run.attempt, ok=False, started_at=now, finished_at=now,
                           error_kind="timeout", executor=getattr(run.handle, "executor", ""),
                           error=f"step {run.step_id} did not answer within step_timeout_s="
                                 f"{run.request.timeout_s:g}s: {executor} stopped responding (the tool may block "
                                 "its process) and was restarted; fix the tool or raise step_timeout_s"), None


def preview(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _PREVIEW_CHARS else text[:_PREVIEW_CHARS] + "…"


def about(step: PlanStep) -> str:
    """What a step looked up, in words: its description and its text arguments ("population of Paris")."""
    texts = [v for v in step.tool_input.values() if isinstance(v, str)] if isinstance(step.tool_input, dict) else []
    return " ".join([step.description, *texts])
