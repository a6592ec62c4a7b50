"""What an escalation asks the human, and the answer a task falls back on: text built from the task's state,
kept apart from the state machine (``agents.engine.task_runner``) that raises the stops.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agents.engine.gates import needs_confirmation
from agents.tools import ToolSpec
from planning.models import PlanStep

__all__ = ["confirmation_question", "fallback_answer", "repeated_plan_question", "with_checked_answer"]

_QUESTION_ARGS_CHARS = 2000


def confirmation_question(step: PlanStep, spec: ToolSpec | None, resolved: Any, plan_version: int,
                          confirm_replanned_writes: bool) -> str:
    """The question a call that needs a human's confirmation asks: the call, its arguments as filled in from
    earlier outputs (untrusted, cut to a readable length), and why it needs confirming."""
    assert spec is not None, f"step {step.step_id}'s tool {step.tool_name!r} has no spec"
    question = (f"Step {step.step_id} wants to run the {spec.permission} tool "
                f"'{step.tool_name}' with {json.dumps(step.tool_input, ensure_ascii=False)}")
    if resolved is not None and resolved != step.tool_input:
        shown = json.dumps(resolved, ensure_ascii=False, default=str)
        if len(shown) > _QUESTION_ARGS_CHARS:
            shown = f"{shown[:_QUESTION_ARGS_CHARS]}… ({len(shown) - _QUESTION_ARGS_CHARS} more characters)"
        question += f", that is, filled in from earlier steps' output (untrusted): {shown}"
    question += "."
    if not spec.requires_confirmation and needs_confirmation(spec, plan_version, confirm_replanned_writes):
        question += (" It was planned after the planner had read tool output (a replan), which may carry "
                     "injected instructions, so it needs your confirmation.")
    return question + " Reply 'approve' to run it, or anything else to refuse."


def repeated_plan_question(plan_version: int, feedback: str, proposed: str | None, checked: bool) -> tuple[str, str]:
    """(reason, question) when a replan wrote the plan again that the reviewer turned down and its steps gave the
    same results: a review would read the same prompt and give the same verdict (at temperature 0, always; the
    embedded model did this on every multi-hop task it got wrong, two replans and ~60 s for nothing).
    ``checked``: ``proposed`` is the answer code found consistent with the results."""
    reason = (f"the replanned plan repeats plan v{plan_version - 1} step for step, with the same "
              "results, so reviewing it again would not change the verdict")
    said = feedback.strip().rstrip(".") or "none"
    question = (f"The planner could not find another plan after this feedback: {said}. "
                "Rephrase the task or add what is missing, or accept the "
                + ("last answer code found consistent with the results" if checked else "last proposed answer")
                + (f": {proposed}" if proposed else "") + ("" if proposed and proposed[-1] in ".!?" else "."))
    return reason, question


def with_checked_answer(question: str, checked_answer: str | None, last: str | None) -> str:
    """An escalation's question, told of the checked answer it proposes when the last review wrote another. A
    later review can lose a checked answer: a second look at a low-scored "127.3%" wrote "127.28%" scored as low, a
    replan followed, and the last review asked for another replan with no answer at all."""
    if checked_answer is None or checked_answer == last:
        return question
    return (f"{question} An earlier answer, which code found consistent with the results but the review "
            f"did not accept: {checked_answer}")


def fallback_answer(plan_steps: Sequence[PlanStep], outputs: Mapping[int, Any]) -> str | None:
    """The reflector accepted without writing an answer: the outputs of the plan's final steps."""
    depended = {d for s in plan_steps for d in s.depends_on}
    sinks = [s.step_id for s in plan_steps if s.step_id not in depended and s.step_id in outputs]
    parts = [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
             for v in (outputs[i] for i in sinks)]
    return "\n".join(parts) if parts else None
