"""``Runtime`` over Ray actors. Lives in the Supervisor process.

Step outputs stay in the object store: an executor returns two objects (small outcome, output), the
Supervisor awaits only the outcome and hands the output's ObjectRef to dependent steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from dataclasses import dataclass
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import ray
from ray.exceptions import GetTimeoutError, RayTaskError, TaskCancelledError

from agents.cluster.executor_actor import BatchItem
from agents.cluster.placement import LeastLoaded
from agents.config.prices import CostBudget
from agents.outputs import OutputSpec
from agents.cluster.step_batches import ACTOR_ERRORS, BatchedStepHandle, failed_inside, lost_reason, read_batch
from agents.engine.runtime import ExecutorLost, StepHandle
from agents.errors import RoleUnavailableError
from agents.roles.messages import (
    PlanItem,
    PlanRestarted,
    ReplanContext,
    RoleResult,
    SecondLook,
    StepEmitted,
    StepOutcome,
    StepRequest,
    StepView,
)
from agents.tools import ToolSpec
from planning.models import Plan, Reflection, RouterDecision

__all__ = ["RayRuntime"]

log = logging.getLogger("tetrarch.ray")
T = TypeVar("T")

_ACTOR_ERRORS = ACTOR_ERRORS
_ROLE_RETRIES = 8
_LOST_EXECUTOR_PAUSE_S = 15.0


class _RayStepHandle:
    def __init__(self, meta_ref: ray.ObjectRef, output_ref: ray.ObjectRef, on_done: Callable[[str, bool], None],
                 executor: str, node_id: str, replace: Callable[[], None], req: StepRequest) -> None:
        self._meta = meta_ref
        self._req = req
        self._replace = replace
        self.output_ref: Any = output_ref
        self._on_done = on_done
        self.executor = executor
        self.node_id = node_id
        """The node this executor last ran on ("" before its first step): a restarted executor may move."""

    async def outcome(self) -> StepOutcome:
        node, lost = "", False
        try:
            outcome: StepOutcome = await self._meta
            node = outcome.node_id
            return outcome
        except RayTaskError as exc:
            return failed_inside(self._req, self.executor, exc)  # alive: not this executor's death
        except _ACTOR_ERRORS as exc:
            lost = True
            raise ExecutorLost(lost_reason(exc)) from exc
        finally:
            self._on_done(node, lost)

    def settled(self) -> StepOutcome | None:
        try:
            ready, _ = ray.wait([self._meta], timeout=0)
            return ray.get(ready[0]) if ready else None
        except RayTaskError as exc:
            # As outcome() reads it: the step failed inside a live executor, which must not be restarted.
            return failed_inside(self._req, self.executor, exc)
        except Exception:  # noqa: BLE001 - a lost executor is for outcome() to tell
            return None

    def cancel(self) -> None:
        try:
            ray.cancel(self._meta)
        except Exception:  # noqa: BLE001 - cancelling a finished or lost task is fine
            pass

    def replace_executor(self) -> None:
        self._replace()


class _Replicas:
    """The replicas of one role and how busy each is."""

    def __init__(self, role: str, handles: Sequence[Any]) -> None:
        if not handles:
            raise ValueError(f"no {role} actors")
        self.role = role
        self.handles = list(handles)
        self.balance = LeastLoaded(len(self.handles))

    @contextlib.asynccontextmanager
    async def _on_replica(self) -> AsyncIterator[_RoleCall]:
        """The least busy replica for one call. Cancelled (the task was, or its run stopped), the role's call is
        stopped too without waiting for it; a role's own error comes out as itself, not Ray's wrapper."""
        index = self.balance.acquire()
        call = _RoleCall(self.handles[index])
        try:
            yield call
        except asyncio.CancelledError:
            if call.pending is not None:
                with contextlib.suppress(Exception):
                    ray.cancel(call.pending)
            raise
        except RayTaskError as exc:
            raise _role_error(exc) from None
        finally:
            self.balance.release(index)

    async def call(self, method: str, *args: Any) -> Any:
        async with self._on_replica() as call:
            call.pending = getattr(call.handle, method).remote(*args)
            return await call.pending

    async def stream(self, method: str, on_piece: Callable[[Any], None], *args: Any) -> Any:
        """A streaming generator method: the items of each list it yields to ``on_piece`` as they arrive; its
        last item, which is not a list, is the call's result."""
        async with self._on_replica() as call:
            call.pending = stream = getattr(call.handle, method).options(num_returns="streaming").remote(*args)
            last = None
            async for ref in stream:
                item = await ref
                if isinstance(item, list):
                    for piece in item:
                        on_piece(piece)
                else:
                    last = item
            return last


@dataclass(slots=True)
class _RoleCall:
    """One call on a role replica: the actor, and what to cancel while the call is under way."""

    handle: Any
    pending: Any = None


def _role_error(exc: RayTaskError) -> BaseException:
    """The role's own error (an invalid reply after its repair round, a model that failed): Ray's wrapper is also
    an instance of it, but its message is the actor's traceback (pid, ip, file paths), which would become the
    task's error and a session turn's memory. The engine gets the role's error as the role raised it, exactly as
    in process."""
    cause = exc.cause if isinstance(getattr(exc, "cause", None), Exception) else None
    return exc if cause is None else cause


class RayRuntime:
    def __init__(self, routers: Sequence[Any], planners: Sequence[Any], reflectors: Sequence[Any],
                 executors: Sequence[Any], tool_specs: Mapping[str, ToolSpec]) -> None:
        self._router, self._reflector = _Replicas("router", routers), _Replicas("reflector", reflectors)
        self._planner = _Replicas("planner", planners)
        self._executors = list(executors)
        self._balance = LeastLoaded(len(self._executors))
        self._nodes = [""] * len(self._executors)
        self._lost_until: dict[int, float] = {}
        self._cancels: dict[int, list[str]] = {}
        self._readers: set[asyncio.Future[None]] = set()
        self._specs = dict(tool_specs)
        self._tools: list[Any] | None = None
        """The tool list pushed by ``use_tools`` (None: the start-up list every actor was built with)."""

    @property
    def pool_size(self) -> int:
        return len(self._executors)

    def executor_load(self) -> list[int]:
        """Steps in flight per executor (index = executor number)."""
        return self._balance.load()

    def add_executors(self, executors: Sequence[Any]) -> None:
        """Grow the pool (a node joined)."""
        self._executors.extend(executors)
        self._balance.grow(len(executors))
        self._nodes.extend([""] * len(executors))
        if self._tools is not None:  # started by the driver with the start-up tools
            for executor in executors:
                executor.use_tools.remote(self._tools)

    async def use_tools(self, tools: Sequence[Any]) -> None:
        """Give every role the new tool list (an MCP server's list changed): executors first, so a plan made
        with the new catalog never reaches an executor that lacks its tools."""
        registry = await self._push_to_executors(tools)
        catalog, schemas = registry.catalog_text(), registry.schemas()
        await asyncio.gather(*(r.use_tools.remote(catalog) for r in self._router.handles),
                             *(p.use_tools.remote(schemas, catalog) for p in self._planner.handles),
                             *(r.use_tools.remote(catalog) for r in self._reflector.handles),
                             return_exceptions=True)

    async def _push_to_executors(self, tools: Sequence[Any]) -> Any:
        """The new tool list to every executor and to the step specs; returns its ``ToolRegistry``."""
        from agents.tools import ToolRegistry

        registry = ToolRegistry(tools)
        self._tools = list(registry)
        await asyncio.gather(*(e.use_tools.remote(self._tools) for e in self._executors), return_exceptions=True)
        self._specs = {t.name: t.spec for t in registry}
        return registry

    async def _with_restarts(self, call: Callable[[], Awaitable[T]], role: str) -> T:
        delay = 0.2
        for attempt in range(_ROLE_RETRIES):
            try:
                return await call()
            except _ACTOR_ERRORS as exc:
                if attempt == _ROLE_RETRIES - 1:
                    raise RoleUnavailableError(role, str(exc)) from exc
                log.warning("%s actor unavailable (%s); retrying in %.1fs", role, type(exc).__name__, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
        raise AssertionError("unreachable")

    async def route(self, task_id: str, task: str, history: str = "",
                    cost: CostBudget | None = None) -> RoleResult[RouterDecision]:
        return await self._with_restarts(lambda: self._router.call("route", task_id, task, history, cost),
                                         "router")

    async def reflect(self, task_id: str, task: str, plan: Plan, results: list[StepView],
                      again: SecondLook | None = None, cost: CostBudget | None = None,
                      output: OutputSpec | None = None, answer: Any = None) -> RoleResult[Reflection]:
        if answer is None:
            return await self._with_restarts(
                lambda: self._reflector.call("reflect", task_id, task, plan, results, again, cost, output),
                "reflector")

        def streamed() -> Awaitable[RoleResult[Reflection]]:
            answer(None)  # a retry after the actor died: what the lost reply streamed is void
            return self._reflector.stream("reflect_streamed", answer, task_id, task, plan, results, again, cost,
                                          output)

        return await self._with_restarts(streamed, "reflector")

    async def plan(self, task_id: str, task: str, replan: ReplanContext | None,
                   history: str = "", cost: CostBudget | None = None) -> AsyncIterator[PlanItem]:
        delay = 0.2
        for attempt in range(_ROLE_RETRIES):
            emitted = False
            index = self._planner.balance.acquire()
            stream = None
            try:
                planner = self._planner.handles[index]
                # Items the planner produced together arrive as one object (PlannerActor.plan_batched).
                stream = planner.plan_batched.options(num_returns="streaming").remote(task_id, task, replan,
                                                                                     history, cost)
                async for ref in stream:
                    for item in await ref:
                        emitted = emitted or isinstance(item, StepEmitted)
                        yield item
                stream = None
                return
            except (GeneratorExit, asyncio.CancelledError):
                # The reader stopped (a speculative plan the route made useless, a cancelled task): stop the
                # planner's model call too, or it keeps decoding for nobody and holds the planner's slot.
                if stream is not None:
                    with contextlib.suppress(Exception):
                        ray.cancel(stream)
                raise
            except _ACTOR_ERRORS as exc:
                if attempt == _ROLE_RETRIES - 1:
                    raise RoleUnavailableError("planner", str(exc)) from exc
                if emitted:
                    yield PlanRestarted(f"the planner restarted: {type(exc).__name__}")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
            finally:
                self._planner.balance.release(index)

    def dispatch(self, req: StepRequest, inputs: Mapping[int, Any]) -> StepHandle:
        return self._send_one(self._pick(), req, inputs)

    def dispatch_many(self, items: Sequence[tuple[StepRequest, Mapping[int, Any]]]) -> list[StepHandle]:
        """Steps that became ready together: one call per executor (``ExecutorActor.run_batch``) carries all the
        steps it gets; an executor that gets one step gets a plain call."""
        groups: dict[int, list[int]] = {}
        for pos in range(len(items)):
            groups.setdefault(self._pick(), []).append(pos)
        handles: list[Any] = [None] * len(items)
        for index, positions in groups.items():
            if len(positions) == 1:
                handles[positions[0]] = self._send_one(index, *items[positions[0]])
                continue
            batch_id = uuid.uuid4().hex[:12]
            batch: list[BatchItem] = []
            for n, pos in enumerate(positions):
                req, inputs = items[pos]
                key = f"{batch_id}:{n}"
                handles[pos] = BatchedStepHandle(req, key, f"executor-{index}", self._nodes[index],
                                                 self._on_step_done(index), lambda k, i=index: self._cancel(i, k),
                                                 lambda i=index: self._replace_executor(i))
                batch.append((key, req, dict(inputs)))
            stream = self._executors[index].run_batch.options(num_returns="streaming").remote(batch)
            reader = asyncio.ensure_future(read_batch(stream, [handles[pos] for pos in positions]))
            self._readers.add(reader)  # read_batch answers every handle itself, whatever happens
            reader.add_done_callback(self._readers.discard)
        return handles

    def _pick(self) -> int:
        # An executor that just died is restarting (its node may be gone): re-sending the lost step to it
        # would lose the step again, so it gets no steps for a while unless no other executor is left.
        now = time.monotonic()
        if self._lost_until:
            self._lost_until = {i: t for i, t in self._lost_until.items() if t > now}
        return self._balance.acquire(avoid=set(self._lost_until))

    def _on_step_done(self, index: int) -> Callable[[str, bool], None]:
        def done(node_id: str, lost: bool) -> None:
            self._balance.release(index)
            if node_id:
                self._nodes[index] = node_id
            if lost:
                self._lost_until[index] = time.monotonic() + _LOST_EXECUTOR_PAUSE_S
                if self._tools is not None:  # Ray restarts it from its constructor: the start-up tools
                    self._executors[index].use_tools.remote(self._tools)

        return done

    def _send_one(self, index: int, req: StepRequest, inputs: Mapping[int, Any]) -> StepHandle:
        meta_ref, output_ref = self._executors[index].run.options(num_returns=2).remote(req, dict(inputs))
        return _RayStepHandle(meta_ref, output_ref, self._on_step_done(index), f"executor-{index}",
                              self._nodes[index], lambda i=index: self._replace_executor(i), req)

    def _cancel(self, index: int, key: str) -> None:
        """Cancel one step of a batch; the cancellations of one tick go to each executor as one call."""
        if not self._cancels:
            asyncio.get_running_loop().call_soon(self._send_cancels)
        self._cancels.setdefault(index, []).append(key)

    def _send_cancels(self) -> None:
        cancels, self._cancels = self._cancels, {}
        for index, keys in cancels.items():
            with contextlib.suppress(Exception):  # a lost executor's steps are gone anyway
                self._executors[index].cancel_steps.remote(keys)

    def _replace_executor(self, index: int) -> None:
        """Kill a wedged executor and let Ray start it again (``max_restarts``): a process stuck in a tool never
        answers again, and round-robin would keep sending it steps. Its other steps in flight fail as
        ``ExecutorLost`` and are re-dispatched elsewhere."""
        log.warning("executor-%d stopped answering; restarting it", index)
        self._lost_until[index] = time.monotonic() + _LOST_EXECUTOR_PAUSE_S
        try:
            ray.kill(self._executors[index], no_restart=False)
        except Exception:  # noqa: BLE001 - already dead or restarting: Ray replaces it either way
            log.info("executor-%d was already gone", index)

    async def fetch(self, output_ref: Any) -> Any:
        if isinstance(output_ref, ray.ObjectRef):
            return await output_ref
        return output_ref

    def tool_spec(self, name: str | None) -> ToolSpec | None:
        return self._specs.get(name) if name else None


# Kept for callers that want to match on these without importing ray.exceptions.
TRANSIENT_RAY_ERRORS = (*_ACTOR_ERRORS, GetTimeoutError, TaskCancelledError)
