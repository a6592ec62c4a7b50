"""The speculated reads' part of the plan-cache report: ratios over the held-out tasks both cached systems filled,
judged from the records (``benchmarks.memory.speculation_report``)."""

from __future__ import annotations

from benchmarks.memory.plan_cache_report import CacheBench, from_jsonable, summary, target_lines, to_jsonable
from benchmarks.memory.speculation_report import speculation_lines, speculation_summary
from benchmarks.runner import RunRecord

WALLS = {"no_cache": 3.0, "plan_cache_nospec": 2.5, "plan_cache": 2.0, "react_parallel": 5.0}


def _records(react_wall: float, *, filled: bool = True) -> list[RunRecord]:
    out = []
    for i in range(3):
        for system, wall in {**WALLS, "react_parallel": react_wall}.items():
            cached = system.startswith("plan_cache") and filled
            out.append(RunRecord("plan-cache", f"t{i}", system, 0, "accepted", wall, 0.5, 2, 600, 30, True, 3,
                                 None, None, timeline=[{"step_id": 1, "tool": "lookup", "status": "completed",
                                                        "start": 0.0, "end": 1.0}],
                                 phase="heldout", plan_cache="filled" if cached else None))
    return out


SERVED = {f"plan_cache/t{i}": 2 for i in range(3)}


def test_the_ratio_is_over_the_hits_and_judged_against_the_target():
    spec = speculation_summary(_records(react_wall=5.0), SERVED)
    assert spec is not None and spec["hit_tasks"] == 3
    assert spec["ratio_vs_react_parallel"] == 2.5 and spec["ratio_nospec_vs_react_parallel"] == 2.0
    assert spec["speculation_cut"] == 0.2 and (spec["served_steps"], spec["steps"]) == (6, 9)
    assert spec["median_phases_s"] == {"route": 0.5, "steps_after_route": 0.5, "review": 1.0,
                                       "tasks_reads_outran_route": 3, "tasks_long_step_after_route": 0, "tasks": 3}
    missed = speculation_lines(spec)
    assert "**2.50×**" in missed[0] and "MISSED** by 0.50×" in missed[0]
    assert "20.0% lower" in missed[1] and "6 of 9 steps" in missed[1] and "the same" in missed[1]
    assert missed[2].startswith("  - why:") and "needs 1.67 s" in missed[2] and "3 of 3 hits" in missed[2]
    met = speculation_lines(speculation_summary(_records(react_wall=6.0), SERVED))
    assert "**3.00×**" in met[0] and met[0].endswith("met") and not any("why" in x for x in met)


def test_no_hits_or_no_baseline_means_no_speculation_lines():
    assert speculation_summary(_records(5.0, filled=False), SERVED) is None
    without_react = [r for r in _records(5.0) if r.system != "react_parallel"]
    assert speculation_summary(without_react, SERVED) is None and speculation_lines(None) == []
    bench = CacheBench("plan-cache", "ttft", "sim", False, 1.0, _records(5.0), speculated=SERVED)
    lines = target_lines(summary(bench))
    assert any("vs native ReAct∥" in x for x in lines) and any("6 of 9 steps" in x for x in lines)
    assert from_jsonable(to_jsonable([bench]))[0].speculated == SERVED  # kept through the results file
