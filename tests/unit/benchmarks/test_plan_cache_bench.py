"""The plan-cache benchmark (issue 22): suites whose halves never share a task, whose held-out tasks do (or, in the
control suite, do not) have a warm-up shape; a verdict on computed outputs that catches a wrongly filled plan; and
a report that marks each target met or missed from the records it is given."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from agents.memory.plan_cache import Filled, extract_template, plan_reuse
from benchmarks.memory.plan_cache import select
from benchmarks.memory.plan_cache_report import CacheBench, summary, target_lines, write_plan_cache_report
from benchmarks.runner import RunRecord
from benchmarks.suite import PLAN_CACHE_SUITES, final_output_correct, load_suite
from benchmarks.suites.generate_plan_cache import SUITE_KINDS, build_plan_cache_suites, task_kind
from planning.models import Plan

SUITES = Path(__file__).resolve().parents[3] / "benchmarks" / "suites"


def test_the_generator_reproduces_the_committed_suites():
    world = json.loads((SUITES / "world.json").read_text())
    for name, tasks in build_plan_cache_suites(world).items():
        assert json.loads((SUITES / f"{name}.json").read_text())["tasks"] == tasks


def test_no_task_appears_twice_and_each_half_has_its_kinds():
    texts = [t.text for s in PLAN_CACHE_SUITES for t in load_suite(s)]
    assert len(texts) == len(set(texts))
    for name, (warm_kinds, held_kinds, per_warm, per_held) in SUITE_KINDS.items():
        for split, kinds, per in (("warmup", warm_kinds, per_warm), ("heldout", held_kinds, per_held)):
            tasks = load_suite(name, split=split)
            assert Counter(t.kind for t in tasks) == Counter({k: per for k in kinds})
            assert all(task_kind({"task": t.text, "plan": t.gold.plan}) == t.kind for t in tasks)
    assert Counter(t.kind for t in select("plan-cache", "heldout", 1)) == Counter(SUITE_KINDS["plan-cache"][1])


def _templates(suite: str):
    return [extract_template(t.text, Plan.model_validate({"steps": t.gold.plan}))
            for t in load_suite(suite, split="warmup")]


def test_every_held_out_task_of_the_same_kinds_suite_fills_to_its_gold_plan():
    templates = _templates("plan-cache")
    for task in load_suite("plan-cache", split="heldout"):
        filled = [r.plan for r in (plan_reuse(t, task.text) for t in templates) if isinstance(r, Filled)]
        assert filled and all(p == Plan.model_validate({"steps": task.gold.plan}) for p in filled), task.id


def test_no_held_out_task_of_the_shapes_suite_matches_a_warm_up_template():
    templates = _templates("plan-cache-shapes")
    for task in load_suite("plan-cache-shapes", split="heldout"):
        assert all(type(plan_reuse(t, task.text)).__name__ == "NoMatch" for t in templates), task.id


def test_a_plan_filled_with_a_wrong_value_is_judged_wrong():
    task = load_suite("plan-cache", split="heldout")[0]
    assert final_output_correct(task, "accepted", [task.answer_number])
    assert not final_output_correct(task, "accepted", [task.answer_number * 1.5 + 1])
    assert not final_output_correct(task, "escalated", [task.answer_number])  # not accepted: not right


def _record(system: str, phase: str, task: str, wall: float, tokens: int, calls: int, mode: str | None,
            correct: bool) -> RunRecord:
    return RunRecord("plan-cache", task, system, 0, "accepted", wall, 0.1, calls, tokens, tokens // 10, correct, 1,
                     None, None, phase=phase, plan_cache=mode)


def _bench(suite: str, cached_tokens: int, cached_wall: float, mode: str | None, wrong: int = 0) -> CacheBench:
    records = []
    for i in range(4):
        for phase in ("warmup", "heldout"):
            records += [_record("no_cache", phase, f"t{i}", 3.0, 1500, 3, None, True),
                        _record("plan_cache", phase, f"t{i}", cached_wall, cached_tokens, 2 if mode else 3, mode,
                                i >= wrong)]
    return CacheBench(suite, "ttft 0.35s", "sim", False, 1.0, records, templates=4, lookup_ms=[0.2, 0.3])


def test_targets_are_judged_from_the_records():
    met = target_lines(summary(_bench("plan-cache", 800, 2.0, "filled")))
    assert any("fewer tokens" in x and "46.7%" in x and x.endswith("met") for x in met)
    assert any("median wall time: 33.3%" in x and x.endswith("met") for x in met)
    missed = target_lines(summary(_bench("plan-cache", 1000, 2.7, "filled", wrong=1)))
    assert any("fewer tokens" in x and "MISSED** by 6.7 percentage points" in x for x in missed)
    assert any("median wall time: 10.0%" in x and "MISSED** by 15.0 percentage points" in x for x in missed)
    assert any("false hits" in x and "1 of 4" in x and "MISSED" in x for x in missed)
    assert any("accuracy: 75%" in x and "MISSED" in x for x in missed)
    assert sum(x.startswith("  - why:") for x in missed) == 2 and not any("why:" in x for x in met)


def test_the_control_suite_reports_hits_and_overhead(tmp_path: Path):
    lines = target_lines(summary(_bench("plan-cache-shapes", 1500, 3.05, None)))
    assert any("hit rate" in x and "0%" in x and x.endswith("met") for x in lines)
    assert any("overhead, tokens: 0%" in x and x.endswith("met") for x in lines)
    assert any("overhead, median wall time: 2%" in x and x.endswith("met") for x in lines)
    doc = write_plan_cache_report([_bench("plan-cache", 800, 2.0, "filled"),
                                   _bench("plan-cache-shapes", 1500, 3.05, None)], tmp_path)
    md = (tmp_path / "plan-cache.md").read_text()
    assert "## Suite `plan-cache-shapes`" in md and "![plan-cache.png](plan-cache.png)" in md
    assert (tmp_path / "plan-cache.png").stat().st_size > 0
    assert json.loads((tmp_path / "plan-cache.json").read_text())["suites"][0]["summary"] == doc["suites"][0]["summary"]


def test_tetrarch_bench_plan_cache_runs_on_the_simulated_llm_only():
    import pytest

    from benchmarks.cli import _parser, main

    assert _parser().parse_args(["--plan-cache", "--quick"]).plan_cache
    with pytest.raises(SystemExit, match="simulated LLM only"):
        main(["--plan-cache", "--llm", "openai:some-model"])
