"""The live web view as an ASGI app (Starlette): pages, JSON, server-sent events, answering escalations.

Routes (``/tasks/<task_id>`` is fixed: links to a task are shared):

- ``GET /`` the task list; ``GET /tasks/<id>`` one task (DAG, reviews, timeline; replay when finished).
- ``GET /api/tasks`` the list as JSON; ``GET /api/tasks/stream`` the same as server-sent events, sent again
  whenever a task's row changes.
- ``GET /api/tasks/<id>/stream?after=N`` the task's events from seq N on (the stored ones first, then each new
  one as the store commits it; ``event: llm`` lines carry LLM-call timings and tokens, never prompts).
- ``GET /api/tasks/<id>/outputs/<plan_version>/<step_id>`` a step's stored output (redacted as stored).
- ``POST /api/tasks/<id>/respond`` ``{"text": ..., "by": ...}`` the same ``respond`` the API has.
- ``POST /api/tasks/<id>/cancel`` ``{}`` the same ``cancel`` the API has, as "the live view".

Every read goes through the store's public read API, polled (``poll_s``) from a worker thread, so tasks run by
any process on the same store show up live, and the page never holds a lock a running task waits for.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agents.errors import TaskNotWaitingError, UnknownTaskError
from agents.results import CancelOutcome
from agents.ui.auth import BearerAuth
from agents.ui.loopback import HostGuard, host_rule
from agents.ui.pages import STATIC, SecurityHeaders, server_error, static_page
from agents.config.prices import PriceTable
from agents.ui.reader import ReadableStore, TaskReader

__all__ = ["Canceller", "Responder", "create_app"]

Responder = Callable[[str, str, str], Awaitable[object]]
"""``(task_id, text, by)``: answer an escalation (``orch.respond``), recording ``by`` as who answered."""
Canceller = Callable[[str, str], Awaitable[CancelOutcome]]
"""``(task_id, by)``: cancel a task (``orch.cancel``; ``tetrarch ui`` cancels through the store)."""

log = logging.getLogger("tetrarch.ui")
MAX_SEQ = 2**63 - 1
"""The largest event seq a store can hold (a signed 64-bit integer in SQLite and PostgreSQL)."""


def _sse(kind: str, data: Any, event_id: int | None = None) -> bytes:
    """One server-sent event; ``event_id`` (an event's seq) lets a reconnecting browser resume after it."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'), default=str)}\n\n".encode()


def _seq(text: str | None) -> int | None:
    """A stream position (``after``, ``Last-Event-ID``): 0 when absent, None when it is not a seq."""
    try:
        seq = int(text or 0)
    except ValueError:
        return None
    return max(0, seq) if seq <= MAX_SEQ else None


class _Handlers:
    def __init__(self, reader: TaskReader, responder: Responder | None, poll_s: float, list_limit: int,
                 canceller: Canceller | None = None) -> None:
        self.reader, self.responder, self.poll_s, self.limit = reader, responder, poll_s, list_limit
        self.canceller = canceller
        self.closing = threading.Event()
        """Set when the server stops: open event streams end instead of holding the shutdown up."""

    async def _open(self, request: Request) -> bool:
        return not self.closing.is_set() and not await request.is_disconnected()

    async def index(self, request: Request) -> Response:
        return static_page("index.html")

    async def task_page(self, request: Request) -> Response:
        task_id = request.path_params["task_id"]
        if await asyncio.to_thread(self.reader.store.get_task, task_id) is None:
            return static_page("missing.html", status_code=404)
        return static_page("task.html")

    async def _rows(self) -> list[dict[str, Any]]:
        rows = await asyncio.to_thread(self.reader.rows, self.limit)
        return [r.model_dump(mode="json") for r in rows]

    async def tasks(self, request: Request) -> Response:
        return JSONResponse(await self._rows())

    async def tasks_stream(self, request: Request) -> Response:
        async def stream() -> AsyncIterator[bytes]:
            last = None
            while await self._open(request):
                rows = await self._rows()
                if rows != last:
                    last = rows
                    yield _sse("tasks", rows)
                await asyncio.sleep(max(self.poll_s, 0.25))

        return _event_stream(stream())

    async def task_stream(self, request: Request) -> Response:
        task_id = request.path_params["task_id"]
        store = self.reader.store
        row = await asyncio.to_thread(store.get_task, task_id)
        if row is None:
            return JSONResponse({"error": str(UnknownTaskError(task_id))}, status_code=404)
        after = _seq(request.query_params.get("after"))
        resumed = _seq(request.headers.get("last-event-id"))  # EventSource reconnecting after a dropped stream
        if after is None or resumed is None:
            return JSONResponse({"error": f"after (and Last-Event-ID) must be an event seq: a whole number from 0 "
                                          f"to {MAX_SEQ}"}, status_code=400)
        after = max(after, resumed)

        async def stream() -> AsyncIterator[bytes]:
            seq, calls = after, 0
            yield _sse("task", {"task_id": row.task_id, "task": row.task, "created": row.created_at,
                                "responder": self.responder is not None,
                                "canceller": self.canceller is not None})
            while await self._open(request):
                events = await asyncio.to_thread(store.events, task_id, seq)
                views = await asyncio.to_thread(self.reader.llm_calls, task_id, calls) if events or not seq else []
                for view in views:
                    calls = max(calls, view.index + 1)
                    yield _sse("llm", view.model_dump(mode="json"))
                for event in events:
                    seq = event.seq
                    yield _sse("event", event.model_dump(mode="json"), event.seq)
                await asyncio.sleep(self.poll_s)

        return _event_stream(stream())

    async def output(self, request: Request) -> Response:
        task_id = request.path_params["task_id"]
        key = (request.path_params["plan_version"], request.path_params["step_id"])
        outputs = await asyncio.to_thread(self.reader.store.get_step_outputs, task_id, key[0])
        if key not in outputs:
            return JSONResponse({"error": f"no stored output for step {key[1]} of plan v{key[0]}"}, status_code=404)
        return JSONResponse({"output": outputs[key]})

    async def respond(self, request: Request) -> Response:
        if self.responder is None:
            return JSONResponse({"error": "this page is read-only: start it with an LLM (tetrarch ui --llm ...) "
                                          "to answer escalations, or use `tetrarch respond`"}, status_code=403)
        if (refused := _not_json(request, "the answer")) is not None:
            return refused
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return JSONResponse({"error": 'send {"text": "...", "by": "..."}'}, status_code=400)
        text, by = body.get("text"), body.get("by") or ""
        if not isinstance(text, str) or not isinstance(by, str):
            # str() of an object would approve with "{'a': 1}": the answer must be the text a person wrote.
            return JSONResponse({"error": 'the answer must be text: send {"text": "approve", "by": "your name"}'},
                                status_code=400)
        text, by = text.strip(), by.strip()[:80]
        if not text:
            return JSONResponse({"error": "the answer is empty: write 'approve' or what the task should do"},
                                status_code=400)
        task_id = request.path_params["task_id"]
        client = request.client.host if request.client else "?"
        try:
            await self.responder(task_id, text, by or f"web page ({client})")
        except (TaskNotWaitingError, UnknownTaskError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=409)
        except Exception as exc:  # noqa: BLE001 - e.g. the answering Orchestrator could not start: say why
            log.exception("answering task %s failed", task_id)
            return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=500)
        return JSONResponse({"ok": True})


    async def cancel(self, request: Request) -> Response:
        if self.canceller is None:
            return JSONResponse({"error": "this page is read-only: cancel with `tetrarch cancel TASK_ID`"},
                                status_code=403)
        if (refused := _not_json(request, "the cancel")) is not None:
            return refused
        task_id = request.path_params["task_id"]
        try:
            outcome = await self.canceller(task_id, "the live view")
        except UnknownTaskError as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)
        except Exception as exc:  # noqa: BLE001 - e.g. the store could not be written: say why
            log.exception("cancelling task %s failed", task_id)
            return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=500)
        return JSONResponse({"ok": True, **outcome.model_dump(mode="json")})


def _not_json(request: Request, what: str) -> Response | None:
    """A refusal of a request whose body is not JSON: a JSON body cannot be sent cross-site without a CORS
    preflight, which this server never grants (what keeps another site's page from answering or
    cancelling)."""
    if request.headers.get("content-type", "").split(";")[0] != "application/json":
        return JSONResponse({"error": f"send {what} as application/json"}, status_code=415)
    return None


def _event_stream(body: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(body, media_type="text/event-stream",
                             headers={"cache-control": "no-store", "x-accel-buffering": "no"})


def create_app(store: ReadableStore, *, responder: Responder | None = None, token: str | None = None,
               host: str = "127.0.0.1", poll_s: float = 0.1, list_limit: int = 200,
               prices: PriceTable | None = None, canceller: Canceller | None = None) -> Starlette:
    """The web view over ``store``, to be served on ``host``. ``token``: every request must carry it (see
    ``agents.ui.auth``); without one ``host`` must be a loopback address, and only requests naming a loopback host
    from no origin or a loopback one are answered (``agents.ui.loopback``: this stops DNS rebinding); ``prices``:
    the table each task's cost is computed from (``agents.config.prices``; no cost column without one);
    ``canceller``: how the task page's Cancel button cancels (no button without one)."""
    h = _Handlers(TaskReader(store, prices=prices), responder, poll_s, list_limit, canceller)
    routes = [
        Route("/", h.index), Route("/tasks/{task_id}", h.task_page),
        Route("/api/tasks", h.tasks), Route("/api/tasks/stream", h.tasks_stream),
        Route("/api/tasks/{task_id}/stream", h.task_stream),
        Route("/api/tasks/{task_id}/outputs/{plan_version:int}/{step_id:int}", h.output),
        Route("/api/tasks/{task_id}/respond", h.respond, methods=["POST"]),
        Route("/api/tasks/{task_id}/cancel", h.cancel, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    # Outermost first: every answer, refusals included, carries the security headers.
    middleware = [Middleware(SecurityHeaders), Middleware(HostGuard, rule=host_rule(host, token))]
    if token is not None:
        middleware.append(Middleware(BearerAuth, token=token, realm="tetrarch ui"))
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={500: server_error})
    app.state.closing = h.closing
    return app
