"""The embedded SQLite store: tasks, event log, checkpoints, step outputs, idempotency journal, LLM calls.

``database`` holds the ``Store``; its parts are ``schema`` (tables, migrations), ``redact``, ``codec`` (JSON),
``blobs`` (large outputs as files), ``records`` (row models), ``journal`` and ``errors``. Import the public names
from here; the part modules may change shape between versions.
"""

from agents.store import database as _database
from agents.store.database import *  # noqa: F403 - the package's public face is the database module's __all__

__all__ = list(_database.__all__)
