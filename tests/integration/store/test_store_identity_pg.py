"""Issue 60 (8) on the PostgreSQL backend: a reader creates no tables in an empty database, and a database whose
``tasks`` table is another program's is refused before anything is written."""

from __future__ import annotations

import pytest

from agents.store import NoStoreError, NotAStoreError, Store

pytestmark = pytest.mark.postgres


def _tables(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url) as raw:
        return {r[0] for r in raw.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}


def test_a_reader_creates_no_tables_in_an_empty_database(postgres_url):
    with pytest.raises(NoStoreError, match="holds no task store"):
        Store(postgres_url, create=False)
    assert _tables(postgres_url) == set()
    Store(postgres_url).close()
    with Store(postgres_url, create=False) as reader:
        assert reader.list_tasks() == []


def test_another_programs_tasks_table_is_refused(postgres_url):
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as raw:
        raw.execute("CREATE TABLE tasks (id SERIAL PRIMARY KEY, title TEXT)")
    with pytest.raises(NotAStoreError, match="another program's"):
        Store(postgres_url)
    assert _tables(postgres_url) == {"tasks"}
