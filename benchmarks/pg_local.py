"""A throwaway PostgreSQL server on this machine for the tests and the benchmarks: ``initdb`` + ``pg_ctl`` into a
temporary directory, listening on 127.0.0.1 on a free port, stopped (and its directory removed) by ``stop()``.

``initdb`` refuses to run as root, so as root (CI) the server runs as the ``postgres`` user the Debian package
creates (``runuser -u postgres``), with its directory owned by that user.

Example:
    >>> server = start_postgres()                       # doctest: +SKIP
    >>> url = server.new_database()                     # doctest: +SKIP
    >>> server.stop()                                   # doctest: +SKIP
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["INSTALL_HINT", "PostgresUnavailable", "PostgresServer", "find_pg_bin", "start_postgres"]

INSTALL_HINT = ("no PostgreSQL server binaries (initdb, pg_ctl) found; install them with "
                "`apt-get install postgresql-15` (or set TETRARCH_PG_BIN to their directory)")


class PostgresUnavailable(RuntimeError):
    """No server binary, or no non-root user to run it as; the message says how to get one."""


def find_pg_bin() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``: $TETRARCH_PG_BIN, Debian's layout (newest), or PATH."""
    candidates = [os.environ.get("TETRARCH_PG_BIN", "")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
                         if Path(p).parent.name.isdigit() else 0, reverse=True)
    found = shutil.which("pg_ctl")
    candidates.append(str(Path(found).parent) if found else "")
    for folder in filter(None, candidates):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PostgresServer:
    bin_dir: Path
    root: Path
    port: int
    run_as: str | None
    _names = itertools.count(1)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self, prefix: str = "t") -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        name = f"{prefix}{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def _cmd(self, *args: str) -> list[str]:
        return (["runuser", "-u", self.run_as, "--"] if self.run_as else []) + list(args)

    def pg_ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self._cmd(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), *args),
                              capture_output=True, text=True, timeout=120, check=check)

    def stop(self) -> None:
        self.pg_ctl("-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def start_postgres(*, fast: bool = True) -> PostgresServer:
    """Initialise and start a throwaway server; ``PostgresUnavailable`` when it cannot be run here.
    ``fast`` turns fsync off (tests: a lost machine loses the server anyway); benchmarks keep the defaults."""
    bin_dir = find_pg_bin()
    if bin_dir is None:
        raise PostgresUnavailable(INSTALL_HINT)
    run_as = None
    root = Path(tempfile.mkdtemp(prefix="tetrarch-pg-"))
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(root, ignore_errors=True)
            raise PostgresUnavailable("running as root, and initdb refuses root: create a `postgres` user (the "
                                      "Debian postgresql-15 package does) or run as another user") from None
        os.chown(root, user.pw_uid, user.pw_gid)
        run_as = "postgres"
    server = PostgresServer(bin_dir, root, _free_port(), run_as)
    subprocess.run(server._cmd(str(bin_dir / "initdb"), "-D", str(server.data), "-A", "trust", "-U", "postgres",
                               "--no-sync"), capture_output=True, text=True, timeout=300, check=True)
    options = f"-p {server.port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=200"
    if fast:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    started = server.pg_ctl("-o", options, "-l", str(root / "server.log"), "-w", "-t", "60", "start", check=False)
    if started.returncode != 0:
        log = (root / "server.log").read_text() if (root / "server.log").exists() else ""
        server.stop()
        raise RuntimeError(f"pg_ctl start failed: {started.stderr}\n{log}")
    return server
