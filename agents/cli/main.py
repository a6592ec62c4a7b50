"""`tetrarch run | resume | respond | cancel | tasks | trace | bench | models | mcp | cache | ui |
serve-info`."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pydantic

from agents.config import missing_store
from agents.errors import TaskNotWaitingError, TetrarchError, UnknownTaskError, UsageError
from agents.llm.factory import build_llm

__all__ = ["main", "one_line"]


def _config(args: argparse.Namespace):
    from agents.config import RuntimeConfig

    overrides: dict[str, Any] = {}
    if getattr(args, "store", None):
        overrides["store_path"] = Path(args.store)
    return RuntimeConfig(**overrides)


def _follow(handle, timeout: float | None, as_json: bool) -> int:
    from agents.cli.progress import ProgressView, render_result

    if not as_json:
        view = ProgressView()
        for event in handle.events():
            print(view.text(event), end="", flush=True)
    result = handle.result(timeout=timeout)
    print(result.model_dump_json(indent=2) if as_json else "\n" + render_result(result))
    return 0 if result.status in ("accepted", "clarify", "escalated") else 1


def _cmd_run(args: argparse.Namespace) -> int:
    from agents import Orchestrator

    orch = Orchestrator(llm=build_llm(args.llm, args.base_url), config=_config(args), address=args.address)
    try:
        return _follow(orch.submit(args.task), args.timeout, args.json)
    finally:
        orch.shutdown()


def _cmd_continue(args: argparse.Namespace) -> int:
    from agents import Orchestrator

    config = _config(args)
    if problem := missing_store(config.store_path):
        print(f"tetrarch: {problem}", file=sys.stderr)
        return 2
    _check_task(config.store_path, args.task_id, responding=args.command == "respond")
    orch = Orchestrator(llm=build_llm(args.llm, args.base_url), config=config, address=args.address)
    try:
        handle = orch.respond(args.task_id, args.text) if args.command == "respond" else orch.resume(args.task_id)
        return _follow(handle, args.timeout, args.json)
    finally:
        orch.shutdown()


def _check_task(store_path: Path, task_id: str, *, responding: bool) -> None:
    """Refuse an unknown task (or, to respond, one not waiting for an answer) from the store alone, before Ray and
    the model start for nothing; ``main`` prints the error as one line."""
    from agents.store import Store

    with Store(store_path, create=False) as store:
        row = store.get_task(task_id)
    if row is None:
        raise UnknownTaskError(task_id)
    if responding and row.status != "escalated":
        raise TaskNotWaitingError(task_id, row.status)


def _cmd_cancel(args: argparse.Namespace) -> int:
    """Through the store: whichever process runs the task is fenced out and stops; no model or Ray starts
    here."""
    from agents.config import RuntimeConfig
    from agents.engine.store_cancel import cancel_in_store

    config = RuntimeConfig(store_url=args.store_url) if args.store_url else _config(args)
    if not args.store_url and (problem := missing_store(config.store_path)):
        print(f"tetrarch: {problem}", file=sys.stderr)
        return 2
    outcome = cancel_in_store(config, args.task_id, "tetrarch cancel")
    print(outcome.model_dump_json(indent=2) if args.json else outcome.message)
    return 0


def _cmd_tasks(args: argparse.Namespace) -> int:
    from agents.store import Store

    cfg = _config(args)
    if problem := missing_store(cfg.store_path):
        print(f"tetrarch: {problem}", file=sys.stderr)
        return 2
    store = Store(cfg.store_path, create=False)  # a reader: never makes a store where the path points
    rows = store.list_tasks(status=args.status, limit=args.limit)
    if args.json:
        print(json.dumps([r.model_dump(mode="json") if hasattr(r, "model_dump") else r.__dict__ for r in rows],
                         indent=2, default=str))
        return 0
    for r in rows:
        d = r.model_dump() if hasattr(r, "model_dump") else dict(r.__dict__)
        print(f"{d.get('task_id')}  {str(d.get('status')):10}  {d.get('task', '')[:70]}")
    return 0


def _cmd_models(args: argparse.Namespace) -> int:
    from agents.llm.local.commands import main as models_main

    return models_main(args.rest)


def _cmd_bench(args: argparse.Namespace) -> int:
    from benchmarks.cli import main as bench_main

    return bench_main(args.rest)


def _cmd_trace(args: argparse.Namespace) -> int:
    from agents.trace.cli import main as trace_main

    return trace_main(args.rest)


def _cmd_cache(args: argparse.Namespace) -> int:
    from agents.cli.cache import main as cache_main

    return cache_main(args.rest)


def _cmd_mcp(args: argparse.Namespace) -> int:
    from agents.cli.mcp_serve import main as mcp_main

    return mcp_main(args.rest)


def _cmd_ui(args: argparse.Namespace) -> int:
    from agents.cli.ui import main as ui_main

    return ui_main(args.rest)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tetrarch", description="Plan-then-execute agents on Ray.")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--llm", help="openai:MODEL (with --base-url) or local[:NAME]; default: the embedded model")
        sp.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
        sp.add_argument("--address", help="Ray address: auto or ray://host:10001 (default: local Ray)")
        sp.add_argument("--store", help="SQLite store path (default ~/.tetrarch/tetrarch.db)")
        sp.add_argument("--timeout", type=float, default=None)
        sp.add_argument("--json", action="store_true", help="print the TaskResult as JSON")

    run = sub.add_parser("run", help="run a task with a live DAG view")
    run.add_argument("task")
    common(run)
    resume = sub.add_parser("resume", help="continue an unfinished task from its checkpoint")
    resume.add_argument("task_id")
    common(resume)
    respond = sub.add_parser("respond", help="answer an escalated task ('approve' runs a pending tool call)")
    respond.add_argument("task_id")
    respond.add_argument("text")
    common(respond)
    cancel = sub.add_parser("cancel", help="stop a running task (its completed steps are kept; "
                                           "`tetrarch resume` continues it)")
    cancel.add_argument("task_id")
    where = cancel.add_mutually_exclusive_group()
    where.add_argument("--store", help="SQLite store path (default ~/.tetrarch/tetrarch.db)")
    where.add_argument("--store-url", help="the cluster store, postgresql://user@host:5432/db")
    cancel.add_argument("--json", action="store_true", help="print what the cancel did as JSON")
    tasks = sub.add_parser("tasks", help="list recent tasks")
    tasks.add_argument("--status")
    tasks.add_argument("--limit", type=int, default=20)
    tasks.add_argument("--store")
    tasks.add_argument("--json", action="store_true")
    for name, helptext in (("models", "pull / list local model weights"), ("bench", "benchmarks vs ReAct"),
                           ("trace", "trace pages and exports of a task"),
                           ("cache", "tetrarch cache list|clear [--store PATH]: the plan cache's templates"),
                           ("mcp", "tetrarch mcp serve [--stdio | --http HOST:PORT] [--llm ...] [--address ...]"),
                           ("ui", "tetrarch ui [--store PATH | --store-url URL] [--port 8765]: the live web view")):
        sp = sub.add_parser(name, help=helptext, add_help=False)
        sp.add_argument("rest", nargs=argparse.REMAINDER)
    sub.add_parser("serve-info", help="what the embedded model server would run")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; whatever goes wrong with what the user gave it is one ``tetrarch:`` line on stderr (set
    ``TETRARCH_DEBUG=1`` for the traceback)."""
    try:
        return _dispatch(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place a command's error becomes the user's line
        if os.environ.get("TETRARCH_DEBUG"):
            raise
        print(f"tetrarch: {one_line(exc)}", file=sys.stderr)
        return 2 if isinstance(exc, (UsageError, sqlite3.DatabaseError, OSError, ValueError)) else 1


def one_line(exc: BaseException) -> str:
    """What a command's error tells the user, on one line."""
    if isinstance(exc, sqlite3.DatabaseError):
        text = (f"the store cannot be read ({exc}); check that --store names a tetrarch store, the file `tetrarch "
                "run` created")
    elif isinstance(exc, pydantic.ValidationError):
        text = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors())
    elif isinstance(exc, (TetrarchError, OSError, ValueError)):
        text = str(exc) or type(exc).__name__
    else:
        text = f"internal error ({type(exc).__name__}: {exc}); please report this bug (TETRARCH_DEBUG=1 shows where)"
    return " ".join(text.split())


def _dispatch(argv: list[str]) -> int:
    # Sub-tools with their own parsers get their arguments untouched: argparse.REMAINDER does not
    # capture a leading "--flag" (``tetrarch bench --all`` would be rejected).
    if argv and argv[0] in ("models", "bench", "trace", "mcp", "cache", "ui") and not {"-h", "--help"} & set(argv[:1]):
        return {"models": _cmd_models, "bench": _cmd_bench, "trace": _cmd_trace, "mcp": _cmd_mcp,
                "cache": _cmd_cache, "ui": _cmd_ui}[argv[0]](
            argparse.Namespace(command=argv[0], rest=argv[1:]))
    args = _parser().parse_args(argv)
    handlers = {"run": _cmd_run, "resume": _cmd_continue, "respond": _cmd_continue, "cancel": _cmd_cancel,
                "tasks": _cmd_tasks,
                "models": _cmd_models, "bench": _cmd_bench, "trace": _cmd_trace, "mcp": _cmd_mcp,
                "cache": _cmd_cache, "ui": _cmd_ui}
    if args.command == "serve-info":
        from agents.llm.local.commands import main as models_main

        return models_main(["list"])
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
