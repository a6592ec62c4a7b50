"""The engine's pure pieces: budget caps, failure caps, confirmation gates, config views."""

import pickle

import pytest

from agents.config import RuntimeConfig
from agents.engine.budget import Budget, BudgetExceeded
from agents.engine.gates import is_approval, needs_confirmation
from agents.engine.stops import FailureCaps, Stopped
from agents.engine.task_state import TaskState
from agents.llm.base import Spend, Usage
from agents.roles.messages import StepOutcome
from agents.tools import tool
from planning.models import PlanStep
from planning.policy import DEFAULT_LIMITS


def test_budget_over_a_cap_raises_with_the_cap_named():
    budget = Budget(token_budget=100, max_llm_calls=5)
    budget.check(Usage(llm_calls=5, input_tokens=60, output_tokens=40))  # at the caps: spent, not over
    with pytest.raises(BudgetExceeded) as info:
        budget.check(Usage(llm_calls=1, input_tokens=90, output_tokens=11))
    assert info.value.cap == "token_budget" and info.value.used == 101 and "raise RuntimeConfig.token_budget" in str(
        info.value)


def test_budget_before_a_call_refuses_to_start_at_the_cap():
    budget = Budget(token_budget=None, max_llm_calls=2)
    budget.check(Usage(llm_calls=1), before_call=True)
    with pytest.raises(BudgetExceeded) as info:
        budget.check(Usage(llm_calls=2), before_call=True)
    assert info.value.cap == "max_llm_calls"
    assert pickle.loads(pickle.dumps(info.value)).cap == "max_llm_calls"


def test_no_caps_never_raise():
    Budget(None, None).check(Usage(llm_calls=10**6, input_tokens=10**9), before_call=True)


def _failure(step_id=1, error="boom", kind="permanent", arguments=None):
    return StepOutcome(step_id=step_id, attempt=1, ok=False, started_at=0, finished_at=0, error_kind=kind,
                       error=error, arguments=arguments)


def test_the_same_failing_call_is_a_loop():
    state = TaskState(task_id="t", task="x", submitted_at=0)
    caps = FailureCaps(max_consecutive_errors=10, loop_window=3)
    step = PlanStep(step_id=1, description="d", tool_name="lookup", tool_input={"city": "X"}, depends_on=[])
    assert caps.after_failure(state, step, _failure()) is None
    assert caps.after_failure(state, step, _failure()) is None
    stop = caps.after_failure(state, step, _failure())
    assert isinstance(stop, Stopped) and stop.reason == "loop_detected" and "3 times" in stop.error


def test_different_failures_in_a_row_hit_the_consecutive_cap():
    state = TaskState(task_id="t", task="x", submitted_at=0)
    caps = FailureCaps(max_consecutive_errors=2, loop_window=5)
    a = PlanStep(step_id=1, description="a", tool_name="lookup", tool_input={"city": "A"}, depends_on=[])
    b = PlanStep(step_id=2, description="b", tool_name="lookup", tool_input={"city": "B"}, depends_on=[])
    assert caps.after_failure(state, a, _failure(1)) is None
    stop = caps.after_failure(state, b, _failure(2))
    assert stop is not None and stop.reason == "consecutive_errors"


def test_confirmation_gates():
    @tool(permission="write")
    def save(text: str) -> str:
        """Save.

        Args:
            text: what.
        """
        return text

    spec = save.spec
    assert not needs_confirmation(spec, plan_version=1)
    assert needs_confirmation(spec, plan_version=2)  # planned after tool output: a human confirms
    assert not needs_confirmation(spec, plan_version=2, confirm_replanned_writes=False)
    assert not needs_confirmation(None, plan_version=3)
    assert is_approval(" Approve. ") and not is_approval("no, do not")


def test_config_views_carry_only_their_slice_and_pickle():
    cfg = RuntimeConfig(max_steps=7, router_min_confidence=0.8, context_token_budget=3000,
                        tools={"max_attempts": 5}, step_timeout_s=9)
    assert cfg.router_options().min_confidence == 0.8
    assert cfg.planner_options().max_steps == 7 and cfg.planner_options().prompts.context_token_budget == 3000
    assert cfg.executor_options().tools.max_attempts == 5
    assert cfg.dispatch_options().step_timeout_s == 9
    # What the model's profile says (one request at a time, read-through) reaches the dispatch view beside it.
    serial = cfg.dispatch_options(concurrent_calls=False, read_through=True)
    assert serial.serial_llm and serial.read_through and serial.step_timeout_s == 9
    assert not cfg.dispatch_options().serial_llm and not cfg.dispatch_options().read_through
    for view in (cfg.router_options(), cfg.planner_options(), cfg.executor_options(), cfg.dispatch_options(), serial):
        assert pickle.loads(pickle.dumps(view)) == view


def test_policy_defaults_have_one_source():
    cfg = RuntimeConfig()
    assert cfg.policy_limits() == DEFAULT_LIMITS
    assert cfg.policy_limits(extra_replans=2).max_replans == DEFAULT_LIMITS.max_replans + 2


def test_spend_adds_usage_and_calls():
    one = Spend(Usage(llm_calls=1, input_tokens=3, output_tokens=1), ({"role": "planner"},))
    assert (one + one).usage == Usage(llm_calls=2, input_tokens=6, output_tokens=2)
    assert len((one + Spend()).calls) == 1 and not Spend()
