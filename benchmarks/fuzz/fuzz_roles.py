"""Fuzz every role's LLM output through the WHOLE task state machine; count outcomes and unhandled crashes.

An LLM can answer anything. The contract (README, docs/architecture.md) is that a task never raises and
never crashes inside: bad output gets one repair round, then the task fails with a clear error, or review
retries / replans / escalates. This script checks that contract with hypothesis-generated adversarial text:
for the role under test every call returns generated text (one of a short list, in order: so the repair
round sees a second, different answer), while the other roles answer correctly. Each example runs one task
in-process through the real ``TaskRunner`` + ``LocalRuntime`` (the same code the Supervisor actor runs).

Roles under test: ``router``, ``planner``, ``executor`` (reasoning steps, ``tool_name: null``),
``executor_repair`` (the executor's argument-repair round) and ``reflector``.

An example is UNHANDLED when an exception escapes ``TaskRunner.run``, when the task ends ``failed`` with
``stopped_reason="internal_error"`` (the runner's catch-all for a crash inside), when a failed task carries
no error text, when a background task died with nobody awaiting it (asyncio's "exception was never
retrieved"), or when the task does not end within its own ``task_timeout_s`` plus a margin. Target: 0.

Usage::

    python -m benchmarks.fuzz.fuzz_roles --examples 10000 [--role planner] [--seed 0] \\
        --out benchmarks/results/fuzz.md

``--examples`` is the total, split evenly over the roles run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.fuzz.campaign import ROLES, FuzzStats, RoleStats, fuzz
from benchmarks.fuzz.example import run_example
from benchmarks.fuzz.report import render_report
from benchmarks.fuzz.strategies import (
    _many,  # noqa: F401 - tests/faults/test_fuzz_roles.py builds its past-max_steps regression plans with it
    texts_for,
)

__all__ = ["ROLES", "FuzzStats", "RoleStats", "fuzz", "main", "render_report", "run_example", "texts_for"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.fuzz.fuzz_roles",
                                description=(__doc__ or "").split("\n")[0])
    p.add_argument("--examples", type=int, default=1000, help="total examples, split evenly over the roles")
    p.add_argument("--role", choices=ROLES, action="append", help="role(s) to fuzz (default: all)")
    p.add_argument("--seed", type=int, default=0, help="hypothesis seed (the run is reproducible)")
    p.add_argument("--out", type=Path, help="write the markdown report here")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run, print a summary, write the report; exit status 1 when anything was unhandled."""
    args = _parser().parse_args(argv)
    roles = tuple(args.role or ROLES)
    per_role = max(1, -(-args.examples // len(roles)))
    stats = fuzz(roles, per_role, args.seed, progress=lambda line: print(line, flush=True))
    command = "python -m benchmarks.fuzz.fuzz_roles " + " ".join(sys.argv[1:] if argv is None else argv)
    report = render_report(stats, command.strip())
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report, encoding="utf-8")
        print(f"report: {args.out}")
    print(f"{stats.examples} examples, {stats.unhandled} unhandled, {stats.wall_s:.1f}s")
    return 1 if stats.unhandled else 0


if __name__ == "__main__":
    raise SystemExit(main())
