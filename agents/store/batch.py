"""One runner's writes of one event-loop tick, committed in one fenced transaction; and the checkpoint rebuilt
from its last full copy plus the deltas written after it.

Work per completed step is O(1) in the plan's length: a step's completion appends its event, its output and
a small delta (the changed step records, the plan steps streamed since the last write, the task's scalar
fields), never the whole checkpoint. A full checkpoint is written at phase changes (route, reflect, replan,
finish) and drops the deltas it covers.

Example:
    >>> state = {"phase": "execute", "steps": {"1": {"status": "pending"}}, "plan_steps": [{"step_id": 1}]}
    >>> apply_delta(state, {"fields": {"phase": "execute"}, "steps": {"1": {"status": "completed"}},
    ...                     "plan_from": 1, "plan_steps": [{"step_id": 2}]})["steps"]["1"]["status"]
    'completed'
    >>> merge_deltas({"steps": {"1": 1}, "plan_from": 0, "plan_steps": ["a"]},
    ...              {"steps": {"2": 2}, "plan_from": 1, "plan_steps": ["b"]})
    {'steps': {'1': 1, '2': 2}, 'plan_from': 0, 'plan_steps': ['a', 'b'], 'fields': {}}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.store import fencing
from agents.store.codec import decode, encode
from agents.store.dialect import LOCK_ROW
from agents.store.errors import EventSequenceError, StoreError, StoreTaskNotFoundError, TaskExistsError
from agents.store.records import UNFINISHED
from agents.store.redact import Redactor

__all__ = ["EventRow", "GroupReads", "LeaseLostError", "ResultRow", "TaskBatch", "apply_delta", "check_batch",
           "encode_batch", "group_reads", "insert_tasks", "last_seq", "load_state", "merge_deltas",
           "write_batch", "write_group"]

EventRow = tuple[str, int, str, float, str]
OutputRow = tuple[str, int, int, int, str | None, str | None, int, float]
ResultRow = tuple[str, str | None, str, float | None, int | None]
"""A final result for the task row: status, stopped_reason, result_json, wall_s, total_tokens."""


class LeaseLostError(StoreError):
    """A runner wrote to a task another runner has taken over since (``orch.resume``, a restarted Supervisor).
    The stale runner stops; nothing of its write was stored."""

    def __init__(self, task_id: str, generation: int, current: int) -> None:
        super().__init__(f"task {task_id!r} is now run by lease generation {current}, not {generation}; this runner "
                         "stopped without writing. Follow the task with orch.resume(task_id) / handle.result()")
        self.task_id, self.generation, self.current = task_id, generation, current


@dataclass(slots=True)
class TaskBatch:
    """Everything one runner wrote to one task in one tick, already encoded and redacted."""

    task_id: str
    generation: int | None
    """The lease generation the writer holds; None writes without fencing (single-writer tools and tests)."""
    events: list[EventRow] = field(default_factory=list)
    outputs: list[OutputRow] = field(default_factory=list)
    llm_calls: list[tuple[str, Any]] = field(default_factory=list)
    """``(role, record)`` in call order (the store encodes records given as values)."""
    checkpoint: tuple[int, Any] | None = None
    """``(at_seq, state)``: a full checkpoint as of event ``at_seq`` (JSON text, or a value the store encodes)."""
    delta: tuple[int, Any] | None = None
    """``(seq, delta)``: the changes after the checkpoint, as of event ``seq`` (JSON text or a value)."""
    status: str | None = None
    result: ResultRow | None = None
    """The run's final result (``Store.result_row``), written with its last events and checkpoint."""

    def empty(self) -> bool:
        return not (self.events or self.outputs or self.llm_calls or self.checkpoint or self.delta or self.status
                    or self.result)


def encode_batch(batch: TaskBatch, redactor: Redactor) -> None:
    """Encode (and redact) in place the checkpoint, delta and LLM records a sink handed over as values."""
    what = f"the checkpoint of task {batch.task_id!r}"
    if batch.checkpoint is not None and not isinstance(batch.checkpoint[1], str):
        batch.checkpoint = (batch.checkpoint[0], encode(batch.checkpoint[1], redactor, what=what))
    if batch.delta is not None and not isinstance(batch.delta[1], str):
        batch.delta = (batch.delta[0], encode(batch.delta[1], redactor, what=what))
    batch.llm_calls = [(role, rec if isinstance(rec, str) else encode(
        rec, redactor, what=f"an LLM call record of task {batch.task_id!r}")) for role, rec in batch.llm_calls]


@dataclass(slots=True)
class GroupReads:
    """What the batches of one group commit are checked and numbered against, read for the whole group with
    one statement per table (``group_reads``) instead of three per batch, and kept current as its batches are
    written (two batches of one task in a group: the second follows the first)."""

    holders: dict[str, int]
    """Each task's lease generation; absent: no lease row."""
    last_seqs: dict[str, int]
    """The last event seq of each task with events in the group (0: none stored)."""
    last_calls: dict[str, int]
    """The last LLM call record seq of each task with records in the group (0: none stored)."""


_IN_SIZES = (8, 64, 512)
"""The lengths of the ``IN (...)`` lists a group's reads use (a shorter list is padded by repeating its last
id): a few statement texts, which stay in the connection's statement cache, rather than one per group size."""


def group_reads(conn: Any, batches: Sequence[TaskBatch]) -> GroupReads:
    """Read what ``check_batch`` and ``write_batch`` need for every batch of a group (the lease rows read with
    a share lock on PostgreSQL, as ``fencing.current`` reads one)."""
    ids = list(dict.fromkeys(b.task_id for b in batches))
    with_events = list(dict.fromkeys(b.task_id for b in batches if b.events))
    with_calls = list(dict.fromkeys(b.task_id for b in batches if b.llm_calls))
    holders = _select_in(conn, "SELECT task_id, generation FROM leases WHERE task_id IN ({})"
                               " ORDER BY task_id " + LOCK_ROW, ids)
    seqs = _select_in(conn, "SELECT task_id, MAX(seq) FROM events WHERE task_id IN ({}) GROUP BY task_id",
                      with_events)
    calls = _select_in(conn, "SELECT task_id, MAX(seq) FROM llm_calls WHERE task_id IN ({}) GROUP BY task_id",
                       with_calls)
    return GroupReads(holders, {t: seqs.get(t, 0) for t in with_events},
                      {t: calls.get(t, 0) for t in with_calls})


def _select_in(conn: Any, sql: str, ids: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for start in range(0, len(ids), _IN_SIZES[-1]):
        chunk = ids[start:start + _IN_SIZES[-1]]
        size = next(n for n in _IN_SIZES if n >= len(chunk))
        padded = chunk + [chunk[-1]] * (size - len(chunk))
        out.update((str(task_id), int(value)) for task_id, value in conn.execute(
            sql.format(", ".join("?" * size)), padded).fetchall() if value is not None)
    return out


def check_batch(conn: Any, batch: TaskBatch, reads: GroupReads | None = None) -> None:
    """Refuse ``batch`` before any of it is written: ``LeaseLostError`` when the writer's generation lost the
    lease, ``StoreTaskNotFoundError``, or ``EventSequenceError`` when its events do not follow the stored
    ones. ``reads``: its group's (``group_reads``), else read here."""
    task_id = batch.task_id
    holder = fencing.current(conn, task_id) if reads is None else reads.holders.get(task_id)
    if holder is None:  # no lease row: the task may not exist at all (with one, its foreign key says it does)
        if conn.execute("SELECT 1 FROM tasks WHERE task_id = ?", (task_id,)).fetchone() is None:
            raise StoreTaskNotFoundError(task_id)
    elif batch.generation is not None and holder != batch.generation:
        raise LeaseLostError(task_id, batch.generation, holder)
    if batch.events:
        expected = (last_seq(conn, task_id) if reads is None else reads.last_seqs[task_id]) + 1
        for offset, row in enumerate(batch.events):
            if row[1] != expected + offset:
                raise EventSequenceError(task_id, expected=expected + offset, got=row[1])


def write_batch(conn: Any, batch: TaskBatch, now: float, reads: GroupReads | None = None) -> list[str]:
    """Write ``batch``, which ``check_batch`` accepted, inside the caller's transaction; returns blob paths
    the batch's outputs replaced. Raises no ``StoreError`` (an error here fails the whole transaction).
    ``reads``: its group's, brought up to date with what this batch wrote."""
    task_id = batch.task_id
    if batch.events:
        conn.executemany("INSERT INTO events(task_id, seq, type, ts, body_json) VALUES (?, ?, ?, ?, ?)", batch.events)
        if reads is not None:
            reads.last_seqs[task_id] = batch.events[-1][1]
    replaced = _write_outputs(conn, batch.outputs)
    if batch.llm_calls:
        if reads is None:
            first = int(conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM llm_calls WHERE task_id = ?",
                                     (task_id,)).fetchone()[0])
        else:
            first = reads.last_calls[task_id] + 1
            reads.last_calls[task_id] = first + len(batch.llm_calls) - 1
        conn.executemany("INSERT INTO llm_calls(task_id, seq, role, record_json) VALUES (?, ?, ?, ?)",
                         [(task_id, first + i, role, text) for i, (role, text) in enumerate(batch.llm_calls)])
    if batch.checkpoint is not None:
        at_seq, state_json = batch.checkpoint
        conn.execute("INSERT INTO checkpoints(task_id, version, state_json, updated_at, at_seq) VALUES (?, 1, ?, ?, ?)"
                     " ON CONFLICT(task_id) DO UPDATE SET version = checkpoints.version + 1, state_json = excluded.state_json,"
                     " updated_at = excluded.updated_at, at_seq = excluded.at_seq", (task_id, state_json, now, at_seq))
        conn.execute("DELETE FROM checkpoint_deltas WHERE task_id = ? AND seq <= ?", (task_id, at_seq))
    if batch.delta is not None:
        conn.execute("INSERT INTO checkpoint_deltas(task_id, seq, delta_json) VALUES (?, ?, ?)"
                     " ON CONFLICT(task_id, seq) DO UPDATE SET delta_json = excluded.delta_json", (task_id, *batch.delta))
        conn.execute("UPDATE checkpoints SET version = version + 1, updated_at = ? WHERE task_id = ?", (now, task_id))
    if batch.result is not None:  # the final status with the result: what _set_status would set, and more
        conn.execute("UPDATE tasks SET status = ?, stopped_reason = ?, result_json = ?, wall_s = ?, total_tokens = ?,"
                     " updated_at = ? WHERE task_id = ?", (*batch.result, now, task_id))
    elif batch.status is not None or batch.checkpoint is not None:
        _set_status(conn, task_id, batch.status, now)  # per-step writes (events, deltas) leave the task row alone
    return replaced


def write_group(conn: Any, batches: Sequence[TaskBatch], now: float) -> tuple[list[Exception | None], list[str]]:
    """Write encoded ``batches`` inside the caller's transaction: one the store refuses (a lost lease, a task
    gone, an out-of-order event) is refused alone, before any of it is written, and its error returned in its
    place. Returns the errors (None: written) and the blob paths the written batches replaced."""
    # No savepoint per batch: every refusal is decided by ``check_batch`` before the batch's first write, so
    # a refused batch has nothing to undo (two statements per batch, a fifth of a one-step task's statements).
    # Anything raised while writing fails the whole transaction, which the caller rolls back.
    refused: list[Exception | None] = []
    replaced: list[str] = []
    reads = group_reads(conn, batches)
    for batch in batches:
        try:
            check_batch(conn, batch, reads)
        except StoreError as exc:
            refused.append(exc)
            continue
        replaced += write_batch(conn, batch, now, reads)
        refused.append(None)
    return refused, replaced


def _set_status(conn: Any, task_id: str, status: str | None, now: float) -> None:
    if status is None:
        conn.execute("UPDATE tasks SET updated_at = ? WHERE task_id = ?", (now, task_id))
    elif status in UNFINISHED:
        # Running again (resume / respond): the previous run's result no longer describes the task.
        conn.execute("UPDATE tasks SET status = ?, stopped_reason = NULL, result_json = NULL, wall_s = NULL,"
                     " total_tokens = NULL, updated_at = ? WHERE task_id = ?", (status, now, task_id))
    else:
        conn.execute("UPDATE tasks SET status = ?, updated_at = ? WHERE task_id = ?", (status, now, task_id))


def _write_outputs(conn: Any, rows: list[OutputRow]) -> list[str]:
    replaced = []
    for row in rows:
        old = conn.execute("SELECT blob_path FROM step_outputs WHERE task_id = ? AND plan_version = ? AND step_id = ?"
                           " AND attempt = ?", row[:4]).fetchone()
        if old and old[0] and old[0] != row[5]:
            replaced.append(old[0])
    if rows:
        conn.executemany("INSERT INTO step_outputs(task_id, plan_version, step_id, attempt, body_json, blob_path,"
                         " size, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(task_id, plan_version,"
                         " step_id, attempt) DO UPDATE SET body_json = excluded.body_json, blob_path ="
                         " excluded.blob_path, size = excluded.size, recorded_at = excluded.recorded_at", rows)
    return replaced


def load_state(conn: Any, task_id: str) -> dict[str, Any] | None:
    """The task's checkpoint: the last full copy with every later delta applied in order."""
    row = conn.execute("SELECT state_json, at_seq FROM checkpoints WHERE task_id = ?", (task_id,)).fetchone()
    if row is None:
        return None
    state = decode(row[0])
    for (delta_json,) in conn.execute("SELECT delta_json FROM checkpoint_deltas WHERE task_id = ? AND seq > ?"
                                      " ORDER BY seq", (task_id, row[1])):
        apply_delta(state, decode(delta_json))
    return state


def apply_delta(state: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """``state`` (a checkpoint's JSON) with ``delta`` applied in place; returns it."""
    state.update(delta.get("fields", {}))
    if delta.get("steps"):
        state.setdefault("steps", {}).update(delta["steps"])
    if "plan_from" in delta:
        state["plan_steps"] = list(state.get("plan_steps", []))[: delta["plan_from"]] + list(delta["plan_steps"])
    return state


def merge_deltas(first: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """One delta equal to applying ``first`` and then ``then`` (coalescing the writes of one tick)."""
    merged = {"steps": {**first.get("steps", {}), **then.get("steps", {})}}
    if "plan_from" in then and "plan_from" in first and then["plan_from"] >= first["plan_from"]:
        keep = first["plan_steps"][: then["plan_from"] - first["plan_from"]]
        merged["plan_from"], merged["plan_steps"] = first["plan_from"], [*keep, *then["plan_steps"]]
    elif "plan_from" in then:
        merged["plan_from"], merged["plan_steps"] = then["plan_from"], list(then["plan_steps"])
    elif "plan_from" in first:
        merged["plan_from"], merged["plan_steps"] = first["plan_from"], list(first["plan_steps"])
    merged["fields"] = {**first.get("fields", {}), **then.get("fields", {})}
    return merged


def last_seq(conn: Any, task_id: str) -> int:
    return int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE task_id = ?", (task_id,)).fetchone()[0])


def insert_tasks(conn: Any, rows: Sequence[tuple[str, str, float, float, str]], owner: str,
                 integrity_errors: tuple[type[BaseException], ...]) -> list[int | TaskExistsError]:
    """New task rows ``(task_id, task, created_at, updated_at, config_json)`` inside the caller's transaction, each
    with its lease taken by ``owner``: its generation, or ``TaskExistsError`` when the id exists (only that row is
    undone: a savepoint each, since PostgreSQL aborts the whole transaction on an error otherwise)."""
    out: list[int | TaskExistsError] = []
    for row in rows:
        conn.execute("SAVEPOINT tetrarch_create")
        try:
            conn.execute("INSERT INTO tasks(task_id, task, status, created_at, updated_at, config_json)"
                         " VALUES (?, ?, 'submitted', ?, ?, ?)", row)
        except integrity_errors:
            conn.execute("ROLLBACK TO SAVEPOINT tetrarch_create")
            out.append(TaskExistsError(row[0]))
        else:
            out.append(fencing.acquire(conn, row[0], owner=owner, now=row[2]))
        conn.execute("RELEASE SAVEPOINT tetrarch_create")
    return out
