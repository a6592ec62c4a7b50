"""`tetrarch ui`: serves the store on 127.0.0.1, refuses what it cannot serve safely or at all."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from agents.cli.main import main
from agents.store import NoStoreError, Store

ROOT = Path(__file__).resolve().parents[3]


def test_a_missing_store_is_named(tmp_path):
    with pytest.raises(SystemExit, match="no store at .*nope.db"):
        main(["ui", "--store", str(tmp_path / "nope.db")])


def test_store_url_opens_the_cluster_store(postgres_url):
    import argparse

    from agents.cli.ui import open_store

    with pytest.raises(NoStoreError, match="holds no task store"):  # a reader creates no tables (issue 60)
        open_store(argparse.Namespace(store_url=postgres_url, store=None))
    Store(postgres_url).close()
    store, config = open_store(argparse.Namespace(store_url=postgres_url, store=None))
    try:
        assert config.store_url == postgres_url and store.backend == "postgresql"
        assert isinstance(store.list_tasks(limit=5), list)  # the read API the page uses answers
    finally:
        store.close()


def test_a_public_host_without_a_token_refuses_to_start(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TETRARCH_TOKEN", raising=False)
    Store(tmp_path / "t.db").close()
    assert main(["ui", "--store", str(tmp_path / "t.db"), "--host", "0.0.0.0", "--port", "0"]) == 2
    assert "needs a bearer token" in capsys.readouterr().err


def test_a_short_token_is_called_too_short(tmp_path, capsys):
    Store(tmp_path / "t.db").close()
    assert main(["ui", "--store", str(tmp_path / "t.db"), "--token", "short", "--port", "0"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("tetrarch ui: the token is too short (5 characters): use one of at least 16 characters")


def test_a_port_out_of_range_is_one_line_before_the_store_is_read(tmp_path, capsys):
    assert main(["ui", "--store", str(tmp_path / "nope.db"), "--port", "99999"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line == "tetrarch ui: port 99999 is out of range: use a port from 0 to 65535 (0: any free port)"


def test_a_port_in_use_is_one_line(tmp_path, capsys):
    Store(tmp_path / "t.db").close()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert main(["ui", "--store", str(tmp_path / "t.db"), "--port", str(port)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"tetrarch ui: port {port} on 127.0.0.1 is in use")


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what a non-interactive shell gives a job started with `&`


@pytest.mark.parametrize(("signum", "preexec"), [(signal.SIGINT, None), (signal.SIGTERM, None),
                                                 (signal.SIGINT, _ignore_sigint)],
                         ids=["ctrl-c", "sigterm", "ctrl-c-to-a-background-job"])
def test_it_serves_the_store_until_interrupted(tmp_path, signum, preexec):
    db = tmp_path / "t.db"
    with Store(db) as store:
        store.create_task("t1", "add 2 and 2", {})
    proc = subprocess.Popen([sys.executable, "-m", "agents.cli", "ui", "--store", str(db), "--port", "0"],
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True,
                            preexec_fn=preexec)
    try:
        line = proc.stdout.readline()
        assert line.startswith("tetrarch ui: serving http://127.0.0.1:"), line
        url = line.split()[3].rstrip("/")
        rows = json.loads(urllib.request.urlopen(url + "/api/tasks", timeout=10).read())
        assert [(r["task_id"], r["status"]) for r in rows] == [("t1", "submitted")]
    finally:
        proc.send_signal(signum)
        try:
            code = proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert code == 0
