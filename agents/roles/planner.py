"""The Planner role: turns a task into a validated dependency DAG, streaming each step as soon as it is known."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from agents.config import PlannerOptions
from agents.llm.base import LLM, LLMError, LLMReply, LLMRequest, LLMStreamTruncated, Spend, Usage
from agents.roles.json_call import repair_messages, reply_record
from agents.roles.messages import (
    PlanCallStarted,
    PlanCompleted,
    PlanFailed,
    PlanItem,
    PlanRestarted,
    ReplanContext,
    StepEmitted,
)
from agents.roles.replan import kept_steps, replan_context
from planning.errors import PlanningError, PlanValidationError
from planning.grammar import terse_plan_grammar
from planning.models import Plan, PlanStep
from planning.parse import plan_schema
from planning.stream import StreamingPlanParser
from planning.validate import PlanProblem, ProblemCode, validate_plan, validate_step
from prompts import count_message_tokens, count_tokens, load_prompt
from prompts.registry import ReplyForm

__all__ = ["Planner"]

_STREAM_RESENDS = 1
"""A plan stream cut mid-answer (the connection dropped: ``LLMStreamTruncated``) is sent again this many times.
The SDK retries only failures before the stream opens, so without this a single dropped connection would fail
the whole task; a resend does not use up the repair round (the model did nothing wrong)."""


class Planner:
    """Streams plan steps: ``async for item in planner.plan(...)`` yields ``PlanCallStarted`` before each model
    call, ``StepEmitted`` as each step closes (a terse line or a JSON step object, whichever the model writes),
    then exactly one ``PlanCompleted`` or ``PlanFailed``. An invalid first plan yields ``PlanRestarted`` and the
    repaired plan's steps (one repair round, DESIGN.md). A terse replan is a delta: the kept steps are emitted
    first, without a model token, then the model's new ones.

    Example:
        >>> planner = Planner(llm, {"lookup": {...}}, catalog, RuntimeConfig().planner_options())  # doctest: +SKIP
        >>> [item async for item in planner.plan("t1", "Population of Rome?")][-1].plan  # doctest: +SKIP
        Plan(steps=[PlanStep(step_id=1, tool_name='lookup', ...)])
    """

    def __init__(self, llm: LLM, tool_schemas: Mapping[str, dict[str, Any]], tools_catalog: str,
                 options: PlannerOptions) -> None:
        self._llm = llm
        self._schemas = dict(tool_schemas)
        self._catalog = tools_catalog
        self._options = options
        self._grammar: str | None = None

    def _form(self) -> ReplyForm:
        return load_prompt("planner", self._options.prompts.version("planner")).reply_form

    def _messages(self, task: str, replan: ReplanContext | None) -> list[dict[str, Any]]:
        template = load_prompt("planner", self._options.prompts.version("planner"))
        context = "" if replan is None else replan_context(replan, terse=template.reply_form == "terse")
        prompt = template.render(
            budget_tokens=self._options.prompts.context_token_budget, task=task, tools=self._catalog,
            max_steps=str(self._options.max_steps), replan_context=context)
        return prompt.messages

    def _request(self, task_id: str, convo: list[dict[str, Any]], round_no: int, form: ReplyForm) -> LLMRequest:
        metadata = {"task_id": task_id, "round": str(round_no)}
        if form == "json":
            return LLMRequest(role="planner", messages=convo, response_format="json",
                              json_schema=plan_schema(self._schemas), stream=self._options.stream_plan,
                              metadata=metadata)
        if self._grammar is None:
            self._grammar = terse_plan_grammar(self._schemas)
        return LLMRequest(role="planner", messages=convo, response_format="text", grammar=self._grammar,
                          stream=self._options.stream_plan, metadata=metadata)

    async def plan(self, task_id: str, task: str, replan: ReplanContext | None = None) -> AsyncIterator[PlanItem]:
        # Reuse is by repetition (same id, tool, input, deps), never by reference to an old id, so every
        # plan is self-contained and validated as such.
        form = self._form()
        kept = kept_steps(replan) if replan is not None and form == "terse" else []
        messages = self._messages(task, replan)
        spend = Spend()
        convo = messages
        round_no, resends = 0, 0
        while True:
            steps: list[PlanStep] = list(kept)
            raw_parts: list[str] = []
            replied = False
            yield PlanCallStarted(spend + _abandoned(convo, "", "the stream was abandoned before it finished"))
            for step in kept:
                yield StepEmitted(step)
            try:
                async for item in self._one_round(self._request(task_id, convo, round_no, form), kept, steps,
                                                  raw_parts):
                    if isinstance(item, LLMReply):
                        replied = True
                        spend = spend + Spend(item.usage, (reply_record("planner", convo, item),))
                    else:
                        yield StepEmitted(item, count_tokens("".join(raw_parts)))
                plan = Plan(steps=steps)
                validate_plan(plan, self._schemas, max_steps=self._options.max_steps)
                yield PlanCompleted(plan, spend)
                return
            except PlanningError as exc:
                if not replied:
                    # The stream was abandoned at the first invalid step: count what it cost so far, so
                    # budgets stay exact (the server never sent its usage chunk).
                    partial = "".join(raw_parts)
                    spend = spend + _abandoned(convo, partial, str(exc))
                if round_no == 1:
                    reason = "invalid_plan" if isinstance(exc, PlanValidationError) else "invalid_llm_output"
                    yield PlanFailed(f"the planner's plan was still invalid after one repair round: {exc}",
                                     reason, spend)
                    return
                if steps:
                    yield PlanRestarted(str(exc))
                convo = repair_messages(messages, "".join(raw_parts), str(exc), form)
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

    async def _one_round(self, request: LLMRequest, kept: list[PlanStep], steps: list[PlanStep],
                         raw_parts: list[str]) -> AsyncIterator[PlanStep | LLMReply]:
        """Yields validated steps as they stream, then the final LLMReply. ``steps``/``raw_parts`` are filled in
        place so the caller still has them when a PlanningError interrupts the stream."""
        parser = StreamingPlanParser()
        known: dict[int, PlanStep] = {s.step_id: s for s in kept}

        def accept(new_steps: list[PlanStep]) -> list[PlanStep]:
            fresh = []
            for step in new_steps:
                old = known.get(step.step_id)
                if old is not None and old in kept:
                    if _same_call(old, step):
                        continue  # a kept step written out again: it is already in the plan
                    raise PlanValidationError((PlanProblem(
                        ProblemCode.DUPLICATE_STEP_ID,
                        f"step {step.step_id} is a kept step of the previous plan (its output is reused as "
                        f"${step.step_id}); number new steps from {max(known) + 1}", step.step_id),))
                validate_step(step, known, self._schemas, max_steps=self._options.max_steps)
                known[step.step_id] = step
                steps.append(step)
                fresh.append(step)
            return fresh

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


def _same_call(a: PlanStep, b: PlanStep) -> bool:
    return (a.tool_name, a.tool_input, sorted(a.depends_on)) == (b.tool_name, b.tool_input, sorted(b.depends_on))


def _abandoned(convo: list[dict[str, Any]], partial: str, error: str) -> Spend:
    """What a stream cut or abandoned mid-answer cost: the server never sent its usage chunk, so count it."""
    usage = Usage(llm_calls=1, input_tokens=count_message_tokens(convo), output_tokens=count_tokens(partial))
    return Spend(usage, (reply_record("planner", convo, LLMReply(text=partial), error=error),))
