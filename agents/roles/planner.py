"""The Planner role: turns a task into a validated dependency DAG, streaming each step as soon as it is known."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from agents.config import PlannerOptions
from agents.llm.base import LLM, LLMError, LLMReply, LLMRequest, LLMStreamTruncated, Spend, Usage
from agents.roles.json_call import repair_messages, reply_record
from agents.roles.messages import (
    PlanCompleted,
    PlanFailed,
    PlanItem,
    PlanRestarted,
    ReplanContext,
    StepEmitted,
)
from agents.roles.render import render_plan, render_results
from planning.errors import PlanningError
from planning.models import Plan, PlanStep
from planning.parse import plan_schema
from planning.stream import StreamingPlanParser
from planning.validate import validate_plan, validate_step
from prompts import count_message_tokens, count_tokens, load_prompt

__all__ = ["Planner"]

_STREAM_RESENDS = 1
"""A plan stream cut mid-answer (the connection dropped: ``LLMStreamTruncated``) is sent again this many times.
The SDK retries only failures before the stream opens, so without this a single dropped connection would fail
the whole task; a resend does not use up the repair round (the model did nothing wrong)."""


class Planner:
    """Streams plan steps: ``async for item in planner.plan(...)`` yields ``StepEmitted`` as each step's JSON
    closes, then exactly one ``PlanCompleted`` or ``PlanFailed``. An invalid first plan yields
    ``PlanRestarted`` and the repaired plan's steps (one repair round, DESIGN.md)."""

    def __init__(self, llm: LLM, tool_schemas: Mapping[str, dict[str, Any]], tools_catalog: str,
                 options: PlannerOptions) -> None:
        self._llm = llm
        self._schemas = dict(tool_schemas)
        self._catalog = tools_catalog
        self._options = options

    def _messages(self, task: str, replan: ReplanContext | None) -> list[dict[str, Any]]:
        context = ""
        if replan is not None:
            context = (f"Your previous plan:\n{render_plan(replan.previous_plan)}\n\n"
                       f"Results so far:\n"
                       f"{render_results(replan.results)}\n\nFeedback: {replan.feedback}\n"
                       "Write a new, complete plan. To reuse a completed step without running it again, repeat it "
                       "unchanged (same step_id, tool_name, tool_input and depends_on).")
        prompt = load_prompt("planner", self._options.prompts.version("planner")).render(
            budget_tokens=self._options.prompts.context_token_budget, task=task, tools=self._catalog,
            max_steps=str(self._options.max_steps), replan_context=context)
        return prompt.messages

    async def plan(self, task_id: str, task: str, replan: ReplanContext | None = None) -> AsyncIterator[PlanItem]:
        # Reuse is by repetition (same id, tool, input, deps), never by reference to an old id, so every
        # plan is self-contained and validated as such.
        completed: frozenset[int] = frozenset()
        messages = self._messages(task, replan)
        spend = Spend()
        convo = messages
        round_no, resends = 0, 0
        while True:
            steps: list[PlanStep] = []
            raw_parts: list[str] = []
            replied = False
            try:
                async for item in self._one_round(task_id, convo, round_no, completed, steps, raw_parts):
                    if isinstance(item, LLMReply):
                        replied = True
                        spend = spend + Spend(item.usage, (reply_record("planner", convo, item),))
                    else:
                        yield StepEmitted(item)
                plan = Plan(steps=steps)
                validate_plan(plan, self._schemas, max_steps=self._options.max_steps, completed=completed)
                yield PlanCompleted(plan, spend)
                return
            except PlanningError as exc:
                if not replied:
                    # The stream was abandoned at the first invalid step: count what it cost so far, so
                    # budgets stay exact (the server never sent its usage chunk).
                    partial = "".join(raw_parts)
                    spend = spend + _abandoned(convo, partial, str(exc))
                if round_no == 1:
                    reason = "invalid_plan" if type(exc).__name__ == "PlanValidationError" else "invalid_llm_output"
                    yield PlanFailed(f"the planner's plan was still invalid after one repair round: {exc}",
                                     reason, spend)
                    return
                if steps:
                    yield PlanRestarted(str(exc))
                convo = repair_messages(messages, "".join(raw_parts), str(exc))
                round_no += 1
            except LLMStreamTruncated as exc:
                if resends >= _STREAM_RESENDS:
                    yield PlanFailed(f"the planner's model call failed: {exc}", "llm_unavailable", spend)
                    return
                resends += 1
                # The cut stream cost tokens the server never reported (no usage chunk): count them.
                partial = "".join(raw_parts)
                spend = spend + _abandoned(convo, partial, str(exc))
                if steps:
                    yield PlanRestarted(f"the plan stream was cut, sending the request again: {exc}")
            except LLMError as exc:
                yield PlanFailed(f"the planner's model call failed: {exc}", "llm_unavailable", spend)
                return

    async def _one_round(self, task_id: str, convo: list[dict[str, Any]], round_no: int,
                         completed: frozenset[int], steps: list[PlanStep],
                         raw_parts: list[str]) -> AsyncIterator[PlanStep | LLMReply]:
        """Yields validated steps as they stream, then the final LLMReply. ``steps``/``raw_parts`` are filled in
        place so the caller still has them when a PlanningError interrupts the stream."""
        request = LLMRequest(role="planner", messages=convo, response_format="json",
                             json_schema=plan_schema(self._schemas), stream=self._options.stream_plan,
                             metadata={"task_id": task_id, "round": str(round_no)})
        parser = StreamingPlanParser()
        known: dict[int, PlanStep] = {}
        waited: set[int] = set()  # ids the known steps depend on: O(1) per streamed step, not O(known)

        def accept(new_steps: list[PlanStep]) -> list[PlanStep]:
            for step in new_steps:
                validate_step(step, known, self._schemas, max_steps=self._options.max_steps, completed=completed,
                              waited_for=waited)
                known[step.step_id] = step
                waited.update(step.depends_on)
                steps.append(step)
            return new_steps

        if self._options.stream_plan:
            async for piece in self._llm.stream(request):
                if isinstance(piece, LLMReply):
                    raw_parts[:] = [piece.text]
                    for step in accept(parser.close()):
                        yield step
                    yield piece
                    return
                raw_parts.append(piece)
                for step in accept(parser.feed(piece)):
                    yield step
        else:
            reply = await self._llm.complete(request)
            raw_parts[:] = [reply.text]
            for step in accept(parser.feed(reply.text) + parser.close()):
                yield step
            yield reply


def _abandoned(convo: list[dict[str, Any]], partial: str, error: str) -> Spend:
    """What a stream cut or abandoned mid-answer cost: the server never sent its usage chunk, so count it."""
    usage = Usage(llm_calls=1, input_tokens=count_message_tokens(convo), output_tokens=count_tokens(partial))
    return Spend(usage, (reply_record("planner", convo, LLMReply(text=partial), error=error),))
