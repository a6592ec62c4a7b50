"""Each task through the real engine, in-process, with every role scripted as a correct (or fooled) model.

The router routes to a plan, the planner returns the task's right plan (every time it is asked), and the
reviewer accepts with 5/5/5 and the given answer. What happens next is the engine's and its checks' doing: for a
right answer anything but "accepted, 3 LLM calls, the reviewer's answer unchanged" is code getting in the way; for
a wrong answer (the reviewer fooled) the only question is whether code caught it.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.config import RuntimeConfig
from agents.engine.runtime import LocalRuntime
from agents.engine.sink import MemorySink
from agents.engine.task_runner import TaskRunner
from agents.engine.task_state import TaskState
from agents.llm import FunctionLLM
from agents.llm.base import LLM, LLMRequest
from agents.llm.profile import HOSTED, ModelProfile
from agents.outputs import OutputSpec, typed_result
from agents.results import TaskResult
from agents.roles.executor import Executor
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router
from agents.tools import MemoryJournal, Tool, ToolRegistry

__all__ = ["CONFIGS", "RunOutcome", "Script", "config_for", "outcome_of", "run_scripted", "runtime_for",
           "scripted_llm"]

CONFIGS = ("default", "numeric")
"""The configurations measured: ``RuntimeConfig()`` and the opt-in numeric set."""
NUMERIC_CHECKS = ("sound", "numeric")


@dataclass(frozen=True, slots=True)
class Script:
    """What every role answers: the task, its plan (wire JSON) and the answer the reviewer accepts with."""

    task: str
    plan: dict[str, Any]
    answer: str
    output: OutputSpec | None = None
    """The task's output type: ``answer`` is then the JSON of the expected value, which the reviewer writes under
    the schema it was shown (as the value itself where its reply's schema holds it, else as the JSON text)."""


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What the engine did with one scripted run."""

    status: str
    llm_calls: int
    replans: int
    plan_changed: bool
    """The final plan differs from the scripted one (code rewrote a step, or a replan changed it)."""
    answer: str | None
    stopped_reason: str = ""
    feedback: str = ""
    """The first replan's feedback (why code or the policy sent the plan back), for reading a veto."""
    output: Any = None
    """With an output type: ``result.output`` validated into the type, as the public API returns it."""
    schema_shown: bool = False
    """With an output type: every review call was shown the type's schema (a model is asked for it there)."""


def config_for(name: str, store: Path) -> RuntimeConfig | None:
    """The configuration called ``name``; None when this build has no such set (``builtin_checks`` is absent
    before the checks layer is merged, so only ``default`` exists)."""
    base: dict[str, Any] = {"store_path": store, "token_budget": None, "max_llm_calls": 60}
    if name == "default":
        return RuntimeConfig(**base)
    if name == "numeric":
        if "builtin_checks" not in RuntimeConfig.model_fields:
            return None
        return RuntimeConfig(**base, builtin_checks=NUMERIC_CHECKS)
    raise ValueError(f"no configuration {name!r}; use one of {', '.join(CONFIGS)}")


def _review(answer: Any) -> str:
    return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                       "action": "accept", "retry_details": None, "feedback": "", "answer": answer})


def schema_shown(request: LLMRequest, output: OutputSpec) -> bool:
    """Was the review call asked for ``output``'s schema: as its reply schema's answer (the JSON form, which the
    server enforces), or on the prompt's last line (the terse form)?"""
    if request.json_schema is not None:
        answer = request.json_schema.get("properties", {}).get("answer", {}).get("anyOf", [None])[0]
        return answer == {k: v for k, v in output.json_schema.items() if k != "$defs"}
    return json.dumps(output.json_schema, separators=(",", ":")) in str(request.messages[-1].get("content", ""))


def scripted_llm(script: Script, calls: list[str], profile: ModelProfile = HOSTED,
                 shown: list[bool] | None = None) -> FunctionLLM:
    """Every role as the script says; ``calls`` records the role of each call made, ``shown`` whether each review
    call was shown the output type's schema (with ``script.output``)."""
    route = json.dumps({"route": "plan", "confidence": 0.95, "reason": "needs the user's tools", "answer": None})
    replies = {"router": route, "planner": json.dumps(script.plan), "reflector": _review(script.answer)}

    def reply(request: LLMRequest) -> str:
        calls.append(request.role)
        if request.role == "reflector" and script.output is not None:
            if shown is not None:
                shown.append(schema_shown(request, script.output))
            # The value itself where the reply's schema asks for it, else its JSON text on the answer line.
            return _review(json.loads(script.answer) if request.json_schema is not None else script.answer)
        # No role but these three should be asked: a reasoning step or an argument repair is a failure of the
        # scripted plan, and "{}" makes it visible as a failed step rather than a plausible guess.
        return replies.get(request.role, "{}")

    return FunctionLLM(reply, profile=profile)


def runtime_for(llm: LLM, tools: Sequence[Tool], config: RuntimeConfig) -> LocalRuntime:
    """The in-process engine's roles over ``tools``, every role asking ``llm``."""
    registry = ToolRegistry(list(tools))
    journal = MemoryJournal()
    return LocalRuntime(
        Router(llm, registry.catalog_text(), config.router_options()),
        Planner(llm, registry.schemas(), registry.catalog_text(), config.planner_options()),
        [Executor(list(tools), llm, config.executor_options(), name=f"executor-{i}", journal=journal)
         for i in range(2)],
        Reflector(llm, config.prompt_options(), registry.catalog_text()),
        {t.name: t.spec for t in registry},
    )


def outcome_of(result: TaskResult, scripted_plan: dict[str, Any], events: Sequence[Any],
               shown: Sequence[bool] = ()) -> RunOutcome:
    """The counts a run is judged by (pure: from the result and the event log)."""
    final = [(s.step_id, s.tool_name, s.tool_input) for s in result.plan.steps] if result.plan else []
    wanted = [(s["step_id"], s["tool_name"], s["tool_input"]) for s in scripted_plan["steps"]]
    feedback = next((str(getattr(e.payload, "feedback", "")) for e in events if e.type == "replanned"), "")
    replans = max(result.replans, sum(1 for e in events if e.type == "replanned"))
    return RunOutcome(status=result.status, llm_calls=result.usage.total.llm_calls, replans=replans,
                      plan_changed=bool(final) and final != wanted, answer=result.answer,
                      stopped_reason=str(result.stopped_reason), feedback=feedback[:300],
                      output=typed_result(result).output,  # as the public API's result() gives it
                      schema_shown=bool(shown) and all(shown))


async def _run(script: Script, tools: Sequence[Tool], config: RuntimeConfig, profile: ModelProfile) -> RunOutcome:
    calls: list[str] = []
    shown: list[bool] = []
    llm = scripted_llm(script, calls, profile, shown)
    state = TaskState(task_id="t-generality", task=script.task, output=script.output, submitted_at=time.time())
    sink = MemorySink("t-generality")
    runner = TaskRunner(state, config=config, runtime=runtime_for(llm, tools, config), sink=sink)
    result = await runner.run()
    return outcome_of(result, script.plan, sink.events, shown)


def run_scripted(script: Script, tools: Sequence[Tool], config: RuntimeConfig | None = None,
                 profile: ModelProfile = HOSTED) -> RunOutcome:
    """One scripted run of ``script`` on the in-process engine (no Ray, no store, no network); ``profile``: the
    model's (its reply forms decide how the reviewer is asked for a typed output)."""
    config = config or config_for("default", Path(tempfile.gettempdir()) / "tetrarch-generality.db")
    assert config is not None
    return asyncio.run(_run(script, tools, config, profile))
