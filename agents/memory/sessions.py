"""Conversation memory: sessions and their turns in the store file, and the history a new turn is shown.

Tables: ``memory_sessions`` (one row per session) and ``memory_turns`` (question, answer, status, task id and
the compacted step outputs the answer relied on, as JSON). Each turn is an ordinary task; the engine calls
``begin_turn`` when it submits the task and ``finish_turn`` with its result, and gives the router and planner
``history_context(store.turns(session_id), budget, count_tokens)`` (see docs/memory.md).

Example:
    >>> store = SessionStore(":memory:", new_id=lambda: "s1")
    >>> session = store.create()
    >>> turn = store.append_turn(session.session_id, "Population of Paris?", "2.1 million.", "accepted", "t1")
    >>> [t.answer for t in store.turns("s1")], store.get("s1").turns
    (['2.1 million.'], 1)
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, get_args

from agents.memory._db import Database
from agents.memory.errors import InvalidMemoryArgumentError, SessionNotFoundError, TurnNotFoundError
from agents.memory.history import Evidence, Turn, TurnStatus, compact_evidence, history_context

__all__ = ["Evidence", "SessionInfo", "SessionStore", "Turn", "TurnStatus", "compact_evidence", "history_context"]

SCHEMA_VERSION = 1
_DDL = (
    """CREATE TABLE IF NOT EXISTS memory_sessions (
        session_id TEXT PRIMARY KEY, created_at REAL NOT NULL, updated_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS memory_turns (
        session_id TEXT NOT NULL REFERENCES memory_sessions(session_id) ON DELETE CASCADE,
        turn_no INTEGER NOT NULL, question TEXT NOT NULL, answer TEXT, status TEXT NOT NULL, task_id TEXT,
        evidence_json TEXT NOT NULL, created_at REAL NOT NULL, finished_at REAL,
        PRIMARY KEY (session_id, turn_no)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS memory_turns_by_task ON memory_turns(task_id)",
)
_TURN_COLUMNS = "session_id, turn_no, question, answer, status, task_id, evidence_json, created_at"
_STATUSES = frozenset(get_args(TurnStatus))


@dataclass(frozen=True, slots=True)
class SessionInfo:
    session_id: str
    created_at: float
    updated_at: float
    turns: int


def _turn(row: Sequence[Any]) -> Turn:
    evidence = tuple(Evidence(**e) for e in json.loads(row[6]))
    return Turn(row[0], row[1], row[2], row[3], row[4], row[5], evidence, row[7])


class SessionStore:
    """Sessions and turns in a SQLite file; safe to open from several processes at once (the file is the
    truth: ``orch.session(s.id)`` in a new process sees every finished turn).

    Example:
        >>> store = SessionStore(":memory:")
        >>> sid = store.create().session_id
        >>> t = store.begin_turn(sid, "And Rome?", task_id="t2")
        >>> store.finish_turn(sid, t.turn_no, answer="2.8 million.", status="accepted").status
        'accepted'
    """

    def __init__(self, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.time,
                 new_id: Callable[[], str] = lambda: uuid.uuid4().hex) -> None:
        self._db = Database(path)
        self._db.ensure_schema("sessions", SCHEMA_VERSION, _DDL)
        self._clock, self._new_id = clock, new_id

    def create(self, session_id: str | None = None) -> SessionInfo:
        """A new session (``session_id`` None: a fresh id). Creating an id that exists returns it unchanged."""
        session_id = session_id or self._new_id()
        now = self._clock()
        with self._db.write() as conn:
            conn.execute("INSERT INTO memory_sessions VALUES (?, ?, ?) ON CONFLICT DO NOTHING", (session_id, now, now))
        return self.get(session_id)

    def get(self, session_id: str) -> SessionInfo:
        rows = self._db.read(
            """SELECT s.session_id, s.created_at, s.updated_at, COUNT(t.turn_no) FROM memory_sessions s
               LEFT JOIN memory_turns t ON t.session_id = s.session_id WHERE s.session_id = ? GROUP BY s.session_id""",
            (session_id,))
        if not rows:
            raise SessionNotFoundError(session_id)
        return SessionInfo(*rows[0])

    def list(self) -> list[SessionInfo]:
        rows = self._db.read(
            """SELECT s.session_id, s.created_at, s.updated_at, COUNT(t.turn_no) FROM memory_sessions s
               LEFT JOIN memory_turns t ON t.session_id = s.session_id GROUP BY s.session_id
               ORDER BY s.updated_at DESC, s.session_id""")
        return [SessionInfo(*row) for row in rows]

    def delete(self, session_id: str) -> None:
        with self._db.write() as conn:
            if conn.execute("DELETE FROM memory_sessions WHERE session_id = ?", (session_id,)).rowcount == 0:
                raise SessionNotFoundError(session_id)

    def begin_turn(self, session_id: str, question: str, task_id: str | None = None) -> Turn:
        """Record a question whose task is starting; numbers turns 1, 2, … atomically (two processes adding
        to one session get distinct numbers)."""
        now = self._clock()
        with self._db.write() as conn:
            if conn.execute("SELECT 1 FROM memory_sessions WHERE session_id = ?", (session_id,)).fetchone() is None:
                raise SessionNotFoundError(session_id)
            (turn_no,) = conn.execute("SELECT COALESCE(MAX(turn_no), 0) + 1 FROM memory_turns WHERE session_id = ?",
                                      (session_id,)).fetchone()
            conn.execute(f"INSERT INTO memory_turns ({_TURN_COLUMNS}) VALUES (?, ?, ?, NULL, 'running', ?, '[]', ?)",
                         (session_id, turn_no, question, task_id, now))
            conn.execute("UPDATE memory_sessions SET updated_at = ? WHERE session_id = ?", (now, session_id))
        return Turn(session_id, turn_no, question, None, "running", task_id, (), now)

    def finish_turn(self, session_id: str, turn_no: int, *, answer: str | None, status: TurnStatus,
                    evidence: Sequence[Evidence] = ()) -> Turn:
        """Record a turn's outcome (``status`` is the task's ``TaskResult.status``)."""
        if status not in _STATUSES or status == "running":
            raise InvalidMemoryArgumentError("status", status, f"use one of {sorted(_STATUSES - {'running'})}")
        now = self._clock()
        with self._db.write() as conn:
            updated = conn.execute(
                "UPDATE memory_turns SET answer = ?, status = ?, evidence_json = ?, finished_at = ? "
                "WHERE session_id = ? AND turn_no = ?",
                (answer, status, json.dumps([asdict(e) for e in evidence]), now, session_id, turn_no)).rowcount
            if not updated:
                raise TurnNotFoundError(session_id, turn_no)
            conn.execute("UPDATE memory_sessions SET updated_at = ? WHERE session_id = ?", (now, session_id))
        return self._turn(session_id, turn_no)

    def append_turn(self, session_id: str, question: str, answer: str | None, status: TurnStatus,
                    task_id: str | None = None, evidence: Sequence[Evidence] = ()) -> Turn:
        """``begin_turn`` and ``finish_turn`` at once, for a turn that is already over."""
        turn = self.begin_turn(session_id, question, task_id)
        return self.finish_turn(session_id, turn.turn_no, answer=answer, status=status, evidence=evidence)

    def _turn(self, session_id: str, turn_no: int) -> Turn:
        rows = self._db.read(f"SELECT {_TURN_COLUMNS} FROM memory_turns WHERE session_id = ? AND turn_no = ?",
                             (session_id, turn_no))
        if not rows:
            raise TurnNotFoundError(session_id, turn_no)
        return _turn(rows[0])

    def turn_for_task(self, task_id: str) -> Turn | None:
        """The turn a task answers (None if the task is not part of a session): ``orch.resume`` uses it to
        finish the turn of a task resumed in another process."""
        rows = self._db.read(f"SELECT {_TURN_COLUMNS} FROM memory_turns WHERE task_id = ? LIMIT 1", (task_id,))
        return _turn(rows[0]) if rows else None

    def turns(self, session_id: str, *, last: int | None = None) -> list[Turn]:
        """The session's turns in order; ``last``: only the newest ``last`` of them."""
        self.get(session_id)  # an unknown session is an error, not an empty history
        limit = 2**62 if last is None else max(0, last)  # "no limit" both SQLite and PostgreSQL take
        rows = self._db.read(f"SELECT {_TURN_COLUMNS} FROM memory_turns WHERE session_id = ? "
                             "ORDER BY turn_no DESC LIMIT ?", (session_id, limit))
        return [_turn(row) for row in reversed(rows)]

    def context(self, session_id: str, budget_tokens: int, count_tokens: Callable[[str], int] | None = None, *,
                verbatim_turns: int = 3, max_turns: int = 200) -> str:
        """``history_context`` of the session's newest ``max_turns`` turns (tiktoken o200k by default)."""
        if count_tokens is None:
            from prompts import count_tokens
        return history_context(self.turns(session_id, last=max_turns), budget_tokens, count_tokens,
                               verbatim_turns=verbatim_turns)

    def close(self) -> None:
        self._db.close()
