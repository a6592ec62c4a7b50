"""Per-role summaries of the case results: the metric with its counts, latency and token totals."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from benchmarks.prompt_regression.scoring import CaseResult

__all__ = ["PLANNER_TARGET", "summarize"]

PLANNER_TARGET = 0.90
"""The issue's target: at least 90% valid plans for the default model."""


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} = {100 * n / d:.0f}%" if d else "0/0"


def _latency_tokens(results: Sequence[CaseResult]) -> dict[str, Any]:
    lat = sorted(r.latency_s for r in results)
    return {
        "median_latency_s": round(statistics.median(lat), 2) if lat else None,
        "p90_latency_s": round(lat[min(len(lat) - 1, int(0.9 * len(lat)))], 2) if lat else None,
        "max_latency_s": round(lat[-1], 2) if lat else None,
        "total_latency_s": round(sum(lat), 1),
        "llm_calls": sum(r.llm_calls for r in results),
        "input_tokens": sum(r.input_tokens for r in results),
        "output_tokens": sum(r.output_tokens for r in results),
        "mean_input_tokens": round(statistics.mean(r.input_tokens for r in results)) if results else None,
        "mean_output_tokens": round(statistics.mean(r.output_tokens for r in results)) if results else None,
    }


def summarize(role: str, results: Sequence[CaseResult]) -> dict[str, Any]:
    """The role's metric with counts, plus latency and token totals."""
    rs = [r for r in results if r.role == role]
    total = len(rs)
    passed = sum(r.passed for r in rs)
    summary: dict[str, Any] = {"total": total, "passed": passed, "rate": passed / total if total else None,
                               "repaired": sum(r.repaired for r in rs), **_latency_tokens(rs)}
    if role == "router":
        confusion: dict[str, Counter[str]] = {}
        for r in rs:
            confusion.setdefault(r.expected, Counter())[r.got] += 1
        summary.update(
            metric="router accuracy",
            headline=f"router accuracy: {_pct(passed, total)}",
            raw_correct=sum(1 for r in rs if r.details.get("raw_route") == r.expected),
            invalid_output=sum(1 for r in rs if r.got == "invalid"),
            by_expected={k: {"correct": c[k], "total": sum(c.values())} for k, c in sorted(confusion.items())},
            confusion={k: dict(c) for k, c in sorted(confusion.items())})
    elif role == "planner":
        valid = [r for r in rs if r.passed]
        repaired_valid = sum(r.repaired for r in valid)
        summary.update(
            metric="valid plan rate",
            headline=f"planner valid plans: {_pct(passed, total)} ({repaired_valid} of them needed the repair round)",
            valid=passed, repaired_valid=repaired_valid, valid_first_round=passed - repaired_valid,
            target=PLANNER_TARGET, meets_target=(passed / total >= PLANNER_TARGET) if total else None,
            structure_ok=sum(1 for r in valid if r.details.get("structure_ok")),
            failure_reasons=dict(Counter(r.got for r in rs if not r.passed)),
            median_first_step_s=(round(statistics.median(fs), 2) if (fs := [r.details["first_step_s"] for r in rs
                                 if r.details.get("first_step_s") is not None]) else None))
    elif role == "reflector":
        acc = [r for r in rs if r.expected == "accept"]
        rej = [r for r in rs if r.expected == "not_accept"]
        fits = [r for r in rej if r.details.get("action_fits") is not None]
        mentioned = [r for r in acc if r.details.get("missing_mentions") is not None]
        summary.update(
            metric="reflector agreement",
            headline=f"reflector agreement: {_pct(passed, total)}",
            raw_agree=sum(1 for r in rs if r.details.get("raw_agrees")),
            accept_cases={"agree": sum(r.passed for r in acc), "total": len(acc)},
            not_accept_cases={"agree": sum(r.passed for r in rej), "total": len(rej)},
            false_accepts=sum(1 for r in rej if r.got == "accept"),
            refused_by_code={"wrong": sum(1 for r in rej if r.details.get("refused_by_code")),
                             "right": sum(1 for r in acc if r.details.get("refused_by_code"))},
            false_rejects=sum(1 for r in acc if r.got not in ("accept",)),
            invalid_output=sum(1 for r in rs if r.got == "invalid"),
            decisions=dict(Counter(r.got for r in rs)),
            action_fits={"fits": sum(1 for r in fits if r.details["action_fits"]), "total": len(fits)},
            answers_state_figures={"ok": sum(1 for r in mentioned if not r.details["missing_mentions"]),
                                   "total": len(mentioned)})
    return summary
