"""The shipped prompt regression set (benchmarks/prompt_regression): the case files are well-formed and big
enough, and the runner's scoring is right — checked on canned role outputs through the real role classes
(FunctionLLM), never a model."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from agents.checks.review import review_context
from agents.llm import SMALL_LOCAL, FunctionLLM
from agents.llm.base import LLMRequest
from agents.tools.builtins import builtin_tools
from benchmarks.prompt_regression.run import (
    CASES_DIR,
    MIN_CASES,
    ROLES,
    CaseError,
    PlannerCase,
    ReflectorCase,
    RouterCase,
    _parse_pins,
    _select,
    build_report,
    build_roles,
    demo_config,
    load_cases,
    regression_tools,
    render_markdown,
    run_cases,
    run_planner_case,
    run_reflector_case,
    run_router_case,
    summarize,
)
from planning.models import Reflection, ReflectionAction, Route
from prompts.errors import PromptNotFoundError

ROUTES = set(Route.__args__)  # type: ignore[attr-defined]
ACTIONS = set(ReflectionAction.__args__)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    return regression_tools(tmp_path_factory.mktemp("ws"))


@pytest.fixture(scope="module")
def shipped(registry):
    return {role: load_cases(role, tool_schemas=registry.schemas()) for role in ROLES}


def _roles(fn, registry):
    # The set measures the embedded model: its profile's prompt versions and JSON reply forms, as the CLI runs it.
    return build_roles(FunctionLLM(fn, stream_chunk_size=7, profile=SMALL_LOCAL), registry, demo_config())


def _route(route: str, confidence: float = 0.9, answer: str | None = None) -> str:
    return json.dumps({"route": route, "confidence": confidence, "reason": "canned", "answer": answer})


def _reflection(action: str, scores=(5, 5, 5), overall: bool = True,
                answer: str | None = "Rome has 650,000 more people than Paris.",
                retry: dict | None = None) -> str:
    c, k, f = scores
    return json.dumps({"scores": {"completeness": c, "correctness": k, "format": f}, "overall_pass": overall,
                       "action": action, "retry_details": retry, "feedback": "canned", "answer": answer})


def _step(i, tool, inp, deps=()):
    return {"step_id": i, "description": f"step {i}", "tool_name": tool, "tool_input": inp, "depends_on": list(deps)}


VALID_PLAN = json.dumps({"steps": [
    _step(1, "doc_search", {"query": "population of Paris", "k": 1}),
    _step(2, "doc_search", {"query": "population of Rome", "k": 1}),
    _step(3, "calculator", {"expression": "{$step_2_result} - {$step_1_result}"}, [1, 2])]})
UNKNOWN_TOOL_PLAN = json.dumps({"steps": [_step(1, "lookup", {"city": "Paris"})]})
MISSING_DEP_PLAN = json.dumps({"steps": [_step(1, "calculator", {"expression": "{$step_2_result} * 2"})]})


# ---------------------------------------------------------------------------------------------- the files
def test_every_role_has_enough_cases(shipped) -> None:
    for role in ROLES:
        assert (CASES_DIR / f"{role}.jsonl").is_file()
        assert len(shipped[role]) >= MIN_CASES >= 20, role


def test_case_ids_are_unique_across_the_set(shipped) -> None:
    ids = [c.id for role in ROLES for c in shipped[role]]
    assert len(ids) == len(set(ids))
    for role in ROLES:
        assert all(c.id.startswith(f"{role}-") for c in shipped[role])


def test_router_cases_cover_every_route(shipped) -> None:
    cases = shipped["router"]
    assert all(isinstance(c, RouterCase) and c.task.strip() and c.expected in ROUTES for c in cases)
    counts = Counter(c.expected for c in cases)
    assert set(counts) == ROUTES
    assert counts["plan"] > len(cases) / 3, counts          # mostly plan ...
    assert all(counts[r] >= 4 for r in ("direct", "clarify", "refuse")), counts  # ... but enough of the others


def test_planner_cases_are_tasks_for_the_builtin_tools(shipped, registry) -> None:
    names = set(registry.names())
    assert {t.name for t in builtin_tools(Path("/nonexistent"))} <= names
    cases = shipped["planner"]
    assert all(isinstance(c, PlannerCase) and c.task.strip() and c.min_steps >= 1 for c in cases)
    assert all(set(c.expect_tools) <= names for c in cases)
    assert len({c.task for c in cases}) == len(cases)
    used = Counter(t for c in cases for t in c.expect_tools)
    assert used["doc_search"] >= 10 and used["calculator"] >= 5 and used["run_python"] >= 2  # varied


def test_reflector_cases_reference_real_steps_and_both_outcomes(shipped) -> None:
    cases = shipped["reflector"]
    for c in cases:
        assert isinstance(c, ReflectorCase)
        plan_ids = [s.step_id for s in c.plan.steps]
        assert sorted(v.step_id for v in c.results) == sorted(plan_ids), c.id
        assert c.expected in ("accept", "not_accept")
        assert set(c.expected_actions) <= ACTIONS
        for v in c.results:
            if v.status != "completed":
                assert v.error, c.id
    counts = Counter(c.expected for c in cases)
    assert counts["accept"] >= 8 and counts["not_accept"] >= 8, counts
    statuses = Counter(v.status for c in cases for v in c.results)
    assert statuses["failed"] >= 3 and statuses["skipped"] >= 1  # failed steps, not only wrong figures


@pytest.mark.parametrize(("role", "line", "message"), [
    ("router", {"id": "x", "task": "t", "expected": "answer"}, "not one of"),
    ("router", {"id": "x", "task": " ", "expected": "plan"}, "'task' must be a non-empty string"),
    ("router", {"id": "x", "task": "t", "expected": "plan", "extra": 1}, "unknown key"),
    ("planner", {"id": "x", "task": ""}, "'task' must be a non-empty string"),
    ("planner", {"id": "x", "task": "t", "expect_tools": ["lookup"]}, "unknown tool"),
    ("planner", {"id": "x", "task": "t", "min_steps": 0}, "min_steps"),
    ("reflector", {"id": "x", "task": "t", "plan": {"steps": [_step(1, "calculator", {"expression": "1+1"})]},
                   "results": [{"step_id": 2, "status": "completed", "output": 2, "error": None}],
                   "expected": "accept"}, "not in the plan"),
    ("reflector", {"id": "x", "task": "t", "plan": {"steps": [_step(1, "calculator", {"expression": "1+1"}),
                                                              _step(2, "calculator", {"expression": "2+2"})]},
                   "results": [{"step_id": 1, "status": "completed", "output": 2, "error": None}],
                   "expected": "accept"}, "have no result"),
    ("reflector", {"id": "x", "task": "t", "plan": {"steps": [_step(1, "calculator", {"expression": "1+1"})]},
                   "results": [{"step_id": 1, "status": "failed", "output": None, "error": None}],
                   "expected": "not_accept"}, "needs an 'error' text"),
    ("reflector", {"id": "x", "task": "t", "plan": {"steps": [_step(1, "calculator", {"expression": "1+1"})]},
                   "results": [{"step_id": 1, "status": "completed", "output": 2, "error": None}],
                   "expected": "maybe"}, "'accept' or 'not_accept'"),
    ("reflector", {"id": "x", "task": "t", "plan": {"steps": [_step(1, "calc", {"expression": "1+1"})]},
                   "results": [{"step_id": 1, "status": "completed", "output": 2, "error": None}],
                   "expected": "accept"}, "does not validate"),
])
def test_malformed_cases_are_rejected_with_the_line(tmp_path, registry, role, line, message) -> None:
    f = tmp_path / f"{role}.jsonl"
    f.write_text("\n" + json.dumps(line) + "\n")
    with pytest.raises(CaseError, match=message) as err:
        load_cases(role, f, tool_schemas=registry.schemas())
    assert f"{role}.jsonl:2" in str(err.value)


def test_duplicate_ids_are_rejected(tmp_path) -> None:
    f = tmp_path / "router.jsonl"
    f.write_text(json.dumps({"id": "a", "task": "t", "expected": "plan"}) + "\n"
                 + json.dumps({"id": "a", "task": "u", "expected": "direct"}) + "\n")
    with pytest.raises(CaseError, match="duplicate"):
        load_cases("router", f)


# ---------------------------------------------------------------------------------------------- scoring
def test_router_scoring(registry) -> None:
    case = RouterCase("r", "Hello!", "direct")
    res = asyncio.run(run_router_case(_roles(lambda r: _route("direct", answer="Hi"), registry).router, case))
    assert res.passed and res.got == "direct" and not res.repaired and res.llm_calls == 1 and res.input_tokens > 0

    # Low confidence: production asks back, so a "plan" case fails, and the reason names the threshold.
    case = RouterCase("r", "Sum the populations of Berlin and Madrid.", "plan")
    res = asyncio.run(run_router_case(_roles(lambda r: _route("plan", 0.3), registry).router, case))
    assert not res.passed and res.got == "clarify" and res.details["raw_route"] == "plan"
    assert "below the threshold" in res.reason

    replies = iter(["not json", _route("plan")])
    res = asyncio.run(run_router_case(_roles(lambda r: next(replies), registry).router, case))
    assert res.passed and res.repaired and res.llm_calls == 2

    res = asyncio.run(run_router_case(_roles(lambda r: "nope", registry).router, case))
    assert not res.passed and res.got == "invalid" and "no usable router decision" in res.reason


def test_planner_scoring_valid_repaired_and_invalid(registry) -> None:
    case = PlannerCase("p", "Paris vs Rome", ("doc_search", "calculator"), 3, True)
    res = asyncio.run(run_planner_case(_roles(lambda r: VALID_PLAN, registry).planner, case))
    assert res.passed and res.got == "valid" and not res.repaired
    assert res.details["structure_ok"] and res.details["steps"] == 3 and res.details["first_step_s"] is not None

    for first in (UNKNOWN_TOOL_PLAN, MISSING_DEP_PLAN, "{\"steps\": [ oops"):
        replies = iter([first, VALID_PLAN])
        res = asyncio.run(run_planner_case(_roles(lambda r, it=replies: next(it), registry).planner, case))
        assert res.passed and res.repaired and res.got == "valid (repaired)", first
        assert res.llm_calls == 2 and res.details["first_round_error"]

    res = asyncio.run(run_planner_case(_roles(lambda r: UNKNOWN_TOOL_PLAN, registry).planner, case))
    assert not res.passed and res.got == "invalid_plan" and "lookup" in res.reason and res.repaired

    # Valid, but not what the case expects: still a valid plan; the structure is reported separately.
    only_calc = json.dumps({"steps": [_step(1, "calculator", {"expression": "2.75 - 2.10"})]})
    res = asyncio.run(run_planner_case(_roles(lambda r: only_calc, registry).planner, case))
    assert res.passed and not res.details["structure_ok"]
    problems = " ".join(res.details["structure_problems"])
    assert "doc_search" in problems and "at least 3" in problems and "at once" in problems


def _reflector_case(expected: str, **kw) -> ReflectorCase:
    f = CASES_DIR / "reflector.jsonl"
    base = next(c for c in load_cases("reflector", f) if c.id == "reflector-01")
    return ReflectorCase(base.id, base.task, base.plan, base.results, expected, "why", **kw)


@pytest.mark.parametrize(("expected", "reply", "passed", "got", "raw_agrees"), [
    ("accept", _reflection("accept"), True, "accept", True),
    ("accept", _reflection("accept", scores=(5, 3, 5)), False, "replan", True),      # the policy overrules
    ("accept", _reflection("replan", overall=False), False, "replan", False),
    ("not_accept", _reflection("accept"), False, "accept", False),                    # a false accept
    ("not_accept", _reflection("accept", scores=(5, 2, 5)), True, "replan", False),   # saved by the policy
    ("not_accept", _reflection("retry_step", (3, 2, 4), False, None, {"step_id": 3, "modification": "x"}),
     True, "retry_step", True),
    ("not_accept", _reflection("retry_step", (3, 2, 4), False, None, {"step_id": 9, "modification": "x"}),
     True, "replan", True),                                                           # unknown step → replan
    ("not_accept", _reflection("escalate", (2, 2, 2), False, None), True, "escalate", True),
])
def test_reflector_agreement_uses_the_policy(registry, expected, reply, passed, got, raw_agrees) -> None:
    case = _reflector_case(expected)
    res = asyncio.run(run_reflector_case(_roles(lambda r: reply, registry).reflector, case))
    assert (res.passed, res.got, res.details["raw_agrees"]) == (passed, got, raw_agrees)
    assert bool(res.reason) is (not passed)


def test_a_second_review_production_asks_for_is_run_and_scored(registry) -> None:
    # reflector-01's answer states the 650,000 step 3 computed: a low score is asked about once more, as the task
    # runner does (planning.policy.ReviewAgain), and the case ends on the second verdict, a false accept included.
    replies = iter([_reflection("accept", scores=(3, 4, 5)), _reflection("accept")])
    seen: list[str] = []

    def fn(request: LLMRequest) -> str:
        seen.append(request.messages[-1]["content"])
        return next(replies)

    res = asyncio.run(run_reflector_case(_roles(fn, registry).reflector, _reflector_case("not_accept")))
    assert (res.passed, res.got, res.llm_calls) == (False, "accept", 2)
    assert res.details["first_review"]["scores"] == [3, 4, 5]
    assert "scored too low to accept (completeness 3/5" in seen[1] and "scored too low" not in seen[0]


def test_reflector_answer_mentions_and_action_fit(registry) -> None:
    case = _reflector_case("accept", answer_mentions=(("650,000", "0.65 million"),))
    ok = _reflection("accept", answer="Rome has 650 000 more people than Paris.")
    res = asyncio.run(run_reflector_case(_roles(lambda r: ok, registry).reflector, case))
    assert res.passed and res.details["missing_mentions"] == []
    # "How many more …?" answered without the 650,000 step 3 computed: code refuses the accept, as in production.
    vague = _reflection("accept", answer="Rome is bigger.")
    res = asyncio.run(run_reflector_case(_roles(lambda r: vague, registry).reflector, case))
    assert not res.passed and res.got == "replan" and res.details["raw_agrees"]
    assert "step 3 computed 650,000" in res.details["refused_by_code"][0]

    case = _reflector_case("not_accept", expected_actions=("retry_step",))
    res = asyncio.run(run_reflector_case(_roles(lambda r: _reflection("escalate", (2, 2, 2), False), registry)
                                         .reflector, case))
    assert res.passed and res.details["action_fits"] is False

    res = asyncio.run(run_reflector_case(_roles(lambda r: "{}", registry).reflector, case))
    assert not res.passed and res.got == "invalid" and res.llm_calls == 2


# ---------------------------------------------------------------------------------------------- report
def test_whole_set_runs_and_reports_with_canned_replies(shipped, registry) -> None:
    """Every shipped case through the real roles with a FunctionLLM: router always 'plan', planner a valid plan
    except for two tasks (one repaired, one never valid), reflector always 'accept' 5/5/5."""
    planner_tasks = [c.task for c in shipped["planner"]]
    repaired_task, broken_task = planner_tasks[0], planner_tasks[1]
    rounds: Counter[str] = Counter()

    def fn(request: LLMRequest) -> str:
        if request.role == "router":
            return _route("plan")
        if request.role == "reflector":
            return _reflection("accept")
        task = request.messages[1]["content"]
        rounds[task] += 1
        if broken_task in task or (repaired_task in task and rounds[task] == 1):
            return UNKNOWN_TOOL_PLAN
        return VALID_PLAN

    results = asyncio.run(run_cases(_roles(fn, registry), shipped))
    assert [r.role for r in results] == ["router"] * len(shipped["router"]) + ["planner"] * len(shipped["planner"]) \
        + ["reflector"] * len(shipped["reflector"])

    n_router, n_plan = len(shipped["router"]), sum(c.expected == "plan" for c in shipped["router"])
    s = summarize("router", results)
    assert (s["passed"], s["total"], s["raw_correct"]) == (n_plan, n_router, n_plan)
    assert s["confusion"]["refuse"] == {"plan": sum(c.expected == "refuse" for c in shipped["router"])}

    n = len(shipped["planner"])
    s = summarize("planner", results)
    assert (s["valid"], s["total"], s["repaired_valid"]) == (n - 1, n, 1)
    assert s["headline"] == f"planner valid plans: {n - 1}/{n} = {100 * (n - 1) / n:.0f}% (1 of them needed the repair round)"
    assert s["meets_target"] is ((n - 1) / n >= 0.9)
    assert s["failure_reasons"] == {"invalid_plan": 1}

    # The canned accept goes through the same code checks as production (the demo's sets): refused where they
    # contradict it. The default set alone refuses none of them: it vetoes only an unfilled step reference or a false equation.
    canned = Reflection.model_validate_json(_reflection("accept"))
    checks = demo_config().builtin_checks
    refused = {c.id for c in shipped["reflector"]
               if review_context(canned, c.task, c.results, c.plan, checks=checks).contradictions}
    assert not [c.id for c in shipped["reflector"] if review_context(canned, c.task, c.results, c.plan).contradictions]
    acc = [c.id for c in shipped["reflector"] if c.expected == "accept"]
    rej = [c.id for c in shipped["reflector"] if c.expected != "accept"]
    right_refused, wrong_refused = len(refused & set(acc)), len(refused & set(rej))
    assert 0 < len(refused) < len(shipped["reflector"])
    s = summarize("reflector", results)
    assert (s["passed"], s["false_accepts"], s["false_rejects"]) == \
        (len(acc) - right_refused + wrong_refused, len(rej) - wrong_refused, right_refused)
    assert s["refused_by_code"] == {"wrong": wrong_refused, "right": right_refused}

    model = {"name": "canned", "title": "FunctionLLM", "quantization": "-", "n_ctx": 0, "path": "-", "size": 0,
             "sha256": None, "sha256_source": "none"}
    report = build_report(results, shipped, model=model, config=demo_config(), profile=SMALL_LOCAL, wall_s=1.0,
                          started_at="2026-01-01T00:00:00Z", command="test")
    assert json.loads(json.dumps(report))["summary"]["planner"]["valid"] == n - 1
    # The embedded model's forms (agents.llm.SMALL_LOCAL): the regression set measures that model.
    embedded = {f"{role}/{SMALL_LOCAL.prompt(role)}" for role in ("router", "planner", "reflector", "repair")}
    assert {p["template_id"] for p in report["prompts"].values()} == embedded
    assert report["config"]["prompt_versions"] == dict(SMALL_LOCAL.prompts)
    assert all(len(p["fingerprint"]) == 64 for p in report["prompts"].values())
    md = render_markdown(report)
    assert f"planner valid plans: {n - 1}/{n}" in md and "## Failures" in md
    failed = [r for r in results if not r.passed]
    assert md.count("| ✗ |") == len(failed)
    assert "invalid_plan" in md and "refuse" in md


def test_cli_helpers() -> None:
    assert _parse_pins(["planner=v14", "reflector=v11"]) == {"planner": "v14", "reflector": "v11"}
    with pytest.raises(SystemExit):
        _parse_pins(["planner"])
    # a retired version fails before the run
    with pytest.raises(PromptNotFoundError, match="available: v10, v14"):
        _parse_pins(["planner=v1"])
    cases = {"router": [RouterCase("router-01", "a", "plan"), RouterCase("router-02", "b", "direct")],
             "planner": [PlannerCase("planner-01", "c")]}
    assert [c.id for c in _select(cases, [], 1)["router"]] == ["router-01"]
    assert _select(cases, ["router-02"], None) == {"router": [cases["router"][1]], "planner": []}
    with pytest.raises(SystemExit, match="unknown case"):
        _select(cases, ["nope"], None)


def test_an_unreachable_model_is_a_failed_case_not_a_crash(registry) -> None:
    from agents.llm.base import LLMConnectionError

    def down(request: LLMRequest) -> str:
        raise LLMConnectionError("connection refused")

    roles = _roles(down, registry)
    res = asyncio.run(run_router_case(roles.router, RouterCase("r", "Hello", "direct")))
    assert (res.passed, res.got) == (False, "llm_unavailable") and "connection refused" in res.reason
    res = asyncio.run(run_planner_case(roles.planner, PlannerCase("p", "Paris vs Rome")))
    assert (res.passed, res.got) == (False, "llm_unavailable")
    res = asyncio.run(run_reflector_case(roles.reflector, _reflector_case("accept")))
    assert (res.passed, res.got) == (False, "llm_unavailable")


def test_rerender_rebuilds_the_summary_from_the_recorded_cases(tmp_path, registry) -> None:
    from benchmarks.prompt_regression.run import _write, rerender

    cases = {"router": [RouterCase("router-01", "Hello", "direct"), RouterCase("router-02", "Sum it", "plan")]}
    results = asyncio.run(run_cases(_roles(lambda r: _route("direct"), registry), cases))
    report = build_report(results, cases, model={"name": "m"}, config=demo_config(), profile=SMALL_LOCAL,
                          wall_s=1.0, started_at="t", command="c")
    report["summary"]["router"]["headline"] = "stale"
    jpath, mpath = _write(report, tmp_path, "prompt-regression-m")
    assert rerender(jpath) == mpath
    again = json.loads(jpath.read_text())
    assert again["summary"]["router"]["headline"] == "router accuracy: 1/2 = 50%"
    assert again["cases"] == report["cases"] and "router accuracy: 1/2 = 50%" in mpath.read_text()
