"""Before the timed runs on the embedded model, the benchmark prefills every system's static prompt: what each
system's first call of a task starts with (no Ray, no server: FunctionLLM with the embedded model's profile stands
in)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agents.llm import SMALL_LOCAL, FunctionLLM
from agents.llm.base import LLMRequest
from agents.react import ReActAgent
from agents.tools.builtins import calculator, doc_search
from benchmarks.runner import bench_config, warm_every_system

TOOLS = [calculator, doc_search]
CONFIG = bench_config(Path("/tmp/unused.db"))  # never opened


def _embedded(fn) -> FunctionLLM:  # type: ignore[no-untyped-def]
    return FunctionLLM(fn, profile=SMALL_LOCAL)


def _starts_with(messages: list[dict[str, str]], prefix: list[dict[str, str]]) -> bool:
    *whole, last = prefix
    return (messages[:len(whole)] == whole and messages[len(whole)]["role"] == last["role"]
            and messages[len(whole)]["content"].startswith(last["content"]))


def _first_react_call(parallel: bool) -> list[dict[str, str]]:
    seen: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        seen.append(request)
        return json.dumps({"thought": "done", "final_answer": "4"})

    asyncio.run(ReActAgent(_embedded(model), TOOLS, CONFIG, parallel=parallel).run("What is 2 + 2?"))
    return seen[0].messages


def test_every_system_is_prefilled_with_what_its_first_call_starts_with():
    asked: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        asked.append(request)
        return "y"

    took = warm_every_system(_embedded(model), CONFIG, TOOLS, TOOLS, ("tetrarch", "react", "react_parallel"))
    assert took is not None
    assert [r.role for r in asked] == ["router", "planner", "executor", "reflector", "react", "react"]
    assert all(r.max_tokens == 1 and "2 + 2" not in json.dumps(r.messages) for r in asked)
    assert _starts_with(_first_react_call(parallel=False), asked[4].messages)
    assert _starts_with(_first_react_call(parallel=True), asked[5].messages)


def test_only_the_systems_being_run_are_prefilled():
    asked: list[LLMRequest] = []
    warm_every_system(_embedded(lambda r: asked.append(r) or "y"), CONFIG, TOOLS, TOOLS, ("react_parallel",))
    assert [r.role for r in asked] == ["react"]


def test_native_baselines_are_prefilled_with_their_tool_specs_and_json_ones_without():
    asked: list[LLMRequest] = []
    warm_every_system(_embedded(lambda r: asked.append(r) or "y"), CONFIG, TOOLS, TOOLS, ("react", "react_json"))
    native, text = asked
    assert [s["function"]["name"] for s in native.tools or []] == ["calculator", "doc_search"]
    assert text.tools is None and "calculator(" in text.messages[0]["content"]
    assert "calculator(" not in native.messages[0]["content"]
