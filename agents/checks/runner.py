"""Running the user's checks against a proposed answer, and folding what they find into the policy's input.

Pure of Ray and of the engine: the task runner builds the ``AnswerReview``, awaits ``run_checks`` and hands
``with_findings`` the policy context. A check that raises ``Reject`` refuses the answer; one that raises anything
else, returns anything but None (``False``, a message: a verdict the check should have raised), or outlives its
time limit, is a fault in the check: the task fails naming it (``CheckRun.fault``), since
accepting or refusing on a broken check would both be guesses.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents.checks.api import AnswerReview, Check, CheckFinding, Reject
from agents.errors import short_repr
from planning.policy import ReflectionContext
from planning.text_limits import cap_text

__all__ = ["CheckRun", "check_name", "run_checks", "with_findings", "builtin_findings", "validate_checks"]


@dataclass(frozen=True, slots=True)
class CheckRun:
    """What the user's checks made of one answer: their refusals, or the fault of a check that broke."""

    findings: tuple[CheckFinding, ...] = ()
    fault: str | None = None
    """Set when a check raised something other than ``Reject`` or ran past its limit: the task must fail."""


def check_name(check: Any) -> str:
    """The name a check is reported by: its function's name (a ``partial`` by its function's, an object by its
    class)."""
    target = getattr(check, "func", check)
    return getattr(target, "__name__", None) or type(target).__name__


def validate_checks(checks: Sequence[Any] | None) -> tuple[Check, ...]:
    """The checks as given to ``Orchestrator(checks=...)``; anything not callable is the caller's mistake."""
    if checks is None:
        return ()
    if callable(checks) or isinstance(checks, (str, bytes)):
        raise TypeError("checks= takes a list of functions, e.g. checks=[names_rome]; got a single "
                        f"{type(checks).__name__}")
    found = tuple(checks)
    for c in found:
        if not callable(c):
            raise TypeError(f"every check must be a function taking an AnswerReview; got {c!r} "
                            f"({type(c).__name__})")
    return found


class _CheckExited(Exception):
    """A check raised SystemExit or KeyboardInterrupt. Either would leave an asyncio task as it is and stop the
    event loop that runs every task (the in-process runtime's thread, the Supervisor's loop), so it becomes an
    ordinary exception where the check raised it, and the check's fault."""


async def _call(check: Check, review: AnswerReview) -> object:
    """What the check returned (awaited when it is a coroutine)."""
    try:
        return await _call_unguarded(check, review)
    except (SystemExit, KeyboardInterrupt) as exc:
        raise _CheckExited(f"{type(exc).__name__}({exc})" if str(exc) else type(exc).__name__) from None


async def _call_unguarded(check: Check, review: AnswerReview) -> object:
    if inspect.iscoroutinefunction(getattr(check, "func", check)) or inspect.iscoroutinefunction(check):
        return await check(review)  # type: ignore[misc]
    # A plain function runs in a worker thread: one slow check must not stall the other tasks on this loop.
    result = await asyncio.to_thread(check, review)
    if inspect.isawaitable(result):  # a plain callable that hands back a coroutine (a lambda, a wrapper)
        return await result
    return result


async def _one(check: Check, review: AnswerReview, timeout_s: float) -> CheckFinding | str | None:
    """None when the check passes, a finding when it refuses, the fault's text when it breaks."""
    name = check_name(check)
    call = asyncio.ensure_future(_call(check, review))
    # asyncio.wait, not wait_for: a TimeoutError the check raises itself is its own fault, not our time limit.
    done, _ = await asyncio.wait({call}, timeout=timeout_s)
    if not done:
        call.cancel()
        return (f"the answer check {name!r} did not finish within {timeout_s:g}s "
                "(RuntimeConfig.check_timeout_s); make it faster or raise the limit, then submit the task again")
    try:
        returned = call.result()
    except Reject as exc:
        # A check's message reaches every later prompt and the stored result: cut, never counted whole.
        return CheckFinding(check=name, source="user", message=cap_text(exc.reason))
    except _CheckExited as exc:
        return (f"the answer check {name!r} raised {exc}, which would end the process; a check returns None to "
                "pass and raises agents.checks.Reject('why') to refuse; fix the check and submit the task again")
    except Exception as exc:  # noqa: BLE001 - any fault of the user's code becomes the task's clear failure
        return (f"the answer check {name!r} raised {type(exc).__name__}: {cap_text(str(exc))}. A check returns "
                "None to pass and raises agents.checks.Reject('why') to refuse; fix the check and submit the task "
                "again")
    if returned is not None:
        # False, "wrong year", True: whether the user meant pass or refuse is a guess either way (a returned
        # False once passed silently). Only None passes; the task fails naming the check and what it returned.
        return (f"the answer check {name!r} returned {short_repr(returned)} ({type(returned).__name__}); a check returns None "
                "to pass and raises agents.checks.Reject('why') to refuse, it never returns a verdict. Fix the "
                "check and submit the task again")
    return None


async def run_checks(checks: Sequence[Check], review: AnswerReview, *, timeout_s: float) -> CheckRun:
    """Every check against one answer, concurrently; findings in the order the checks were given. All checks
    run even when one refuses, so the reviewer and the planner hear every complaint at once."""
    if not checks:
        return CheckRun()
    outcomes = await asyncio.gather(*(_one(c, review, timeout_s) for c in checks))
    faults = [o for o in outcomes if isinstance(o, str)]
    if faults:
        return CheckRun(fault=faults[0])
    return CheckRun(findings=tuple(o for o in outcomes if isinstance(o, CheckFinding)))


def builtin_findings(context: ReflectionContext) -> tuple[CheckFinding, ...]:
    """The built-in checks' refusals as the record shows them beside the user's."""
    return tuple(CheckFinding(check="builtin", source="builtin", message=text) for text in context.contradictions)


def with_findings(context: ReflectionContext, findings: Sequence[CheckFinding]) -> ReflectionContext:
    """The policy's input with the user's refusals added to code's contradictions: an accept they refuse is not
    one. A refused answer is no longer one code vouches for (``checked``), whatever its figures."""
    if not findings:
        return context
    added = tuple(f"Check {f.check}: {f.message.rstrip('.')}." for f in findings)
    return dataclasses.replace(context, contradictions=context.contradictions + added, states_computed=False)
