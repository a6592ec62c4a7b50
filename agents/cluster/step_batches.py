"""Steps that became ready together, sent to one executor as one call: the Supervisor's side of
``ExecutorActor.run_batch``.

Each step keeps a handle of its own whose outcome resolves the moment the executor reports that step (the
executor yields outcomes as they finish), so steps of one batch are timed, cancelled, retried and
re-dispatched one by one exactly as steps sent alone. A large output arrives as an object of its own, right
after the outcome list that names it; dependents get its reference, never a second copy.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError, RayTaskError

from agents.engine.runtime import ExecutorLost
from agents.roles.messages import StepOutcome, StepRequest

__all__ = ["ACTOR_ERRORS", "BatchedStepHandle", "failed_inside", "lost_reason", "read_batch"]

log = logging.getLogger("tetrarch.ray")

ACTOR_ERRORS = (RayActorError, ActorDiedError, ActorUnavailableError)


def lost_reason(exc: BaseException) -> str:
    """The user's words for a lost executor; Ray's own (``RpcError … rpc_code: 14``) go to the log only."""
    # A warning, not info: a lost executor costs a re-dispatch, and the log is the only place Ray's own
    # words about why it died (OOM, node gone, a crash) are kept.
    log.warning("executor lost (%s): %s", type(exc).__name__, exc)
    match exc:
        case ActorUnavailableError():
            return "the executor process is unreachable (its node may be down or restarting)"
        case ActorDiedError() if "ray.kill" in str(exc):
            return "the executor process was stopped (it stopped answering and was replaced)"
        case _:
            return "the executor process died (it crashed, ran out of memory, or its node went away)"


def failed_inside(req: StepRequest, executor: str, exc: RayTaskError) -> StepOutcome:
    """The executor is alive but something its step awaited failed (the journal actor, a dependency's object).
    Ray makes such an error an instance of its cause too (RayTaskError(ActorDiedError)), so it must be told
    apart from this executor's death, or the step would be re-dispatched for nothing."""
    log.warning("step %d failed inside %s (%s): %s", req.step.step_id, executor, type(exc.cause).__name__, exc.cause)
    now = time.time()
    return StepOutcome(step_id=req.step.step_id, attempt=req.attempt, ok=False, started_at=now, finished_at=now,
                       error_kind="transient", executor=executor,
                       error=f"step {req.step.step_id} failed inside {executor}: {type(exc.cause).__name__}: "
                             f"{exc.cause}")


class BatchedStepHandle:
    """One step of a batch (``agents.engine.runtime.StepHandle``)."""

    def __init__(self, req: StepRequest, key: str, executor: str, node_id: str,
                 on_done: Callable[[str, bool], None], cancel: Callable[[str], None],
                 replace: Callable[[], None]) -> None:
        self.req, self.key = req, key
        self.output_ref: Any = None
        self.executor, self.node_id = executor, node_id
        self._on_done, self._cancel, self._replace = on_done, cancel, replace
        self._future: asyncio.Future[StepOutcome] = asyncio.get_running_loop().create_future()
        # A step dropped before its outcome was awaited (a retry reset it) may still be lost with its batch.
        self._future.add_done_callback(lambda f: f.cancelled() or f.exception())

    async def outcome(self) -> StepOutcome:
        node, lost = "", False
        try:
            outcome = await self._future
            node = outcome.node_id
            return outcome
        except ExecutorLost:
            lost = True
            raise
        finally:
            self._on_done(node, lost)

    def settled(self) -> StepOutcome | None:
        f = self._future
        return f.result() if f.done() and not f.cancelled() and f.exception() is None else None

    def resolve(self, outcome: StepOutcome, output_ref: Any = None) -> None:
        if not self._future.done():
            self.output_ref = output_ref
            self._future.set_result(outcome)

    def lose(self, exc: BaseException) -> None:
        if not self._future.done():
            self._future.set_exception(exc)

    def cancel(self) -> None:
        if not self._future.done():
            self._cancel(self.key)

    def replace_executor(self) -> None:
        self._replace()


async def read_batch(stream: Any, handles: list[BatchedStepHandle]) -> None:
    """Resolve each handle from the batch's stream as its outcome arrives; when the stream fails, the steps it
    did not report fail as their single calls would have (the executor lost, or a failure inside it)."""
    pending = {h.key: h for h in handles}
    try:
        async for ref in stream:
            large: list[tuple[BatchedStepHandle | None, StepOutcome]] = []
            for key, outcome in await ref:
                handle = pending.pop(key, None)
                if outcome.ok and not outcome.output_inline:
                    large.append((handle, outcome))  # its output is the stream's next object
                elif handle is not None:
                    handle.resolve(outcome)
            for handle, outcome in large:
                output_ref = await stream.__anext__()
                if handle is not None:
                    handle.resolve(outcome, output_ref)
    except RayTaskError as exc:
        for handle in pending.values():
            handle.resolve(failed_inside(handle.req, handle.executor, exc))
    except ACTOR_ERRORS as exc:
        reason = lost_reason(exc)
        for handle in pending.values():
            handle.lose(ExecutorLost(reason))
    except Exception as exc:  # noqa: BLE001 - every step of the batch still gets an answer
        log.exception("reading a batch of %d steps failed", len(handles))
        for handle in pending.values():
            handle.lose(ExecutorLost(f"the executor's reply could not be read ({type(exc).__name__}: {exc})"))
    # Steps the executor did not report were cancelled there (their handles were dropped before).
    for handle in pending.values():
        handle.lose(ExecutorLost("the executor ended the batch without this step's outcome"))
