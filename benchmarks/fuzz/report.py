"""The markdown report of a fuzz run (benchmarks/results/fuzz.md)."""

from __future__ import annotations

import json
import os
import platform

from benchmarks.fuzz.campaign import FuzzStats

__all__ = ["render_report"]

_STATUSES = ("accepted", "failed", "escalated", "clarify", "refused")


def _clip(text: str, limit: int = 300) -> str:
    text = text if len(text) <= limit else text[:limit] + "…"
    return text.replace("```", "ˋˋˋ")


def render_report(stats: FuzzStats, command: str) -> str:
    import hypothesis

    lines = [
        "# Fuzzing the LLM boundary of every role",
        "",
        "Hypothesis-generated replies (random text, JSON-ish garbage, valid JSON of the wrong shape,",
        "near-valid router decisions / plans / reflections / tool arguments with cycles, unknown tools, bad",
        "or undeclared dependencies, huge step counts, wrong types, NaN, unicode, nested fences, trailing",
        "commas, truncation) fed to one role while the others answer correctly; each example is one whole",
        "task through the real `TaskRunner` + `LocalRuntime` (in-process). Unhandled = an exception out of",
        "the runner, a `failed`/`internal_error` result (a crash inside), a failed result without an error,",
        "a background task that died unawaited, or a hang.",
        "",
        f"- command: `{command}`",
        f"- hypothesis {hypothesis.__version__}, seed {stats.seed}, phases: generate only, no database",
        (f"- Python {platform.python_version()} on {os.cpu_count()} CPUs, one process (timings include any"
         " other load on the machine)"),
        (f"- examples: **{stats.examples}**, unhandled: **{stats.unhandled}**, wall time: "
         f"**{stats.wall_s:.1f} s** ({1000 * stats.wall_s / max(1, stats.examples):.1f} ms per example)"),
        "",
        "| role | examples | " + " | ".join(_STATUSES) + " | other | unhandled | wall s |",
        "|---|---:|" + "---:|" * (len(_STATUSES) + 3),
    ]
    for role, r in stats.roles.items():
        other = r.examples - sum(r.statuses[s] for s in _STATUSES)
        lines.append(f"| {role} | {r.examples} | " + " | ".join(str(r.statuses[s]) for s in _STATUSES)
                     + f" | {other} | {r.unhandled} | {r.wall_s:.1f} |")
    lines += ["", "## Stopped reasons per role", ""]
    for role, r in stats.roles.items():
        reasons = ", ".join(f"{name} {n}" for name, n in r.reasons.most_common())
        lines.append(f"- **{role}**: {reasons}")
    samples = [(role, s) for role, r in stats.roles.items() for s in r.samples]
    if samples:
        lines += ["", "## Unhandled examples (first few per role)", ""]
        for role, (texts, error) in samples:
            replies = _clip(json.dumps(texts, ensure_ascii=False))
            lines += [f"### {role}", "", f"replies: `{replies}`", "", "```", _clip(error, 2000), "```", ""]
    return "\n".join(lines) + "\n"
