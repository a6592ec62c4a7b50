"""Errors of the memory layers. Each message says what happened and what to do about it.

Constructors only format a message (no I/O), keep their data in attributes, and rebuild from that data when
unpickled, so an error raised in a Ray worker reaches the driver with the same type, message and fields.

Example:
    >>> import pickle
    >>> err = SessionNotFoundError("s-42")
    >>> again = pickle.loads(pickle.dumps(err))
    >>> type(again) is SessionNotFoundError, str(again) == str(err), again.session_id
    (True, True, 's-42')
"""

from __future__ import annotations

from typing import Any

from agents.errors import TetrarchError, UsageError

__all__ = [
    "DocumentNotFoundError",
    "DocumentReadError",
    "FTS5UnavailableError",
    "InvalidMemoryArgumentError",
    "MemoryLayerError",
    "SessionNotFoundError",
    "TemplateNotFoundError",
    "TurnNotFoundError",
]


class MemoryLayerError(TetrarchError):
    """Base of every error raised by ``agents.memory`` (not named ``MemoryError``: that is a builtin)."""

    _ctor_args: tuple[Any, ...] = ()

    def __reduce__(self) -> tuple[Any, ...]:
        # Subclass constructors take data, not the message: rebuild from the data so fields survive pickling.
        return (type(self), self._ctor_args)


class FTS5UnavailableError(MemoryLayerError):
    def __init__(self, sqlite_version: str) -> None:
        self._ctor_args = (sqlite_version,)
        super().__init__(
            f"this Python's SQLite ({sqlite_version}) was built without FTS5, which the document index needs; "
            "use a Python whose sqlite3 module has FTS5 (python.org and most distribution builds do), or install "
            "pysqlite3-binary and run with it"
        )
        self.sqlite_version = sqlite_version


class DocumentNotFoundError(MemoryLayerError, UsageError):
    def __init__(self, doc_id: str) -> None:
        self._ctor_args = (doc_id,)
        super().__init__(
            f"no document {doc_id!r} in the document index; list the indexed ids with DocumentIndex.documents() "
            "(add() returns each document's id)"
        )
        self.doc_id = doc_id


class DocumentReadError(MemoryLayerError, UsageError):
    def __init__(self, path: str, reason: str) -> None:
        self._ctor_args = (path, reason)
        super().__init__(f"cannot index {path}: {reason}")
        self.path = path
        self.reason = reason


class SessionNotFoundError(MemoryLayerError, UsageError):
    def __init__(self, session_id: str) -> None:
        self._ctor_args = (session_id,)
        super().__init__(
            f"no session {session_id!r} in this store; start one with orch.session() (check "
            "RuntimeConfig.store_path when continuing a session from another process)"
        )
        self.session_id = session_id


class TurnNotFoundError(MemoryLayerError, UsageError):
    def __init__(self, session_id: str, turn_no: int) -> None:
        self._ctor_args = (session_id, turn_no)
        super().__init__(
            f"session {session_id!r} has no turn {turn_no}; finish only turns that begin_turn() returned"
        )
        self.session_id = session_id
        self.turn_no = turn_no


class TemplateNotFoundError(MemoryLayerError, UsageError):
    def __init__(self, template_id: str) -> None:
        self._ctor_args = (template_id,)
        super().__init__(
            f"no plan template {template_id!r} in the plan cache (it may have been evicted or cleared); "
            "list the cached templates with PlanCacheStore.list()"
        )
        self.template_id = template_id


class InvalidMemoryArgumentError(MemoryLayerError, UsageError, ValueError):
    def __init__(self, name: str, value: Any, expected: str) -> None:
        self._ctor_args = (name, value, expected)
        super().__init__(f"{name}={value!r} is not valid: {expected}")
        self.name = name
        self.value = value
        self.expected = expected
