"""A real PostgreSQL server for the tests (``benchmarks.pg_local``): started once per test session, stopped at its
end; each test gets a database of its own (``CREATE DATABASE``, ~0.1 s), so tests never see each other's rows.

The tests that need it are skipped only when no server binary exists, with a message that says how to get one
(`apt-get install postgresql-15`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.pg_local import PostgresServer, PostgresUnavailable, start_postgres

__all__ = ["postgres_server", "postgres_url"]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    try:
        server = start_postgres()
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh database on the session's server."""
    return postgres_server.new_database()
