"""The task store: tasks, event log, checkpoints, step outputs, idempotency journal, LLM calls — in an embedded
SQLite file (the default) or on a PostgreSQL server (``Store("postgresql://…")``, ``RuntimeConfig.store_url``).

``database`` holds the ``Store``; its parts are ``backends`` (SQLite; ``postgres`` for the server, imported only
for a URL), ``dialect`` (one SQL text for both), ``schema`` / ``pg_schema`` (tables, versioned migrations),
``redact``, ``codec`` (JSON), ``blobs`` (large outputs as files, SQLite only), ``records`` (row models),
``fencing`` (leases, claims), ``batch``, ``journal``, ``identity`` / ``opening`` (is a file a store) and ``errors``. Import the public names
from here; the part modules may change shape between versions.
"""

from agents.store import database as _database
from agents.store.database import *  # noqa: F403 - the package's public face is the database module's __all__

__all__ = list(_database.__all__)
