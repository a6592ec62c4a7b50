"""Checking an address to listen on before anything else starts: ``tetrarch ui`` and ``tetrarch mcp serve --http``
say what is wrong with ``--port 99999`` or a port in use in one line, before a store is read or an Orchestrator
(Ray, a model) is started for nothing.

Example:
    >>> check_listen("127.0.0.1", 0)
    >>> check_listen("127.0.0.1", 99999)
    Traceback (most recent call last):
    ...
    agents.ui.listen.ListenError: port 99999 is out of range: use a port from 0 to 65535 (0: any free port)
"""

from __future__ import annotations

import errno
import socket

from agents.errors import ConfigError

__all__ = ["ListenError", "check_listen", "check_port"]


class ListenError(ConfigError):
    """A server cannot listen on the address it was given; the message says why and what to pass instead."""


def check_listen(host: str, port: int) -> None:
    """Raises ``ListenError`` unless a server could listen on ``host:port`` now (the port is tried and let go
    again: another program may still take it before the server does, which the server then reports)."""
    check_port(port)
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        raise ListenError(f"cannot listen on {host!r}: {exc.strerror}; use an address of this machine, e.g. "
                          "127.0.0.1 (this machine only) or 0.0.0.0 (every network it is on)") from None
    with socket.socket(family, kind, proto) as trial:
        trial.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will: a closed port is free
        try:
            trial.bind(address)
        except OSError as exc:
            raise _bind_error(host, port, exc) from None


def check_port(port: int) -> None:
    """Raises ``ListenError`` for a port number no server can have."""
    if not 0 <= port <= 65535:
        raise ListenError(f"port {port} is out of range: use a port from 0 to 65535 (0: any free port)")


def _bind_error(host: str, port: int, exc: OSError) -> ListenError:
    match exc.errno:
        case errno.EADDRINUSE:
            return ListenError(f"port {port} on {host} is in use: stop what listens there, or pick another port "
                               "(0: any free port)")
        case errno.EADDRNOTAVAIL:
            return ListenError(f"{host} is not an address of this machine: use one it has, e.g. 127.0.0.1 or 0.0.0.0")
        case errno.EACCES:
            return ListenError(f"port {port} needs privileges on this machine: use a port from 1024 up (or 0)")
        case _:
            return ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
