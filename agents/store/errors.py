"""Errors the store raises. Each message says what happened and what to do about it.

Example:
    >>> str(EventSequenceError("t1", expected=4, got=6)).startswith("event seq 6 of task 't1'")
    True
"""

from __future__ import annotations

from agents.errors import TetrarchError, UnknownTaskError, UsageError

__all__ = [
    "BlobMissingError",
    "EventSequenceError",
    "InvalidWriteError",
    "NoStoreError",
    "NotAStoreError",
    "SchemaVersionError",
    "SecretTooShortError",
    "StoreClosedError",
    "StoreError",
    "StoreOpenError",
    "StoreSerializationError",
    "StoreTaskNotFoundError",
    "StoreUnavailableError",
    "StoreUnreachableError",
    "TaskExistsError",
]


class StoreError(TetrarchError):
    """Base of every error the store (SQLite or PostgreSQL) raises."""


class StoreClosedError(StoreError, UsageError):
    def __init__(self, path: str) -> None:
        super().__init__(f"the store {path} is closed; open a new Store(path) to keep using it")
        self.path = path


class TaskExistsError(StoreError, UsageError):
    def __init__(self, task_id: str) -> None:
        super().__init__(
            f"task {task_id!r} already exists in this store; pick a new task id, or continue the existing task "
            "with orch.resume(task_id)"
        )
        self.task_id = task_id


class StoreTaskNotFoundError(StoreError, UnknownTaskError):
    """A write named a task the store does not hold (``create_task`` it first)."""


class EventSequenceError(StoreError):
    def __init__(self, task_id: str, *, expected: int, got: int) -> None:
        super().__init__(
            f"event seq {got} of task {task_id!r} does not follow the stored log (expected {expected}); "
            "number events from Store.last_seq(task_id) + 1 without gaps, and make sure only one writer "
            "appends to a task at a time"
        )
        self.task_id, self.expected, self.got = task_id, expected, got


class SchemaVersionError(StoreError):
    def __init__(self, path: str, found: int, supported: int) -> None:
        super().__init__(
            f"{path} has schema version {found}, but this tetrarch understands up to {supported}; upgrade "
            "tetrarch, or point RuntimeConfig.store_path (or store_url) at another store"
        )
        self.path, self.found, self.supported = path, found, supported


class StoreSerializationError(StoreError, UsageError):
    def __init__(self, what: str, cause: Exception) -> None:
        super().__init__(
            f"cannot store {what} as JSON ({type(cause).__name__}: {cause}); return JSON-friendly values "
            "(str, numbers, bools, None, lists, dicts, pydantic models, dataclasses) from tools and roles"
        )
        self.what = what


class BlobMissingError(StoreError):
    def __init__(self, path: str) -> None:
        super().__init__(
            f"the large step output {path} referenced by the store is missing; keep the '.blobs' directory "
            "beside the database file when moving or copying it"
        )
        self.path = path


class SecretTooShortError(StoreError, UsageError):
    def __init__(self, length: int, minimum: int) -> None:
        super().__init__(
            f"a secret of {length} characters would redact ordinary text; register secrets of at least "
            f"{minimum} characters (API keys, tokens, passwords)"
        )
        self.length, self.minimum = length, minimum


class StoreUnavailableError(StoreError):
    """The store's database server cannot be reached (or its driver is not installed)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot use the store at {url}: {reason}")
        self.url, self.reason = url, reason


class StoreUnreachableError(StoreUnavailableError):
    """Nothing answered at the store server's host:port (refused, timed out, unknown host): no server runs there."""

    def __init__(self, url: str, address: str, cause: str) -> None:
        StoreError.__init__(self, f"cannot reach the PostgreSQL server at {address} for the store {url}: the server "
                                  f"is not reachable ({cause}); start it, or fix the host and port in "
                                  "RuntimeConfig.store_url")
        self.url, self.address, self.reason = url, address, cause


class InvalidWriteError(StoreError, UsageError):
    """A write the store refuses because its arguments contradict each other; the message says which."""


class StoreOpenError(StoreError, UsageError):
    """The store's file cannot be opened or created where the user pointed (``reason`` says why)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot open the store {path}: {reason}; point RuntimeConfig.store_path (--store) at a "
                         "file in a directory you can write to")
        self.path, self.reason = path, reason


class NotAStoreError(StoreError, UsageError):
    """The file (or database) holds something other than a tetrarch store; nothing was written to it."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path} is not a tetrarch store: {reason}; nothing was written to it. Point --store "
                         "(RuntimeConfig.store_path or store_url) at a tetrarch store, or at a new file to create one")
        self.path, self.reason = path, reason


class NoStoreError(NotAStoreError):
    """A command that only reads (``tetrarch tasks``, ``ui``, ``trace``) was pointed at a missing or empty store:
    it creates none (a typo would otherwise show an empty list)."""

    def __init__(self, path: str, reason: str) -> None:
        StoreError.__init__(self, f"no store at {path} ({reason}); check the --store path (`tetrarch run` or an "
                                  "Orchestrator creates a store; commands that only read never do)")
        self.path, self.reason = path, reason
