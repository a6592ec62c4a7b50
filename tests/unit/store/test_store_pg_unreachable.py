"""Issue 60: a PostgreSQL store with nothing listening took 30 s and ended in ``PoolTimeout``. Now the first
connection is tried alone with a short timeout, and the error names host:port and says the server is not
reachable. No server is needed: a port nothing listens on."""

from __future__ import annotations

import pickle
import socket
import time

import pytest

from agents.store import Store, StoreUnavailableError, StoreUnreachableError

pytest.importorskip("psycopg")


def _closed_port() -> int:
    with socket.socket() as s:  # bound then closed, never listening: connecting there is refused at once
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_listening_fails_fast_naming_host_and_port():
    port = _closed_port()
    started = time.monotonic()
    with pytest.raises(StoreUnreachableError) as caught:
        Store(f"postgresql://tetrarch:hunter2-secret@127.0.0.1:{port}/db")
    assert time.monotonic() - started < 5
    text = str(caught.value)
    assert f"127.0.0.1:{port}" in text and "not reachable" in text and "refused" in text.lower()
    assert "hunter2" not in text  # the URL in the message has no password
    assert isinstance(caught.value, StoreUnavailableError)  # what callers caught before still catches it
    back = pickle.loads(pickle.dumps(caught.value))
    assert type(back) is StoreUnreachableError and str(back) == text and back.address == f"127.0.0.1:{port}"
