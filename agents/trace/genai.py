"""Span names and attributes in OpenTelemetry's GenAI semantic conventions (agent spans), shared by the live
spans (``agents.engine.otel_spans``) and the post-hoc export (``agents.trace.otel``), so both look alike.

One task run is an ``invoke_agent tetrarch`` span; under it a ``plan`` span per plan version holding the
planner's ``chat`` span, an ``execute_tool <tool>`` span per step attempt (siblings: parallel steps overlap),
and a ``chat <model>`` span per router, reviewer and executor call. Tool arguments and results are attributes
only when asked for (``content=True``): the conventions mark them sensitive.

Example:
    >>> tool_attributes(Ids("t1", None), plan_version=1, step_id=2, attempt=1, tool="calculator")["gen_ai.tool.call.id"]
    't1/v1/s2/a1'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["AGENT_NAME", "AGENT_SPAN", "PLAN_SPAN", "PROVIDER", "Ids", "agent_attributes", "chat_attributes",
           "chat_span_name", "plan_attributes", "tool_attributes", "tool_span_name"]

AGENT_NAME = "tetrarch"
AGENT_SPAN = f"invoke_agent {AGENT_NAME}"
PLAN_SPAN = "plan"
PROVIDER = "openai"
"""``gen_ai.provider.name`` of every chat span: each backend tetrarch calls speaks the OpenAI chat API."""

_AGENT_OF_ROLE = {"reflector": "reviewer"}


@dataclass(frozen=True, slots=True)
class Ids:
    task_id: str
    session_id: str | None

    def attributes(self) -> dict[str, Any]:
        attrs: dict[str, Any] = {"gen_ai.conversation.id": self.session_id or self.task_id,
                                 "tetrarch.task_id": self.task_id}
        if self.session_id:
            attrs["tetrarch.session_id"] = self.session_id
        return attrs


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def agent_attributes(ids: Ids, *, run: int = 1) -> dict[str, Any]:
    return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT_NAME, "gen_ai.agent.id": ids.task_id,
            "gen_ai.agent.description": "plan-then-execute: router, planner, parallel executors, reviewer",
            "tetrarch.run": run, **ids.attributes()}


def plan_attributes(ids: Ids, plan_version: int, steps: int) -> dict[str, Any]:
    return {"gen_ai.operation.name": "plan", "gen_ai.agent.name": "planner", "tetrarch.plan_version": plan_version,
            "tetrarch.plan_steps": steps, **ids.attributes()}


def chat_span_name(model: str) -> str:
    return f"chat {model or 'unknown'}"


def chat_attributes(ids: Ids, role: str, model: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {"gen_ai.operation.name": "chat", "gen_ai.provider.name": PROVIDER,
            "gen_ai.request.model": model or "unknown", "gen_ai.response.model": model or "unknown",
            "gen_ai.agent.name": _AGENT_OF_ROLE.get(role, role), "gen_ai.usage.input_tokens": int(input_tokens),
            "gen_ai.usage.output_tokens": int(output_tokens), "tetrarch.role": role, **ids.attributes()}


def tool_span_name(tool: str | None) -> str:
    return f"execute_tool {tool or 'reasoning'}"


def tool_attributes(ids: Ids, *, plan_version: int, step_id: int, attempt: int, tool: str | None,
                    arguments: Any = None, result: Any = None, content: bool = False) -> dict[str, Any]:
    """``arguments`` / ``result`` become ``gen_ai.tool.call.arguments`` / ``.result`` only with ``content``."""
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool or "reasoning",
        "gen_ai.tool.type": "function" if tool else "extension",
        "gen_ai.tool.call.id": f"{ids.task_id}/v{plan_version}/s{step_id}/a{attempt}",
        "tetrarch.plan_version": plan_version, "tetrarch.step_id": step_id, "tetrarch.attempt": attempt,
        **ids.attributes()}
    if content and arguments is not None:
        attrs["gen_ai.tool.call.arguments"] = _json(arguments)
    if content and result is not None:
        attrs["gen_ai.tool.call.result"] = _json(result)
    return attrs
