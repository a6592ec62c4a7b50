"""The embedded model server is warmed with the opening every role's prompt shares, so llama.cpp's prefix
cache holds it before the first task (no Ray, no server: FunctionLLM stands in)."""

from __future__ import annotations

from agents.llm import FunctionLLM
from agents.llm.base import LLMRequest
from agents.llm.base import LLMConnectionError
from agents.llm.local.warm import opening_messages, warm_opening
from agents.tools import ToolRegistry
from agents.tools.builtins import calculator, doc_search
from prompts import load_prompt

CATALOG = ToolRegistry([calculator, doc_search]).catalog_text()


def test_the_warm_up_prompt_is_the_start_of_every_embedded_roles_prompt():
    [system, _] = opening_messages("v4", CATALOG)
    for role, version in (("router", "v4"), ("planner", "v6"), ("reflector", "v4")):
        template = load_prompt(role, version)
        values = {v: "50" if v == "max_steps" else "" for v in template.variables} | {"tools": CATALOG}
        assert template.render(**values).messages[0]["content"].startswith(system["content"]), role
    assert opening_messages("v5", CATALOG) is None  # the hosted router's prompt shares no opening


def test_one_short_call_and_a_failure_is_only_logged():
    asked: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        asked.append(request)
        return "y"

    assert warm_opening(FunctionLLM(model), opening_messages("v4", CATALOG)) is not None
    assert [r.max_tokens for r in asked] == [1]

    def down(request: LLMRequest) -> str:
        raise LLMConnectionError("connection refused")

    assert warm_opening(FunctionLLM(down), opening_messages("v4", CATALOG)) is None
