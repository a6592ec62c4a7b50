"""The dated history of prompt-regression runs on the embedded model: one row per run and role in
``benchmarks/results/local/prompt-regression-history.json``, rendered to ``.md`` from the JSON alone (``render``).

A run's own report (``prompt-regression-<model>.md``, every case) is what the runner writes; this keeps what each
run measured once that report is replaced, instead of a copy of the report per experiment:

    python -m benchmarks.prompt_regression.history RESULTS.json --label WHAT [--note HOW]
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.history import first_sentence

__all__ = ["HISTORY", "JSON_KEYS", "add_run", "render", "rows_of"]

HISTORY = Path(__file__).resolve().parent.parent / "results" / "local" / "prompt-regression-history.json"
_ROLES = ("router", "planner", "reflector")
JSON_KEYS = """\
- `history[]`: one row per run and role, oldest first: `date` (the run's `generated_at`, UTC, when it started),
  `label` (what was tried), `note` (how it was run and what it showed), `role`, `prompt` (the role's template),
  `checks` (the `--checks` it ran with; `demo` = the demo's configuration), `passed`, `total`, `rate`,
  `false_accepts` (the reviewer's; null for other roles), `median_latency_s`, `wall_s` (the whole run),
  `commit` (tetrarch's, `+` when the tree had uncommitted changes), `command`, `measures` (every number the role's
  summary had), `source` (the results file the row came from; its cases are in git history)."""


def _checks(command: str) -> str:
    return ",".join(re.findall(r"--checks\s+(\S+)", command)) or "demo"


def rows_of(report: Mapping[str, Any], label: str, note: str, source: str) -> list[dict[str, Any]]:
    """A results JSON's rows, one per role it ran, in pipeline order."""
    host = report.get("host", {})
    rows = []
    for role in (r for r in _ROLES if r in report["summary"]):
        s = report["summary"][role]
        rows.append({"date": report["generated_at"], "label": label, "note": note, "role": role,
                     "prompt": report["prompts"][role]["template_id"], "checks": _checks(report["command"]),
                     "passed": s["passed"], "total": s["total"], "rate": s["rate"],
                     "false_accepts": s.get("false_accepts") if role == "reflector" else None,
                     "median_latency_s": s["median_latency_s"], "wall_s": report["wall_s"],
                     "commit": host.get("commit", "?") + ("+" if host.get("dirty") else ""),
                     "command": report["command"],
                     "measures": {k: v for k, v in s.items() if not isinstance(v, (list, dict))},
                     "source": source})
    return rows


def add_run(history: Mapping[str, Any] | None, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``history`` with ``rows`` in place of the rows of the same run (date and label), else appended, oldest
    first; every other row is kept."""
    keep = [r for r in (history or {}).get("history", [])
            if not any((r["date"], r["label"]) == (x["date"], x["label"]) for x in rows)]
    return {"kind": "prompt-regression-history", "history": sorted([*keep, *rows], key=lambda r: r["date"])}


def render(history: Mapping[str, Any]) -> str:
    lines = ["# Prompt regression on the embedded model: history", "",
             "One row per run and role, oldest first; `date` is when the run started (UTC). *Tried*: the run's "
             "label and the first sentence of its note (the JSON has the whole note, the command and every "
             "number). A run's own page with every case is what `python -m benchmarks.prompt_regression.run` "
             "writes (`prompt-regression-<model>.md`); each run's is in git history once it is replaced (`git log "
             "--diff-filter=D -- benchmarks/results/local/`). Add a run with `python -m "
             "benchmarks.prompt_regression.history RESULTS.json --label WHAT [--note HOW]`.", "",
             "| date (UTC) | tried | role | prompt | checks | passed | false accepts | median s | commit |",
             "|---|---|---|---|---|---|---|---|---|"]
    previous = None
    for r in history["history"]:
        tried = f"`{r['label']}`" + (f": {first_sentence(r['note'])}" if r["note"] else "")
        if (r["date"], r["label"]) == previous:
            tried = "the same run"
        previous = (r["date"], r["label"])
        false = "-" if r["false_accepts"] is None else str(r["false_accepts"])
        lines.append(f"| {r['date'].replace('T', ' ')[:16]} | {tried} | {r['role']} | `{r['prompt']}` | "
                     f"{r['checks']} | {r['passed']}/{r['total']} ({r['rate']:.0%}) | {false} | "
                     f"{r['median_latency_s']} | `{r['commit']}` |")
    return "\n".join(lines + ["", f"## JSON keys (`{HISTORY.name}`)", "", JSON_KEYS, ""])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.prompt_regression.history")
    p.add_argument("results", type=Path, help="a prompt-regression results JSON")
    p.add_argument("--label", required=True, help="what was tried: the run's rows")
    p.add_argument("--note", default="", help="how it was run and what it showed")
    p.add_argument("--history", type=Path, default=HISTORY)
    args = p.parse_args(argv)
    report = json.loads(args.results.read_text(encoding="utf-8"))
    history = json.loads(args.history.read_text(encoding="utf-8")) if args.history.exists() else None
    folded = add_run(history, rows_of(report, args.label, args.note, args.results.name))
    args.history.write_text(json.dumps(folded, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    args.history.with_suffix(".md").write_text(render(folded), encoding="utf-8")
    print(f"wrote {args.history.with_suffix('.md')} ({len(folded['history'])} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
