"""Re-score a stored prompt-regression run under other built-in check sets, without a model: the router's and the
reviewer's stored replies go through the policy as production would take them with ``--checks``.

This measures the checks' part only: with other sets the reviewer's prompt shows other facts, so a live run
(``python -m benchmarks.prompt_regression.run --checks sound``) may see other replies. A reply that production
reviewed twice is scored, without the numeric set, on its first review (the sound set asks for no second one).

    python -m benchmarks.prompt_regression.rescore benchmarks/results/local/prompt-regression-…json --checks sound
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agents.checks.numeric.referents import planned_route
from agents.checks.review import review_context
from benchmarks.prompt_regression.case_files import ReflectorCase, RouterCase, load_cases
from benchmarks.prompt_regression.runners import regression_tools
from planning.models import Reflection, RouterDecision, Scores
from planning.policy import ReviewAgain, decide, decision_kind, effective_route

__all__ = ["rescore", "main"]

_SCORES = ("completeness", "correctness", "format")


def _reflection(details: Mapping[str, Any]) -> Reflection:
    scores = details["scores"]
    scores = dict(zip(_SCORES, scores, strict=True)) if isinstance(scores, list) else scores
    action = details.get("raw_action") or details["action"]
    return Reflection(scores=Scores(**scores), overall_pass=details.get("overall_pass", action == "accept"),
                      action=action, feedback=details.get("feedback", ""), answer=details.get("answer") or None)


def _reviewer_accepts(case: ReflectorCase, details: Mapping[str, Any], checks: Sequence[str]) -> bool:
    first = details.get("first_review")
    reply = _reflection(first) if first else _reflection(details)
    decision = decide(review_context(reply, case.task, case.results, case.plan, checks=checks))
    if isinstance(decision, ReviewAgain) and first:
        decision = decide(review_context(_reflection(details), case.task, case.results, case.plan, checks=checks,
                                         reviewed_again=True))
    return decision_kind(decision) == "accept"


def _route(case: RouterCase, details: Mapping[str, Any], checks: Sequence[str], min_confidence: float) -> str:
    decision = RouterDecision(route=details["raw_route"], confidence=details["confidence"])
    if "numeric" in checks:
        return planned_route(decision, min_confidence, case.task)
    return effective_route(decision, min_confidence)


def rescore(run: Mapping[str, Any], checks: Sequence[str], min_confidence: float = 0.6) -> dict[str, Any]:
    """Per role, how many stored cases production would get right with ``checks``, and which it would not."""
    registry = regression_tools(Path(tempfile.mkdtemp(prefix="tetrarch-rescore-")))
    reviewer = {c.id: c for c in load_cases("reflector", tool_schemas=registry.schemas())}
    router = {c.id: c for c in load_cases("router")}
    out: dict[str, Any] = {}
    for row in run["cases"]:
        details = row["details"]
        if row["role"] == "reflector" and "scores" in details:
            case = reviewer[row["case_id"]]
            accepted = _reviewer_accepts(case, details, checks)
            wrong = "false accept" if accepted and case.expected != "accept" else \
                "right result not accepted" if not accepted and case.expected == "accept" else None
        elif row["role"] == "router" and "raw_route" in details:
            rcase = router[row["case_id"]]
            route = _route(rcase, details, checks, min_confidence)
            wrong = None if route == rcase.expected else f"routed {route}, expected {rcase.expected}"
        else:
            continue
        role = out.setdefault(row["role"], {"cases": 0, "right": 0, "wrong": []})
        role["cases"] += 1
        role["right"] += wrong is None
        if wrong is not None:
            role["wrong"].append(f"{row['case_id']}: {wrong}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.prompt_regression.rescore", description=__doc__.split("\n")[0])
    p.add_argument("results", type=Path, help="a prompt-regression results JSON")
    p.add_argument("--checks", action="append", default=None, metavar="SET", help="a built-in check set (repeatable)")
    args = p.parse_args(argv)
    checks = tuple(args.checks or ("sound",))
    for role, found in rescore(json.loads(args.results.read_text()), checks).items():
        print(f"{role} with {'+'.join(checks)}: {found['right']}/{found['cases']}"
              + (f" — {'; '.join(found['wrong'])}" if found["wrong"] else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
