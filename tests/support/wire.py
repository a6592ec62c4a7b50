"""Build the JSON each role must return (DESIGN.md wire formats), so scripts read like the flow they test."""

from __future__ import annotations

import json
from typing import Any


def route(kind: str = "plan", confidence: float = 0.95, reason: str = "needs tools", answer: str | None = None) -> str:
    return json.dumps({"route": kind, "confidence": confidence, "reason": reason, "answer": answer})


def step(step_id: int, tool: str | None, tool_input: dict[str, Any] | None = None, deps: list[int] | None = None,
         description: str = "") -> dict[str, Any]:
    return {"step_id": step_id, "description": description or f"step {step_id}", "tool_name": tool,
            "tool_input": tool_input or {}, "depends_on": deps or []}


def plan(*steps: dict[str, Any]) -> str:
    return json.dumps({"steps": list(steps)})


def reflection(action: str = "accept", scores: tuple[int, int, int] = (5, 5, 5), answer: str | None = "done",
               retry_step: int | None = None, modification: str = "", feedback: str = "") -> str:
    return json.dumps({
        "scores": {"completeness": scores[0], "correctness": scores[1], "format": scores[2]},
        "overall_pass": action == "accept", "action": action,
        "retry_details": {"step_id": retry_step, "modification": modification} if retry_step else None,
        "feedback": feedback, "answer": answer,
    })
