"""The Reflector role: scores an executed plan and proposes accept / retry_step / replan / escalate.

It only proposes: ``planning.policy.decide`` has the last word.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.config import PromptOptions
from agents.llm.base import LLM
from agents.roles.json_call import call_json
from agents.roles.messages import RoleResult, StepView
from agents.roles.render import evidence_of, render_plan, render_results
from planning.evidence import check_results, render_facts
from planning.models import Plan, Reflection
from planning.parse import parse_reflection, reflection_schema
from planning.terse import render_terse
from prompts import load_prompt
from prompts.compact import render_results_compact

__all__ = ["Reflector"]


class Reflector:
    def __init__(self, llm: LLM, prompts: PromptOptions, tools_catalog: str = "") -> None:
        self._llm = llm
        self._prompts = prompts
        self._tools = tools_catalog
        """Only a template that opens like the other roles' prompts shows it (the shared prefix)."""

    def use_tools(self, tools_catalog: str) -> None:
        self._tools = tools_catalog

    async def reflect(self, task_id: str, task: str, plan: Plan, results: Sequence[StepView]) -> RoleResult[Reflection]:
        template = load_prompt("reflector", self._prompts.version("reflector"))
        terse = template.reply_form == "terse"
        # The terse template reads the plan as the planner wrote it and one line a result (the lean reflector);
        # the JSON one keeps the verbose rendering it was measured with.
        # One line a result for the terse and the newer (opening) templates: on the embedded model every token of
        # the verbose form costs ~22 ms of prefill; the JSON ones that predate it keep what they were measured with.
        compact = terse or template.opening is not None
        extra: dict[str, str] = {}
        if "tools" in template.variables:
            extra["tools"] = self._tools
        if "checks" in template.variables:  # facts computed by code, which a small model misses (planning.evidence)
            extra["checks"] = render_facts(check_results(task, evidence_of(results, plan)))
        prompt = template.render(
            budget_tokens=self._prompts.context_token_budget, task=task,
            plan=render_terse(plan) if terse else render_plan(plan),
            results=render_results_compact(results) if compact else render_results(results), **extra)
        call = await call_json(self._llm, role="reflector", messages=prompt.messages, parse=parse_reflection,
                               json_schema=reflection_schema(), metadata={"task_id": task_id},
                               form=template.reply_form)
        return RoleResult(call.value, call.spend)
