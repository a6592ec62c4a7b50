"""The embedded SQLite store: tasks, event log, checkpoints, step outputs, idempotency journal, LLM calls.

``database`` holds the ``Store``; its parts are ``schema`` (tables, migrations), ``redact``, ``codec`` (JSON),
``blobs`` (large outputs as files), ``records`` (row models), ``journal`` and ``errors``. Import the public names
from here; the part modules may change shape between versions.
"""

from agents.store.database import (  # noqa: I001
    Store,
    StoreJournal,
    DEFAULT_BLOB_THRESHOLD_BYTES,
    SCHEMA_VERSION,
    REDACTED,
    StoreStatus,
    TaskRow,
    TaskSummary,
    JournalRecord,
    StoreError,
    StoreClosedError,
    TaskExistsError,
    StoreTaskNotFoundError,
    EventSequenceError,
    SchemaVersionError,
    StoreSerializationError,
    BlobMissingError,
    SecretTooShortError,
    InvalidWriteError,
)

__all__ = [  # noqa: RUF022 - grouped: the store, its records, its errors
    "Store",
    "StoreJournal",
    "DEFAULT_BLOB_THRESHOLD_BYTES",
    "SCHEMA_VERSION",
    "REDACTED",
    "StoreStatus",
    "TaskRow",
    "TaskSummary",
    "JournalRecord",
    "StoreError",
    "StoreClosedError",
    "TaskExistsError",
    "StoreTaskNotFoundError",
    "EventSequenceError",
    "SchemaVersionError",
    "StoreSerializationError",
    "BlobMissingError",
    "SecretTooShortError",
    "InvalidWriteError",
]
