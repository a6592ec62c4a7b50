"""Re-scoring a stored regression run under other check sets (benchmarks/prompt_regression/rescore.py)."""

from __future__ import annotations

from benchmarks.prompt_regression.case_files import load_cases
from benchmarks.prompt_regression.rescore import main, rescore


def _accept_everything() -> dict:
    cases = load_cases("reflector")
    rows = [{"role": "reflector", "case_id": c.id, "details": {
        "scores": [5, 5, 5], "raw_action": "accept", "overall_pass": True, "answer": "done"}} for c in cases]
    rows += [{"role": "router", "case_id": c.id, "details": {"raw_route": "plan", "confidence": 0.9}}
             for c in load_cases("router")]
    return {"cases": rows}


def test_an_accept_of_every_case_is_scored_by_each_sets_policy(capsys):
    run = _accept_everything()
    reviewer = load_cases("reflector")
    right = sum(c.expected == "accept" for c in reviewer)
    sound = rescore(run, ("sound",))
    # the sound set vetoes none of them: each wrong result is a false accept
    assert sound["reflector"]["right"] == right and len(sound["reflector"]["wrong"]) == len(reviewer) - right
    assert all(w.endswith("false accept") for w in sound["reflector"]["wrong"])
    numeric = rescore(run, ("sound", "numeric"))
    assert numeric["reflector"]["right"] > right  # it refuses some of the wrong ones ("done" states no figure)
    routes = load_cases("router")
    assert sound["router"]["right"] == sum(c.expected == "plan" for c in routes) == numeric["router"]["right"]
