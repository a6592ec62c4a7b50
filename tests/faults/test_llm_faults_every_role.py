"""Every role survives every LLM transport fault: whole tasks, real client, real HTTP, real state machine.

A task runs in-process (``TaskRunner`` + ``LocalRuntime``, no Ray) with the real ``OpenAIChat`` against
``FakeOpenAIServer``, whose responder plays each role correctly. One fault is injected into the requests
of ONE role (matched by that role's system prompt), and the task must END — accepted when a retry
recovered, failed with an error that names the role or the cause, or escalated — within a bounded time,
and never raise out of the runner. Where the outcome is deterministic it is asserted exactly.

Why real HTTP: the SDK's own retries (429 with Retry-After, 5xx, timeouts), SSE parsing and error mapping
are what actually stands between a flaky server and a failed task; a mock of the SDK would test nothing.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from support import wire
from support.local import run_task
from support.tools import lookup, subtract
from support.traced import run_stored

from agents.config import RuntimeConfig
from agents.llm import OpenAIChat
from agents.llm.fake_server import FakeOpenAIServer, Fault
from agents.results import TaskResult
from agents.store import Store

TASK = "How many more million people live in Rome than in Paris?"
REASONED = "REASONED-OK: Rome is the larger city"
"""The reasoning step's answer; the reflector accepts only results that contain it."""

# Each role's system prompt (the default versions of prompts/<role>/v*.txt) holds one of these; faults target a
# role through them.
MARKERS = {
    "router": "You route tasks",
    "planner": "You are the planner",
    "executor": "You carry out one step",  # a reasoning step (tool_name null)
    "executor_repair": "A tool call was rejected",  # the executor's argument-repair round
    "reflector": "You review the steps run",
}
ROLES = list(MARKERS)
FIGURES_MARKER = "A calculation needs numbers"
"""The executor's repair round when a number slot got text stating numbers (``Strategy.FIGURE_FIT``): a model
profile's strategy, so ``OpenAIChat``'s hosted default here never asks it; kept so a role is always recognised."""
FAULTS = ["rate_limit", "server_error", "hang", "malformed_body", "truncated", "wrong_shape"]

# Step 4 writes Rome's figure into text ("2.8 million" where the tool wants a float; it also waits for the reasoning
# step): the tool rejects it at run time (after the plan validated), so every run makes one argument-repair call —
# the executor's second kind of LLM call. (A reasoning step's prose put in a number slot fails the step at once
# instead: it states no figure, and a repaired call could only invent one.)
PLAN = wire.plan(
    wire.step(1, "lookup", {"city": "Rome"}),
    wire.step(2, "lookup", {"city": "Paris"}),
    wire.step(3, None, {}, deps=[1, 2], description="say which city is larger"),
    wire.step(4, "subtract", {"a": "{$step_1_result} million", "b": "$step_2_result"}, deps=[1, 2, 3],
              description="Rome's population minus Paris's"),
)
REPAIRED_ARGS = json.dumps({"a": 2.8, "b": 2.1})
DIFFERENCE = "0.7"

CLIENT_TIMEOUT_S = 0.5
HANG_S = 5.0
"""Longer than the client timeout; the server cuts a hang short when it stops."""
TASK_BOUND_S = 20.0
"""No scenario may take longer than this: a hang of the system under test fails the test, never CI."""


def _system(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "system")


def _role_of(body: dict[str, Any]) -> str:
    system = _system(body)
    if FIGURES_MARKER in system:
        return "executor_figures"
    for role, marker in MARKERS.items():
        if marker in system:
            return role
    raise AssertionError(f"no role marker in the system prompt: {system[:200]!r}")


def _reflection(body: dict[str, Any]) -> str:
    """An honest reviewer: accept only when the reasoning step and the subtraction both succeeded; else retry
    the first step whose result is missing (retry resets its dependents too)."""
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user")
    if REASONED not in text:
        return wire.reflection("retry_step", (2, 2, 2), answer=None, retry_step=3,
                               feedback="step 3 is unusable")
    # step 4's result, in the verbose (reflector/v2) or the one-line rendering (reflector/v3; v5 adds the call and
    # its description: "#4 subtract ok ($3, $2) # Rome's population minus Paris's → 0.7")
    if not re.search(r"step 4 \(subtract\) — completed:\n<untrusted-data[^>]*>\n0\.7\n|^#4 subtract ok(?: .*)? → 0\.7$",
                     text, re.MULTILINE):
        return wire.reflection("retry_step", (2, 2, 2), answer=None, retry_step=4, feedback="step 4 failed")
    return wire.reflection("accept", answer=f"Rome has {DIFFERENCE} million more people than Paris.")


@dataclass
class Responder:
    """Plays every role over HTTP, recognising the role from its system prompt.

    ``cut`` makes the next replies of a role arrive cut in half: the non-streaming counterpart of a truncated
    stream (a model that hit its token limit, or a proxy that cut the body).
    """

    cut: dict[str, int] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> str:
        role = _role_of(body)
        text = {"router": lambda: wire.route(), "planner": lambda: PLAN, "executor": lambda: REASONED,
                "executor_repair": lambda: REPAIRED_ARGS, "executor_figures": lambda: json.dumps({"3": 2.8}),
                "reflector": lambda: _reflection(body)}[role]()
        with self._lock:
            self.calls[role] = self.calls.get(role, 0) + 1
            if self.cut.get(role, 0) > 0:
                self.cut[role] -= 1
                return text[: len(text) // 2]
        return text


@pytest.fixture
def responder() -> Responder:
    return Responder()


@pytest.fixture
def server(responder: Responder) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=responder, stream_chunk_chars=64) as srv:
        yield srv


def _inject(server: FakeOpenAIServer, responder: Responder, role: str, fault: str, times: int | None) -> None:
    marker = MARKERS[role]
    match fault:
        case "rate_limit":
            server.inject(Fault.rate_limit(0.05, marker=marker, times=times))
        case "server_error":
            server.inject(Fault.server_error(500, marker=marker, times=times))
        case "hang":
            server.inject(Fault.hang(HANG_S, marker=marker, times=times))
        case "malformed_body":
            server.inject(Fault.malformed_body(marker=marker, times=times))
        case "truncated" if role == "planner":  # the only role that streams
            server.inject(Fault.truncated_stream(2, marker=marker, times=times))
        case "truncated":
            responder.cut[role] = 1_000_000 if times is None else times
        case "wrong_shape":
            server.inject(Fault.wrong_shape_json(marker=marker, times=times))
        case _:
            raise AssertionError(fault)


def _config(**kw: Any) -> RuntimeConfig:
    # Small caps so that persistent faults end quickly: one retry of a step, one replan.
    return RuntimeConfig(max_step_retries=1, max_replans=1, step_timeout_s=5.0, task_timeout_s=TASK_BOUND_S,
                         tools={"backoff_s": 0.0, "backoff_max_s": 0.0}, **kw)


def _client(server: FakeOpenAIServer) -> OpenAIChat:
    return OpenAIChat("fake-model", base_url=server.base_url, api_key="sk-fake", timeout_s=CLIENT_TIMEOUT_S,
                      max_retries=1)


def _run(server: FakeOpenAIServer) -> tuple[TaskResult, float]:
    llm = _client(server)

    async def go() -> TaskResult:
        try:
            # The outer bound is a test guard above the task's own task_timeout_s: a hang fails here.
            run = run_task(llm, TASK, tools=[lookup, subtract], config=_config())
            result, _ = await asyncio.wait_for(run, timeout=TASK_BOUND_S + 10)
            return result
        finally:
            await llm.aclose()

    started = time.monotonic()
    result = asyncio.run(go())
    return result, time.monotonic() - started


def _explain(result: TaskResult) -> str:
    return f"{result.status}/{result.stopped_reason}: {result.error or result.question or result.answer}"


def test_the_happy_path_makes_one_call_per_role(server, responder):
    """The baseline every fault is measured against: accepted, with one call of each kind."""
    result, _ = _run(server)
    assert result.status == "accepted", _explain(result)
    assert DIFFERENCE in (result.answer or "")
    assert responder.calls == {role: 1 for role in ROLES}
    assert [s.status for s in result.steps] == ["completed"] * 4


# One fault, once: what the system does next is deterministic.
#   - 429/500/hang: the SDK retries the same request → accepted, whatever the role.
#   - malformed body (HTTP 200, body not JSON): not retried by the SDK (an unusable answer, not a transient
#     one) → the router fails with llm_unavailable naming the role; an executor step fails, the reflector
#     retries it → accepted. The planner and the reviewer stream (the reviewer so its answer reaches the caller
#     as it is written), and to an SSE reader a non-SSE body is a stream that ended without [DONE]: it is re-sent
#     like a truncated one → accepted.
#   - truncated: the planner's stream drops (the planner re-sends its request once) → accepted; a cut JSON
#     answer goes through the one repair round → accepted; a cut reasoning answer is retried by review.
#   - wrong-shape JSON: the one repair round fixes it → accepted; for the executor the wrong text becomes
#     the step's output (reasoning) or arguments the tool rejects (repair), and review retries the step.
ONCE: dict[tuple[str, str], tuple[str, str]] = {
    (role, fault): ("accepted", "accepted") for role in ROLES for fault in FAULTS}
ONCE[("router", "malformed_body")] = ("failed", "llm_unavailable")


@pytest.mark.timeout(TASK_BOUND_S + 20)
@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("role", ROLES)
def test_one_fault_in_one_role_ends_the_task_deterministically(server, responder, role, fault):
    _inject(server, responder, role, fault, times=1)
    result, wall = _run(server)
    assert not server.pending_faults and not any(responder.cut.values()), "the fault never fired"
    status, reason = ONCE[role, fault]
    assert (result.status, result.stopped_reason) == (status, reason), _explain(result)
    if status == "accepted":
        assert DIFFERENCE in (result.answer or "")
    else:
        assert result.error and role in result.error, _explain(result)
    assert wall < TASK_BOUND_S


# The fault never stops: the task must still END, with an error that says where and why.
ROLE_WORDS = {"router": "router", "planner": "planner", "reflector": "reflector"}
CAUSE_WORDS = {"rate_limit": ["rate-limit"], "server_error": ["HTTP 500"], "hang": ["timeout_s"],
               "malformed_body": ["unusable response", "stream truncated"],  # the planner reads SSE
               "truncated": ["truncated", "repair round"], "wrong_shape": ["repair round"]}
EXECUTOR_TEXT_FAULTS = ("truncated", "wrong_shape")
"""A reasoning step answered with cut or wrong text still *completes*: only review can reject it."""


@pytest.mark.timeout(TASK_BOUND_S + 20)
@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("role", ROLES)
def test_a_persistent_fault_in_one_role_ends_the_task_with_a_clear_reason(server, responder, role, fault):
    _inject(server, responder, role, fault, times=None)
    result, wall = _run(server)
    assert wall < TASK_BOUND_S
    if role in ROLE_WORDS:
        assert result.status == "failed", _explain(result)
        assert result.stopped_reason in ("llm_unavailable", "invalid_llm_output", "invalid_plan"), \
            _explain(result)
        error = result.error or ""
        assert ROLE_WORDS[role] in error, error
        assert any(word in error for word in CAUSE_WORDS[fault]), error
    elif role == "executor_repair" and fault in EXECUTOR_TEXT_FAULTS:
        # Arguments still rejected after the repair round go back to the planner once (fail fast); the
        # planner writes the same call, review retries it, and the third identical failure is a loop: the
        # task fails at once, naming the step and the tool's words, instead of asking a human to retry.
        assert (result.status, result.stopped_reason) == ("failed", "loop_detected"), _explain(result)
        assert result.replans == 1
        error = result.error or ""
        assert "step 4 (subtract) failed the same way 3 times" in error, error
        assert any(word in error for word in CAUSE_WORDS[fault] + ["still invalid after one repair round"]), error
    else:
        # The executor's other failures are step failures (or unusable outputs): review retries the step
        # once, then a human is asked. Never accepted: the step never produces what the task needs.
        assert (result.status, result.stopped_reason) == ("escalated", "max_step_retries"), _explain(result)
        assert result.question
        failed = [s for s in result.steps if s.status == "failed"]
        if role == "executor" and fault in EXECUTOR_TEXT_FAULTS:
            assert not failed and REASONED not in str(result.steps[2].output)
        else:
            assert failed and all(s.error for s in failed), [s.model_dump() for s in result.steps]
            cause = CAUSE_WORDS[fault] + ["still invalid after one repair round"]
            assert all(any(word in (s.error or "") for word in cause) for s in failed), \
                [s.error for s in failed]


@pytest.mark.timeout(TASK_BOUND_S + 20)
def test_a_plan_stream_cut_mid_answer_is_sent_again_once_and_costed(server, responder):
    """The SDK cannot retry a stream that already opened; the planner re-sends it once (not as its repair
    round), and the cut attempt's tokens are charged: budgets stay exact."""
    server.inject(Fault.truncated_stream(1, marker=MARKERS["planner"]))
    result, _ = _run(server)
    assert result.status == "accepted", _explain(result)
    planner_bodies = [b for b in server.requests if _role_of(b) == "planner"]
    assert len(planner_bodies) == 2 and planner_bodies[0]["messages"] == planner_bodies[1]["messages"]
    assert result.usage.by_role["planner"].llm_calls == 2
    assert result.usage.by_role["planner"].output_tokens > 0


@pytest.mark.timeout(TASK_BOUND_S + 20)
@pytest.mark.parametrize("role", ["router", "planner", "reflector"])
def test_through_the_supervisor_and_store_a_dead_model_is_a_stored_failed_result(server, responder, tmp_path,
                                                                                 role):
    """The same path the Orchestrator takes (SupervisorCore + SQLite): the failure is the stored result, the
    event stream ends with task_finished, and nothing is left running."""
    server.inject(Fault.server_error(503, marker=MARKERS[role], times=None))
    db = tmp_path / "tasks.db"
    task_id, result, live = run_stored(db, _client(server), TASK, tools=[lookup, subtract],
                                       config=_config(store_path=db))
    assert (result.status, result.stopped_reason) == ("failed", "llm_unavailable"), _explain(result)
    assert role in (result.error or "") and "HTTP 503" in (result.error or "")
    assert live[-1]["type"] == "task_finished"
    stored = Store(db).get_result(task_id)
    assert stored is not None and (stored.status, stored.error) == ("failed", result.error)
