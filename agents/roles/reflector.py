"""The Reflector role: scores an executed plan and proposes accept / retry_step / replan / escalate.

It only proposes: ``planning.policy.decide`` has the last word.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.config import PromptOptions
from agents.llm.base import LLM
from agents.roles.json_call import call_json
from agents.roles.messages import RoleResult, StepView
from agents.roles.render import render_plan, render_results
from planning.models import Plan, Reflection
from planning.parse import parse_reflection, reflection_schema
from planning.terse import render_terse
from prompts import load_prompt
from prompts.compact import render_results_compact

__all__ = ["Reflector"]


class Reflector:
    def __init__(self, llm: LLM, prompts: PromptOptions) -> None:
        self._llm = llm
        self._prompts = prompts

    async def reflect(self, task_id: str, task: str, plan: Plan, results: Sequence[StepView]) -> RoleResult[Reflection]:
        template = load_prompt("reflector", self._prompts.version("reflector"))
        terse = template.reply_form == "terse"
        # The terse template reads the plan as the planner wrote it and one line a result (the lean reflector);
        # the JSON one keeps the verbose rendering it was measured with.
        prompt = template.render(
            budget_tokens=self._prompts.context_token_budget, task=task,
            plan=render_terse(plan) if terse else render_plan(plan),
            results=render_results_compact(results) if terse else render_results(results))
        call = await call_json(self._llm, role="reflector", messages=prompt.messages, parse=parse_reflection,
                               json_schema=reflection_schema(), metadata={"task_id": task_id},
                               form=template.reply_form)
        return RoleResult(call.value, call.spend)
