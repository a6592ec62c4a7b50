"""What the roles NOT under test answer: correct replies, so the fuzzed role's output reaches every path."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from agents.llm.base import LLMRequest

__all__ = ["VALID", "VALID_PLAN", "role_of"]

# Step 4 subtracts the reasoning step's text from a number: the tool rejects it at run time, so every task
# makes an argument-repair call; step 5 is a second reasoning step that reads a template of refs.
VALID_PLAN = json.dumps({"steps": [
    {"step_id": 1, "description": "population of Rome", "tool_name": "lookup", "tool_input": {"city": "Rome"},
     "depends_on": []},
    {"step_id": 2, "description": "population of Paris", "tool_name": "lookup",
     "tool_input": {"city": "Paris"}, "depends_on": []},
    {"step_id": 3, "description": "say which city is larger", "tool_name": None, "tool_input": {},
     "depends_on": [1, 2]},
    {"step_id": 4, "description": "Rome minus Paris", "tool_name": "subtract",
     "tool_input": {"a": "$step_3_result", "b": "$step_2_result"}, "depends_on": [2, 3]},
    {"step_id": 5, "description": "summarise {$step_4_result}", "tool_name": None, "tool_input": {},
     "depends_on": [3, 4]},
]})
_FAILED_STEP = re.compile(r"step (\d+) \([^)]*\) — failed|^#(\d+) \S+ failed", re.MULTILINE)  # verbose | compact
_TOOL_LINE = re.compile(r"^Tool: (\S+)", re.MULTILINE)


def _user_text(request: LLMRequest) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.messages if m.get("role") == "user")


def _valid_reflection(request: LLMRequest) -> str:
    """Retry the first failed step with a modification (so repair-with-modification runs too), else accept."""
    failed = _FAILED_STEP.search(_user_text(request))
    if failed:
        retry = {"step_id": int(failed.group(1) or failed.group(2)), "modification": "use the populations"}
        return json.dumps({"scores": {"completeness": 2, "correctness": 2, "format": 3},
                           "overall_pass": False, "action": "retry_step", "retry_details": retry,
                           "feedback": "a step failed", "answer": None})
    return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                       "action": "accept", "retry_details": None, "feedback": "fine",
                       "answer": "0.7 million"})


def _valid_repair(request: LLMRequest) -> str:
    match (_TOOL_LINE.search(_user_text(request)) or [None, ""])[1]:
        case "lookup":
            return '{"city": "Rome"}'
        case "subtract":
            return '{"a": 2.8, "b": 2.1}'
        case "note":
            return '{"text": "ok"}'
        case "archive":
            return '{"record_id": "r1"}'
    return "{}"


VALID: dict[str, Callable[[LLMRequest], str]] = {
    "router": lambda r: '{"route": "plan", "confidence": 0.9, "reason": "needs tools", "answer": null}',
    "planner": lambda r: VALID_PLAN,
    "executor": lambda r: "Rome is larger than Paris.",
    "executor_repair": _valid_repair,
    "reflector": _valid_reflection,
}


def role_of(request: LLMRequest) -> str:
    """The fuzz target a request belongs to: the executor's JSON requests are its argument repairs."""
    if request.role == "executor" and request.response_format == "json":
        return "executor_repair"
    return request.role
