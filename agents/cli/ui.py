"""``tetrarch ui``: the live web view of every task in a store, on http://127.0.0.1:8765 by default.

    tetrarch ui                                   # the default store, 127.0.0.1:8765
    tetrarch ui --store /path/tasks.db --port 0   # any free port (printed)
    tetrarch ui --host 0.0.0.0 --token "$TOKEN"   # reachable from elsewhere: a token is required

Ctrl-C or SIGTERM stops it.

Answering an escalation from the page calls ``Orchestrator.respond`` like ``tetrarch respond``: the
Orchestrator (``--llm``, ``--base-url``, ``--address`` as for ``tetrarch run``) is started on the first answer,
not before. The Cancel button cancels through the store like ``tetrarch cancel`` (no model, no Ray).
``--read-only`` serves the page without either.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.config import RuntimeConfig, missing_store
from agents.ui.listen import ListenError, check_port
from agents.ui.loopback import TokenError, require_token

if TYPE_CHECKING:
    from agents.api import Orchestrator
    from agents.results import CancelOutcome

__all__ = ["main", "open_store"]


class _LazyResponder:
    """``orch.respond`` through an Orchestrator built on the first answer (its start blocks on Ray)."""

    def __init__(self, args: argparse.Namespace, config: RuntimeConfig) -> None:
        self._args, self._config = args, config
        self._orch: Orchestrator | None = None
        self._lock = asyncio.Lock()

    def _build(self) -> Orchestrator:
        from agents.api import Orchestrator
        from agents.llm.factory import build_llm

        return Orchestrator(llm=build_llm(self._args.llm, self._args.base_url), config=self._config,
                            address=self._args.address)

    async def __call__(self, task_id: str, text: str, by: str) -> None:
        async with self._lock:
            if self._orch is None:
                self._orch = await asyncio.to_thread(self._build)
        orch = self._orch
        await asyncio.to_thread(lambda: orch.respond(task_id, text, by=by))

    def close(self) -> None:
        if self._orch is not None:
            self._orch.shutdown()


async def _cancel_through_store(config: RuntimeConfig, task_id: str, by: str) -> CancelOutcome:
    """The Cancel button: ``tetrarch cancel`` in a worker thread (a store write, never an Orchestrator)."""
    from agents.engine.store_cancel import cancel_in_store

    return await asyncio.to_thread(cancel_in_store, config, task_id, by)


def open_store(args: argparse.Namespace) -> tuple[Any, RuntimeConfig]:
    """The store ``--store`` / ``--store-url`` names (read side) and the config a responder would use."""
    from agents.store import Store

    if args.store_url:
        config = RuntimeConfig(store_url=args.store_url)
        return Store(args.store_url, pool_size=config.deployment.store_pool_size, create=False), config
    config = RuntimeConfig(store_path=Path(args.store)) if args.store else RuntimeConfig()
    if problem := missing_store(config.store_path):
        raise SystemExit(f"tetrarch ui: {problem}")
    return Store(config.store_path, create=False), config


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tetrarch ui", description="The live web view of tasks (docs/ui.md).")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--store", help="SQLite store path (default ~/.tetrarch/tetrarch.db)")
    where.add_argument("--store-url", help="the cluster store, postgresql://user@host:5432/db")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; others need --token)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free port)")
    p.add_argument("--token", default=os.environ.get("TETRARCH_TOKEN"),
                   help="bearer token every request must carry (default $TETRARCH_TOKEN); required off loopback")
    p.add_argument("--read-only", action="store_true",
                   help="serve without answering escalations or cancelling")
    p.add_argument("--prices", help='a JSON price table, {"MODEL": [USD per 1M input, per 1M output tokens]}: '
                                    "the task list shows each task's cost")
    p.add_argument("--llm", help="for answers: openai:MODEL (with --base-url) or local[:NAME]")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--address", help="Ray address: auto or ray://host:10001 (default: local Ray)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from agents.config.price_file import load_prices
    from agents.ui.server import UIServer

    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:  # what is wrong with the arguments is said before the store is opened
        require_token(args.host, args.token)
        check_port(args.port)
    except (TokenError, ListenError) as exc:
        print(f"tetrarch ui: {exc}", file=sys.stderr)
        return 2
    prices = None if args.prices is None else load_prices(args.prices)
    store, config = open_store(args)
    responder = None if args.read_only else _LazyResponder(args, config)
    canceller = None if args.read_only else functools.partial(_cancel_through_store, config)
    try:
        server = UIServer(store, host=args.host, port=args.port, token=args.token, responder=responder,
                          prices=prices, canceller=canceller).start()
    except ListenError as exc:  # the port is in use, or the host is not this machine's
        print(f"tetrarch ui: {exc}", file=sys.stderr)
        return 2
    suffix = "/?token=<your token>" if args.token else "/"
    stop = threading.Event()
    previous = _stop_on_signals(stop)
    print(f"tetrarch ui: serving {server.url}{suffix} (Ctrl-C stops)", flush=True)
    try:
        server.wait(stop)
    finally:
        server.stop()
        if responder is not None:
            responder.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


def _stop_on_signals(stop: threading.Event) -> dict[int, Any]:
    """Ctrl-C and SIGTERM (a service manager, ``docker stop``) set ``stop``; returns the handlers they replace.

    A handler that only sets an event, instead of Python's KeyboardInterrupt, lets the server shut down in order
    wherever the signal lands; and a server started in the background by a shell, which inherits SIGINT ignored,
    still stops on it. Only the main thread may install handlers: elsewhere the caller's own stay."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, lambda *_: stop.set())
    return previous
