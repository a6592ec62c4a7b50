"""The embedded model server is warmed with each role's static prompt, so its prompt cache holds every role's
instructions before the first task (no Ray, no server: FunctionLLM stands in)."""

from __future__ import annotations

from agents.config import RuntimeConfig
from agents.llm import HOSTED, SMALL_LOCAL, FunctionLLM
from agents.llm.base import LLMConnectionError, LLMRequest
from agents.llm.local.warm import role_prefixes, start_warming, warm_prefixes
from agents.tools import ToolRegistry
from agents.tools.builtins import calculator, doc_search
from prompts import load_prompt

CATALOG = ToolRegistry([calculator, doc_search]).catalog_text()
MAX_STEPS = RuntimeConfig().max_steps


def _task_prompt(role: str, version: str | None, **task_values: str) -> list[dict[str, str]]:
    template = load_prompt(role, version)
    static = {"tools": CATALOG, "max_steps": str(MAX_STEPS)}
    return template.render(**{v: static.get(v) or task_values.get(v, "") for v in template.variables}).messages


def test_each_prefix_is_what_every_call_of_its_role_starts_with():
    prefixes = role_prefixes(SMALL_LOCAL, CATALOG, MAX_STEPS)
    assert [p.role for p in prefixes] == ["router", "planner", "executor", "reflector"]
    for prefix in prefixes:
        version = SMALL_LOCAL.prompt(prefix.role)
        real = _task_prompt(prefix.role, version, task="Compare Paris and Rome")
        system, user = prefix.messages
        # The whole system message is static; the user message is kept up to the task's first value.
        assert real[0] == system, prefix.role
        assert real[1]["role"] == user["role"] == "user"
        assert real[1]["content"].startswith(user["content"]), prefix.role
        assert "Compare" not in system["content"] + user["content"]


def test_hosted_forms_share_no_opening_and_are_not_prefilled():
    assert load_prompt("router", HOSTED.prompt("router")).opening is None
    assert role_prefixes(HOSTED, CATALOG, 12) == []


def test_the_llm_s_own_profile_says_what_is_warmed():
    asked: list[str] = []
    for profile in (SMALL_LOCAL, HOSTED):
        start_warming(FunctionLLM(lambda r: asked.append(r.role) or "y", profile=profile), CATALOG, MAX_STEPS).join()
    assert asked == ["router", "planner", "executor", "reflector"]  # the embedded model's four; none hosted


def test_one_short_call_per_role_and_a_failure_is_only_logged():
    asked: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        asked.append(request)
        return "y"

    prefixes = role_prefixes(SMALL_LOCAL, CATALOG, MAX_STEPS)
    assert warm_prefixes(FunctionLLM(model), prefixes) is not None
    assert [(r.role, r.max_tokens) for r in asked] == [("router", 1), ("planner", 1), ("executor", 1), ("reflector", 1)]

    def down(request: LLMRequest) -> str:
        raise LLMConnectionError("connection refused")

    assert warm_prefixes(FunctionLLM(down), prefixes) is None


def test_every_warm_up_call_runs_on_one_event_loop_that_closes_the_client():
    # A client left to the garbage collector closed its sockets on a loop already gone: "Event loop is closed"
    # tracebacks in make demo's output once a fourth role was warmed.
    import asyncio

    loops: list[object] = []

    class Closing(FunctionLLM):
        async def aclose(self) -> None:
            loops.append(("closed", asyncio.get_running_loop()))

    def model(request: LLMRequest) -> str:
        loops.append(asyncio.get_running_loop())
        return "y"

    prefixes = role_prefixes(SMALL_LOCAL, CATALOG, MAX_STEPS)
    assert warm_prefixes(Closing(model), prefixes) is not None
    *calls, (closed, loop) = loops
    assert closed == "closed" and len(calls) == len(prefixes) and all(c is loop for c in calls)
