"""The task store: tasks, event log, checkpoints, step outputs, idempotency journal, LLM calls — in an embedded
SQLite file (``Store(path)``, the default) or on a PostgreSQL server (``Store("postgresql://…")``, for clusters;
``agents.store.postgres``). Both backends run the same statements and pass the same conformance tests.

Every state transition is one transaction: its events are appended and the checkpoint replaced
together (``commit``), so a process killed at any instant leaves either all of a transition or none
of it. One ``Store`` is safe to share between threads; several processes may open the same store at once
(SQLite: WAL, writers take the write lock up front and wait up to ``BUSY_TIMEOUT_MS`` for each other;
PostgreSQL: a connection pool per process, fencing checks lock the lease row). Every JSON value written is redacted first (``secrets`` and
common API-key shapes become ``[REDACTED]``). See ``agents.store.schema`` for the durability trade-off
of ``durable=False`` (the default) versus ``durable=True``.

Example:
    >>> import tempfile, pathlib
    >>> from agents.events import TaskSubmittedPayload, make_event
    >>> with Store(pathlib.Path(tempfile.mkdtemp()) / "t.db", secrets=["s3cret-token"]) as store:
    ...     store.create_task("t1", "add 2 and 2", {"api_key": "s3cret-token"})
    ...     ev = make_event(TaskSubmittedPayload(task="add 2 and 2"), task_id="t1", seq=1, ts=0.0)
    ...     _ = store.commit("t1", [ev], checkpoint={"phase": "route"}, status="running")
    ...     (store.last_seq("t1"), store.checkpoint_version("t1"), store.get_task("t1").config)
    (1, 1, {'api_key': '[REDACTED]'})
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel

from agents.events import AnyEvent, parse_event
from agents.idempotency import Fence
from agents.results import TaskResult
from agents.store import fencing
from agents.store.batch import (LeaseLostError, OutputRow, ResultRow, TaskBatch, encode_batch, insert_tasks, last_seq,
                                load_state, write_group)
from agents.store.backends import Backend, BackendKind, Connection, open_backend
from agents.store.codec import decode, encode, encode_model
from agents.store.errors import (BlobMissingError, EventSequenceError, InvalidWriteError, NoStoreError, NotAStoreError,
                                 SchemaVersionError, SecretTooShortError, StoreClosedError, StoreError, StoreOpenError,
                                 StoreSerializationError, StoreTaskNotFoundError, StoreUnavailableError,
                                 StoreUnreachableError, TaskExistsError)
from agents.store.journal import StoreJournal
from agents.store.leases import LeasesAndJournal
from agents.store.records import STATUSES, UNFINISHED, JournalRecord, StoreStatus, TaskRow, TaskSummary
from agents.store.redact import REDACTED, Redactor
from agents.store.schema import SCHEMA_VERSION
from agents.store.scrub import ScrubReport

__all__ = [  # noqa: RUF022 - grouped: the store, its records, its errors
    "Store", "StoreJournal", "TaskBatch", "Fence", "DEFAULT_BLOB_THRESHOLD_BYTES", "SCHEMA_VERSION", "REDACTED",
    "StoreStatus", "TaskRow", "TaskSummary", "JournalRecord",
    "StoreError", "StoreClosedError", "TaskExistsError", "StoreTaskNotFoundError", "EventSequenceError",
    "SchemaVersionError", "StoreSerializationError", "BlobMissingError", "SecretTooShortError", "InvalidWriteError",
    "LeaseLostError", "StoreUnavailableError", "StoreUnreachableError", "StoreOpenError", "NotAStoreError",
    "NoStoreError",
]

DEFAULT_BLOB_THRESHOLD_BYTES = 256 * 1024
"""Step outputs above this many bytes of JSON go to a file, keeping the database and its WAL small."""


class Store(LeasesAndJournal):
    """Durable state of every task. Open one per process (it reopens itself after a ``fork``).

    ``where`` is the SQLite file's path, or a ``postgresql://user@host:port/db`` URL (``pool_size`` connections
    per process; ``durable`` is SQLite's fsync choice: a server's durability is its own configuration). A file or
    database holding anything but a tetrarch store is ``NotAStoreError`` (nothing is written to it); with
    ``create=False`` (what commands that only read use) a missing or empty one is ``NoStoreError``."""

    def __init__(self, where: Path | str, *, secrets: Iterable[str] = (), durable: bool = False,
                 blob_threshold_bytes: int = DEFAULT_BLOB_THRESHOLD_BYTES,
                 clock: Callable[[], float] = time.time, pool_size: int = 8, create: bool = True) -> None:
        self._backend: Backend = open_backend(where, durable=durable, pool_size=pool_size, create=create)
        self._clock = clock
        self._blob_threshold = blob_threshold_bytes
        self._blobs = self._backend.blobs
        self._redactor = Redactor.build(secrets)

    # ------------------------------------------------------------------ lifecycle
    @property
    def path(self) -> Path | None:
        """The SQLite file (None on PostgreSQL)."""
        return getattr(self._backend, "path", None)

    @property
    def backend(self) -> BackendKind:
        return self._backend.kind

    @property
    def location(self) -> str:
        """The file path or the server URL without its password."""
        return self._backend.label

    @property
    def schema_version(self) -> int:
        return self._backend.schema_version()

    def close(self) -> None:
        """Close the connection(s) (idempotent). Later calls raise ``StoreClosedError``."""
        self._backend.close()

    def scrub(self, task_id: str, secrets: Iterable[str]) -> ScrubReport:
        """Rewrite the records of ``task_id`` written before ``secrets`` were known, with them redacted."""
        return self._backend.scrub(task_id, secrets)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_secret(self, value: str) -> None:
        """Redact ``value`` from everything written from now on (e.g. a key learned at run time)."""
        redactor = self._redactor.with_secret(value)
        self._redactor = redactor  # one attribute store: writers see the old or the new redactor, never half

    def redact(self, value: Any) -> Any:
        """``value`` (JSON-shaped) as the store would write it: registered secrets and key shapes replaced (a
        copy then; ``value`` itself when there is nothing to replace)."""
        return self._redactor.redact_checked(value)

    # ------------------------------------------------------------------ tasks
    def create_task(self, task_id: str, task: str, config: dict[str, Any], *,
                    lease_owner: str | None = None) -> int | None:
        """Register a new task with status "submitted". A duplicate id raises ``TaskExistsError``. With
        ``lease_owner`` the task's lease is taken in the same transaction and its generation returned (what
        ``acquire_lease`` would return, without a second commit per submitted task)."""
        now = self._clock()
        task_text = self._redactor.redact_text(task)
        config_json = encode(config, self._redactor, what=f"the config of task {task_id!r}")
        with self._write() as conn:
            try:
                conn.execute("INSERT INTO tasks(task_id, task, status, created_at, updated_at, config_json)"
                             " VALUES (?, ?, 'submitted', ?, ?, ?)", (task_id, task_text, now, now, config_json))
            except self._backend.integrity_errors as exc:
                raise TaskExistsError(task_id) from exc
            return None if lease_owner is None else fencing.acquire(conn, task_id, owner=lease_owner, now=now)

    def create_tasks(self, tasks: Sequence[tuple[str, str]], config: dict[str, Any], *,
                     lease_owner: str) -> list[int | TaskExistsError]:
        """``create_task`` for many ``(task_id, task)`` in one transaction (one commit for a burst of submits),
        each with its lease: its generation, or ``TaskExistsError`` in its place (that row alone undone)."""
        now = self._clock()
        config_json = encode(config, self._redactor, what="the config of the submitted tasks")
        rows = [(task_id, self._redactor.redact_text(task), now, now, config_json) for task_id, task in tasks]
        with self._write() as conn:
            return insert_tasks(conn, rows, lease_owner, self._backend.integrity_errors)

    def commit(self, task_id: str, events: Sequence[AnyEvent | dict[str, Any]] = (),
               checkpoint: dict[str, Any] | BaseModel | None = None,
               status: StoreStatus | None = None) -> list[AnyEvent]:
        """Atomically append ``events``, replace the checkpoint (version + 1) and set the status.

        Event seqs must continue the stored log exactly (``last_seq + 1``, ``+ 2``, …): a gap or a
        duplicate raises ``EventSequenceError`` and nothing is written. Returns the events as stored
        (secrets redacted), which is what live readers must see too.
        """
        typed = [parse_event(e) if isinstance(e, dict) else e for e in events]
        written = [self.event_row(task_id, e) for e in typed]
        rows = [row for row, _ in written]
        at_seq = rows[-1][1] if rows else self.last_seq(task_id)
        state_json = None if checkpoint is None else encode(
            checkpoint, self._redactor, what=f"the checkpoint of task {task_id!r}")
        self.write_batch(TaskBatch(task_id, None, events=rows, status=status,
                                   checkpoint=None if state_json is None else (at_seq, state_json)))
        return [event for _, event in written]

    def finish_task(self, task_id: str, result: TaskResult, *, generation: int | None = None) -> None:
        """Store the final result and its status in one transaction (fenced by ``generation`` when given)."""
        self.write_batch(TaskBatch(task_id, generation, result=self.result_row(task_id, result)[0]))

    def result_row(self, task_id: str, result: TaskResult) -> tuple[ResultRow, TaskResult]:
        """``result`` encoded and redacted for a ``TaskBatch``, and the result as it is stored (a redacted copy
        when a secret showed, else ``result`` itself): what the caller should hand out too."""
        if result.task_id != task_id:
            raise InvalidWriteError(f"the result is for task {result.task_id!r}, not {task_id!r}; "
                                    "store each result under its own task id")
        text, redacted = encode_model(result, self._redactor, what=f"the result of {task_id!r}")
        if redacted:
            result = TaskResult.model_validate_json(text)
        return (result.status, result.stopped_reason, text, result.timings.wall_s,
                result.usage.total.total_tokens), result

    def get_result(self, task_id: str) -> TaskResult | None:
        with self._read() as conn:
            row = conn.execute("SELECT result_json FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
        return TaskResult.model_validate_json(row[0]) if row and row[0] is not None else None

    def get_task(self, task_id: str) -> TaskRow | None:
        with self._read() as conn:
            row = conn.execute("SELECT task_id, task, status, stopped_reason, created_at, updated_at, config_json,"
                               " result_json IS NOT NULL FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
        if row is None:
            return None
        return TaskRow(task_id=row[0], task=row[1], status=row[2], stopped_reason=row[3], created_at=row[4],
                       updated_at=row[5], config=decode(row[6]), has_result=bool(row[7]))

    def unfinished_task_ids(self) -> list[str]:
        """Tasks still "submitted" or "running" (oldest first): what a restarted Supervisor resumes."""
        marks = ",".join("?" * len(UNFINISHED))
        with self._read() as conn:
            rows = conn.execute(f"SELECT task_id FROM tasks WHERE status IN ({marks}) ORDER BY created_at, rowid",
                                UNFINISHED).fetchall()
        return [r[0] for r in rows]

    def list_tasks(self, status: StoreStatus | None = None, limit: int = 50) -> list[TaskSummary]:
        """The newest ``limit`` tasks, optionally only those with ``status``."""
        self._check_status(status)
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        with self._read() as conn:
            rows = conn.execute(f"SELECT task_id, task, status, created_at, updated_at, wall_s, total_tokens"
                                f" FROM tasks {where} ORDER BY created_at DESC, rowid DESC LIMIT ?",
                                (*args, max(0, limit))).fetchall()
        return [TaskSummary(task_id=r[0], task=r[1], status=r[2], created=r[3], updated=r[4], wall_s=r[5],
                            total_tokens=r[6]) for r in rows]

    def delete_task(self, task_id: str) -> bool:
        """Remove a task with its events, checkpoint, outputs, LLM calls, journal entries and blobs."""
        with self._write() as conn:
            conn.execute("DELETE FROM journal WHERE task_id = ?", (task_id,))
            deleted = conn.execute("DELETE FROM tasks WHERE task_id = ?", (task_id,)).rowcount == 1
        if self._blobs is not None:
            self._blobs.remove_task(task_id)
        return deleted

    def vacuum(self) -> None:
        """Give the space of deleted tasks back to the file system (or the server)."""
        self._backend.vacuum()

    # ------------------------------------------------------------------ events and checkpoints
    def load_checkpoint(self, task_id: str) -> dict[str, Any] | None:
        """The task's latest state: the last full checkpoint with the deltas written after it applied (one
        snapshot: a full checkpoint committed between the two reads would drop deltas the first read missed)."""
        with self._backend.read(consistent=True) as conn:
            return load_state(conn, task_id)

    def checkpoint_version(self, task_id: str) -> int:
        """How many checkpoints were committed for the task (0: none)."""
        with self._read() as conn:
            row = conn.execute("SELECT version FROM checkpoints WHERE task_id = ?", (task_id,)).fetchone()
        return int(row[0]) if row else 0

    def events(self, task_id: str, after_seq: int = 0) -> list[AnyEvent]:
        """The task's events with ``seq > after_seq``, in order, typed."""
        with self._read() as conn:
            rows = conn.execute("SELECT body_json FROM events WHERE task_id = ? AND seq > ? ORDER BY seq",
                                (task_id, after_seq)).fetchall()
        return [parse_event(r[0]) for r in rows]

    def last_seq(self, task_id: str) -> int:
        with self._read() as conn:
            return last_seq(conn, task_id)

    # ------------------------------------------------------------------ step outputs
    def put_step_output(self, task_id: str, plan_version: int, step_id: int, attempt: int, output: Any) -> None:
        """Record an attempt's output; large ones are written to a blob file before the row commits."""
        row = self.output_row(task_id, plan_version, step_id, attempt, output)
        self.write_batch(TaskBatch(task_id, None, outputs=[row]))

    def output_row(self, task_id: str, plan_version: int, step_id: int, attempt: int, output: Any) -> OutputRow:
        """``output`` encoded and redacted for a ``TaskBatch`` (a large one is written to its blob file now)."""
        text = encode(output, self._redactor, what=f"the output of step {step_id} of task {task_id!r}")
        size = len(text.encode("utf-8"))
        big = self._blobs is not None and size > self._blob_threshold
        blob = self._blobs.write(task_id, plan_version, step_id, attempt, text) if big else None  # type: ignore[union-attr]
        return (task_id, plan_version, step_id, attempt, None if blob else text, blob, size, self._clock())

    def write_batch(self, batch: TaskBatch) -> None:
        """Commit one runner's writes of one tick in one transaction, fenced by ``batch.generation``: raises
        ``LeaseLostError`` (nothing written) when another runner took the task over."""
        refused = self.write_batches([batch])[0]
        if refused is not None:
            raise refused

    def write_batches(self, batches: Sequence[TaskBatch]) -> list[Exception | None]:
        """Several runners' batches in one transaction (group commit), each fenced on its own: a batch the store
        refuses is refused before any of it is written and its error returned in its place
        (``batch.write_group``)."""
        outcome: list[Exception | None] = [None] * len(batches)
        for i, batch in enumerate(batches):
            try:
                self._check_status(batch.status)
                encode_batch(batch, self._redactor)
            except Exception as exc:  # noqa: BLE001 - this batch's own error, returned to its runner
                outcome[i] = exc
        ready = [i for i, batch in enumerate(batches) if outcome[i] is None and not batch.empty()]
        if ready:
            with self._write() as conn:
                refused, replaced = write_group(conn, [batches[i] for i in ready], self._clock())
            for i, exc in zip(ready, refused):
                outcome[i] = exc
            for path in replaced if self._blobs is not None else ():
                self._blobs.unlink(path)
        return outcome

    def get_step_outputs(self, task_id: str, plan_version: int | None = None) -> dict[tuple[int, int], Any]:
        """``(plan_version, step_id) → output`` of each step's latest recorded attempt."""
        query = "SELECT plan_version, step_id, body_json, blob_path FROM step_outputs WHERE task_id = ?"
        args: tuple[Any, ...] = (task_id,)
        if plan_version is not None:
            query, args = query + " AND plan_version = ?", (task_id, plan_version)
        with self._read() as conn:
            rows = conn.execute(query + " ORDER BY plan_version, step_id, attempt", args).fetchall()
        latest = {(r[0], r[1]): (r[2], r[3]) for r in rows}  # ascending attempts: the last one wins
        return {k: decode(body if body is not None else self._blob_text(blob)) for k, (body, blob) in latest.items()}

    def _blob_text(self, relative: str) -> str:
        if self._blobs is None:
            raise BlobMissingError(relative)
        return self._blobs.read(relative)

    # ------------------------------------------------------------------ LLM call records
    def record_llm_call(self, task_id: str, record: dict[str, Any]) -> int:
        """Append one LLM call record (see ``agents.llm.records``); returns its 1-based seq in the task."""
        text = encode(record, self._redactor, what=f"an LLM call record of task {task_id!r}")
        role = str((record.get("role") if isinstance(record, dict) else getattr(record, "role", "")) or "")
        self.write_batch(TaskBatch(task_id, None, llm_calls=[(role, text)]))
        with self._read() as conn:
            return int(conn.execute("SELECT MAX(seq) FROM llm_calls WHERE task_id = ?", (task_id,)).fetchone()[0])

    def llm_calls(self, task_id: str) -> list[dict[str, Any]]:
        """The task's LLM call records in the order they were recorded (what ``ReplayLLM`` plays back)."""
        with self._read() as conn:
            rows = conn.execute("SELECT record_json FROM llm_calls WHERE task_id = ? ORDER BY seq",
                                (task_id,)).fetchall()
        return [decode(r[0]) for r in rows]

    # ------------------------------------------------------------------ internals
    def _read(self) -> contextlib.AbstractContextManager[Connection]:
        return self._backend.read()

    def _write(self) -> contextlib.AbstractContextManager[Connection]:
        """One write transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: READ COMMITTED with lease-row locks)."""
        return self._backend.write()

    def event_row(self, task_id: str, event: AnyEvent) -> tuple[tuple[str, int, str, float, str], AnyEvent]:
        if event.task_id != task_id:
            raise InvalidWriteError(f"event seq {event.seq} belongs to task {event.task_id!r}, not {task_id!r}; "
                                    "commit each task's events under its own id")
        # Checked on the JSON text first: walking every event's payload to redact it cost ~0.25 ms per step.
        body, redacted = encode_model(event, self._redactor, what=f"event {event.type}")
        return (task_id, event.seq, event.type, event.ts, body), (parse_event(decode(body)) if redacted else event)

    @staticmethod
    def _check_status(status: str | None) -> None:
        if status is not None and status not in STATUSES:
            raise InvalidWriteError(f"unknown task status {status!r}; use one of {', '.join(STATUSES)}")

    @staticmethod
    def _require_task(conn: Connection, task_id: str) -> None:
        if conn.execute("SELECT 1 FROM tasks WHERE task_id = ?", (task_id,)).fetchone() is None:
            raise StoreTaskNotFoundError(task_id)
