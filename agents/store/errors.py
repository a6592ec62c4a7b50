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
    "SchemaVersionError",
    "SecretTooShortError",
    "StoreClosedError",
    "StoreError",
    "StoreSerializationError",
    "StoreTaskNotFoundError",
    "StoreUnavailableError",
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


class InvalidWriteError(StoreError, UsageError):
    """A write the store refuses because its arguments contradict each other; the message says which."""
