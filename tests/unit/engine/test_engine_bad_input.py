"""Regressions of issue 19 in the engine and the submit checks (no Ray)."""

from __future__ import annotations

import asyncio
import pickle

import pytest
from support import wire
from support.local import run_task

from agents.task_text import check_task_text
from agents.config import RuntimeConfig
from agents.errors import ConfigError
from agents.llm import FunctionLLM
from prompts.errors import PromptBudgetError


def _llm():
    plan = wire.plan(wire.step(1, "lookup", {"city": "Paris"}))
    return FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[r.role])


def test_a_task_that_does_not_fit_the_prompt_fails_with_a_clear_reason_not_internal_error():
    # Under the whole budget (so submit lets it through) but too long with the router's instructions around it.
    result, _ = asyncio.run(run_task(_llm(), "Paris and Rome. " * 1000,
                                     config=RuntimeConfig(context_token_budget=4500)))
    assert result.status == "failed" and result.stopped_reason == "prompt_too_long"
    assert "please report this bug" not in result.error and "resume" not in result.error
    assert "context_token_budget" in result.error


def test_prompt_budget_error_pickles_intact():
    error = PromptBudgetError("too long", needed=9, budget=5)
    back = pickle.loads(pickle.dumps(error))
    assert (type(back), str(back), back.needed, back.budget) == (PromptBudgetError, "too long", 9, 5)


@pytest.mark.parametrize(("task", "match"), [
    ("", "non-empty"), ("   ", "non-empty"), (None, "non-empty"),
    ("compare \ud800 and Rome", "lone surrogate .* at index 8"),
    ("Paris and Rome. " * 3000, "over the prompt budget RuntimeConfig.context_token_budget=6000"),
    ("Paris and Rome. " * 4000, "over the limit of 50000 characters for any one text"),
])
def test_submit_rejects_text_it_cannot_store_or_prompt(task, match):
    with pytest.raises(ConfigError, match=match):
        check_task_text(task, 6000)


def test_submit_accepts_long_text_that_fits():
    check_task_text("word " * 5000, 6000)  # 25,000 characters, 5,000 tokens


@pytest.mark.parametrize(("field", "value", "says"), [
    ("step_timeout_s", float("inf"), "finite"), ("task_timeout_s", float("nan"), "finite"),
    ("max_steps", True, "a bool is not a number"), ("deployment", {"num_executors": False}, "a bool is not a number"),
    ("store_path", "/", "is a directory"),
])
def test_runtime_config_rejects_values_that_pass_as_valid(field, value, says):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=says):
        RuntimeConfig(**{field: value})


def test_runtime_config_still_takes_bools_where_they_belong(tmp_path):
    cfg = RuntimeConfig(stream_plan=False, confirm_replanned_writes=True, store_path=tmp_path / "t.db")
    assert cfg.stream_plan is False and cfg.max_steps == 50


def _streamed(plan: str) -> FunctionLLM:
    return FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[r.role],
                       stream_chunk_size=16, chunk_delay_s=0.005)


def test_a_streamed_plan_over_max_steps_runs_none_of_its_writes():
    from support import tools as T

    notes = [f"cap-{i}" for i in range(1, 8)]
    for note in notes:
        T.reset(f"note-{note}")
    plan = wire.plan(*[wire.step(i, "append_note", {"note": n}) for i, n in enumerate(notes, 1)])
    result, _ = asyncio.run(run_task(_streamed(plan), "notes", config=RuntimeConfig(max_steps=5)))
    assert result.stopped_reason == "invalid_plan" and "more than 5 steps" in result.error
    assert sum(T.count(f"note-{n}") for n in notes) == 0


def test_a_valid_streamed_plan_still_runs_its_writes_and_streams_its_reads():
    from support import tools as T

    T.reset("note-ok-1")
    # three different reads: the same read written a third time would be a looping planner, cut there
    plan = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "append_note", {"note": "ok-1"}),
                     *[wire.step(i, "lookup", {"city": c}) for i, c in enumerate(("Rome", "Berlin", "Madrid"), 3)])
    result, sink = asyncio.run(run_task(_streamed(plan), "notes"))
    assert result.status == "accepted" and T.count("note-ok-1") == 1
    types = [(e.type, e.payload.step.step_id if e.type == "plan_step" else getattr(e.payload, "step_id", None))
             for e in sink.events]
    # The read step 1 started while the plan was still streaming; the write waited for the whole plan.
    assert types.index(("step_started", 1)) < types.index(("plan_step", 5)) < types.index(("step_started", 2))


def test_the_embedded_model_gets_the_json_forms_and_no_speculation():
    # Its knobs are its profile's, not the config's: a config asking for speculation does not make a one-slot
    # server queue the plan ahead of the route (the planner starts once the router has answered).
    import time

    from agents.llm.profile import HOSTED, SMALL_LOCAL

    roles = ("router", "planner", "reflector")
    assert {r: SMALL_LOCAL.prompt(r) for r in (*roles, "executor")} == {
        "router": "v7", "planner": "v10", "reflector": "v10", "executor": "v3"}
    assert {SMALL_LOCAL.reply_form(r) for r in roles} == {"json"} and not SMALL_LOCAL.concurrent_calls
    assert SMALL_LOCAL.with_prompts(planner="v14").prompt("planner") == "v14"
    plan = wire.plan(wire.step(1, "lookup", {"city": "Paris"}))
    for profile in (SMALL_LOCAL, HOSTED):
        seen: list[tuple[str, str, float]] = []

        async def model(request):
            seen.append((request.role, "start", time.monotonic()))
            if request.role == "router":
                await asyncio.sleep(0.2)
            seen.append((request.role, "end", time.monotonic()))
            return {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[request.role]

        llm = FunctionLLM(model, stream_chunk_size=24, profile=profile)
        result, _ = asyncio.run(run_task(llm, "How big is Paris?", config=RuntimeConfig(speculative_planning=True)))
        at = {(role, what): t for role, what, t in seen}
        assert result.status == "accepted"
        assert (at[("planner", "start")] > at[("router", "end")]) is (profile is SMALL_LOCAL), profile.name
