"""``tetrarch cache list|clear``: the plan cache's templates in a store (``RuntimeConfig(plan_cache=True)``).

    $ tetrarch cache list --store ~/.tetrarch/tetrarch.db
    3f2a9c1e0b7d  hits 4  ok 4  wrong 0  sources 1  What is the population of <name>
    $ tetrarch cache clear
    removed 1 plan template(s)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from agents.config import default_store_path, missing_store
from agents.memory.cache_store import CachedTemplate, PlanCacheStore

__all__ = ["main"]


def _row(t: CachedTemplate) -> dict[str, object]:
    return {"template_id": t.template_id, "shape": t.template.key, "example_task": t.example_task,
            "tools": sorted(t.template.tools), "sources": t.sources, "hits": t.hits, "successes": t.successes,
            "failures": t.failures, "created_at": t.created_at, "last_used_at": t.last_used_at}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tetrarch cache", description="The plan cache's templates.")
    p.add_argument("action", choices=("list", "clear"))
    p.add_argument("--store", type=Path, default=None, help="SQLite store path (default ~/.tetrarch/tetrarch.db)")
    p.add_argument("--json", action="store_true", help="list as JSON")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    path = args.store or default_store_path()
    if problem := missing_store(path):
        print(f"tetrarch: {problem}", file=sys.stderr)
        return 2
    cache = PlanCacheStore(path)
    try:
        if args.action == "clear":
            print(f"removed {cache.clear()} plan template(s)")
            return 0
        rows = cache.list()
        if args.json:
            print(json.dumps([_row(t) for t in rows], indent=2))
        elif not rows:
            print("the plan cache is empty")
        for t in rows if not args.json else ():
            print(f"{t.template_id[:12]}  hits {t.hits}  ok {t.successes}  wrong {t.failures}  "
                  f"sources {t.sources}  {t.template.key[:70]}")
        return 0
    finally:
        cache.close()
