"""A session follow-up on the embedded model (issue 22): the second turn can only be answered from the first
turn's result, which reaches the model through the session history alone.

The real default path, as ``test_local_llm_e2e.py``: ``Orchestrator(llm=None)``, the managed llama.cpp server,
the embedded model's prompt forms (router/v4 and planner/v5 read the ``history`` context item), the roles as Ray
actors, the built-in calculator. Nothing is scripted. Turn 1 computes 17 * 23; turn 2 says "that result"
without its value, so a right 1173 means the history carried 391 to the planner. Runs when the model is
pulled (``make test-llm``); ``TETRARCH_SESSION_MODEL=NAME`` picks another catalogue model.
"""

from __future__ import annotations

import os
import re

import pytest
from support.local_models import require_model

from agents import Orchestrator, RuntimeConfig
from agents.llm.local import DEFAULT_MODEL, get_model

FIRST, FIRST_ANSWER = "Use the calculator to compute 17 * 23.", 391
FOLLOW_UP, FOLLOW_UP_ANSWER = "Now use the calculator to multiply that result by 3.", 1173
TASK_TIMEOUT_S = 420

pytestmark = [pytest.mark.llm, pytest.mark.ray, pytest.mark.timeout(2 * TASK_TIMEOUT_S + 180)]

MODEL = os.environ.get("TETRARCH_SESSION_MODEL", DEFAULT_MODEL)


def _numbers(text: str | None) -> set[float]:
    return {float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", (text or "").replace(",", ""))}


def _computed(result) -> set[float]:
    out = set()
    for step in result.steps:
        if step.tool_name == "calculator" and step.status == "completed":
            try:
                out.add(float(step.output))
            except (TypeError, ValueError):
                continue
    return out


@pytest.fixture(scope="module")
def turns(tmp_path_factory):
    """Both turns of one session through the public API, on one Orchestrator."""
    get_model(MODEL)  # an unknown name fails here, not as a skip
    require_model(MODEL)
    import ray

    if ray.is_initialized():  # the real path starts (and owns) its own Ray
        ray.shutdown()
    store = tmp_path_factory.mktemp("session") / "tetrarch.db"
    config = RuntimeConfig(store_path=store, step_timeout_s=120, task_timeout_s=TASK_TIMEOUT_S)
    orch = Orchestrator(llm=get_model(MODEL), config=config)
    try:
        session = orch.session()
        first = session.run(FIRST, timeout=TASK_TIMEOUT_S + 60)
        second = session.run(FOLLOW_UP, timeout=TASK_TIMEOUT_S + 60)
        recorded = session.turns()
    finally:
        orch.shutdown()
    for n, result in enumerate((first, second), 1):  # shown on failure and with -s
        print(f"\n[session] {MODEL} turn {n}: status={result.status} ({result.stopped_reason}), "
              f"answer={result.answer!r}, error={result.error!r}, {result.timings.wall_s:.1f}s")
        for step in result.steps:
            print(f"[session]   step {step.step_id} {step.tool_name}({step.tool_input}) -> {step.status}: "
                  f"{str(step.output if step.error is None else step.error)[:120]!r}")
    return first, second, recorded


def test_the_first_turn_is_answered(turns):
    first, _, _ = turns
    assert first.status == "accepted", (first.stopped_reason, first.error, first.question)
    assert FIRST_ANSWER in _computed(first) | _numbers(first.answer)


@pytest.mark.xfail(MODEL == DEFAULT_MODEL, strict=False, reason=(
    "measured 2026-11-25, 3 of 3 runs on qwen2.5-coder-1.5b: the history carries 391, but the planner writes "
    "calculator('$step_1_result * 3') for 'that result' and keeps it after the repair round names the mistake "
    "(qwen2.5-coder-0.5b wrote '391 * 3' from the history, with a dependency on a step that does not exist)"))
def test_the_follow_up_is_answered_from_the_first_turns_result(turns):
    first, second, _ = turns
    assert first.status == "accepted", "the follow-up is only meaningful after a right first turn"
    assert second.status == "accepted", (second.stopped_reason, second.error, second.question)
    # 1173 is 391 * 3: the follow-up names neither 17, 23 nor 391, so only the history can have supplied it.
    assert FOLLOW_UP_ANSWER in _computed(second) | _numbers(second.answer), (second.answer, _computed(second))


def test_both_turns_are_recorded_in_the_session(turns):
    first, second, recorded = turns
    assert [(t.turn_no, t.task_id, t.status) for t in recorded] == [
        (1, first.task_id, first.status), (2, second.task_id, second.status)]
