"""The Planner role: turns a task into a validated dependency DAG, streaming each step as soon as it is known."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Mapping
from typing import Any

from agents.config import PlannerOptions
from agents.config.prices import CostBudget
from agents.errors import CostBudgetExceeded
from agents.llm.base import LLM, LLMError, LLMReply, LLMRequest, LLMStreamTruncated, Spend
from agents.llm.profile import Strategy, profile_of
from agents.roles.cost_meter import metered
from agents.roles.json_call import abandoned_spend, close_stream, reply_record
from agents.roles.messages import (
    PlanCallStarted,
    PlanCompleted,
    PlanFailed,
    PlanItem,
    PlanRestarted,
    ReplanContext,
    StepEmitted,
)
from agents.roles.plan_repair import BlindCheck, repair_round
from agents.roles.replan import kept_steps, next_step_id, replan_context
from agents.tools.registry import catalog_entries, catalog_permissions, catalog_without_examples
from planning.delta import call_key, same_call
from planning.errors import PlanningError, PlanValidationError
from planning.grammar import terse_plan_grammar
from planning.loops import RepeatedCall, repeated_call
from planning.models import Plan, PlanStep
from planning.parse import plan_schema
from planning.rejected import RejectedCall, rejected_problem, rejected_repeat
from planning.stream import StreamingPlanParser
from planning.validate import PlanProblem, ProblemCode, answer_draft, validate_plan, validate_step
from prompts import count_tokens, load_prompt, prepare_prompts
from prompts.registry import PromptTemplate, ReplyForm

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
    first, without a model token, then the model's new ones. A reply that writes a read call a third time is a
    looping model (``planning.loops``): the stream is abandoned there and the plan completes with the steps
    before it (``PlanCompleted.cut`` says so).

    Example:
        >>> planner = Planner(llm, {"lookup": {...}}, catalog, RuntimeConfig().planner_options())  # doctest: +SKIP
        >>> [item async for item in planner.plan("t1", "Population of Rome?")][-1].plan  # doctest: +SKIP
        Plan(steps=[PlanStep(step_id=1, tool_name='lookup', ...)])
    """

    def __init__(self, llm: LLM, tool_schemas: Mapping[str, dict[str, Any]], tools_catalog: str,
                 options: PlannerOptions) -> None:
        self._llm = llm
        self._profile = profile_of(llm)
        self._schemas = dict(tool_schemas)
        self._catalog = tools_catalog
        self._reads = _read_tools(tools_catalog)
        self._options = options
        self._grammar: str | None = None

    def warm_up(self) -> None:
        """Load the prompt template and tokenizer the first call would (``prompts.prepare_prompts``): the actors
        call this while the model server starts, so no task waits for it."""
        prepare_prompts({"planner": self._profile.prompt("planner")})

    def use_tools(self, tool_schemas: Mapping[str, dict[str, Any]], tools_catalog: str) -> None:
        """Plan with these tools from the next ``plan`` call on (an MCP server's tool list changed); a plan
        being written keeps the tools it started with."""
        self._schemas, self._catalog, self._grammar = dict(tool_schemas), tools_catalog, None
        self._reads = _read_tools(tools_catalog)

    def _form(self) -> ReplyForm:
        return self._profile.reply_form("planner")

    def _template(self) -> PromptTemplate:
        return load_prompt("planner", self._profile.prompt("planner"))

    def _messages(self, task: str, replan: ReplanContext | None, history: str = "",
                  without_examples: Collection[str] = ()) -> list[dict[str, Any]]:
        """The planner's prompt; ``without_examples``: tools whose examples the catalog leaves out."""
        template = self._template()
        catalog = catalog_without_examples(self._catalog, without_examples) if without_examples else self._catalog
        context = "" if replan is None else replan_context(replan, terse=self._form() == "terse")
        # A session's earlier turns: their own trimmable context item.
        prompt = template.render(
            budget_tokens=self._options.prompts.context_token_budget, task=task, tools=catalog,
            max_steps=str(self._options.max_steps), replan_context=context, history=history)
        return prompt.messages

    def _request(self, task_id: str, convo: list[dict[str, Any]], round_no: int, form: ReplyForm,
                 schemas: dict[str, dict[str, Any]]) -> LLMRequest:
        metadata = {"task_id": task_id, "round": str(round_no)}
        if form == "json":
            return LLMRequest(role="planner", messages=convo, response_format="json",
                              json_schema=plan_schema(schemas),
                              stream=self._options.stream_plan, metadata=metadata)
        if schemas is not self._schemas:  # a plan begun before use_tools: its own grammar, not cached
            grammar = terse_plan_grammar(schemas)
        else:
            grammar = self._grammar = self._grammar or terse_plan_grammar(schemas)
        return LLMRequest(role="planner", messages=convo, response_format="text", grammar=grammar,
                          stream=self._options.stream_plan, metadata=metadata)

    async def plan(self, task_id: str, task: str, replan: ReplanContext | None = None,
                   history: str = "", cost: CostBudget | None = None) -> AsyncIterator[PlanItem]:
        """``cost``: the task's money budget, which each model call is checked against (a refused call ends
        the plan with ``PlanFailed(reason="max_cost_usd")``)."""
        llm = metered(self._llm, cost)
        form = self._form()
        kept = kept_steps(replan) if replan is not None and form == "terse" else []
        first_new_id = next_step_id(replan) if replan is not None else 1
        schemas, reads = self._schemas, self._reads  # with the catalog (no await between): use_tools may swap them
        spend, convo, offered = Spend(), self._messages(task, replan, history), schemas
        round_no, resends = 0, 0
        while True:
            steps: list[PlanStep] = []
            raw_parts: list[str] = []
            counted = False  # this round's cost is in ``spend`` already (its reply's usage, or its abandoned text)
            unfinished = abandoned_spend("planner", convo, "", "the stream was abandoned before it finished")
            yield PlanCallStarted(spend + unfinished)
            # a blind call is asked about in the first round only: the repaired plan's word stands
            asked = f"{history}\n{task}" if not round_no and self._profile.uses(Strategy.BLIND_CALLS) else None
            round_ = self._round(kept, first_new_id, steps, reads, replan, asked)
            try:
                request = self._request(task_id, convo, round_no, form, offered)
                async for item in self._one_round(llm, request, round_, raw_parts, schemas):
                    if isinstance(item, LLMReply):
                        counted = True
                        spend = spend + Spend(item.usage, (reply_record("planner", convo, item),))
                    else:
                        yield item
                if round_.cut is not None and not counted:
                    # Abandoned at the loop: the server never sent its usage chunk, so count what it wrote.
                    spend = spend + _abandoned(convo, raw_parts, f"abandoned: {round_.cut.describe()}")
                    counted = True
                draft = None if round_.cut is not None else answer_draft(round_.answer, steps)
                plan = Plan(steps=steps, answer=draft)
                validate_plan(plan, schemas, max_steps=self._options.max_steps)
                yield PlanCompleted(plan, spend, round_.cut)
                return
            except PlanningError as exc:
                if not counted:
                    # The stream was abandoned at the first invalid step: count what it cost so far, so
                    # budgets stay exact (the server never sent its usage chunk).
                    spend = spend + _abandoned(convo, raw_parts, str(exc))
                if round_no == 1:
                    reason = "invalid_plan" if isinstance(exc, PlanValidationError) else "invalid_llm_output"
                    yield PlanFailed(f"the planner's plan was still invalid after one repair round: {exc}",
                                     reason, spend)
                    return
                if steps:
                    yield PlanRestarted(str(exc))
                convo, offered, spend = await self._repair(task_id, task, replan, history, "".join(raw_parts), exc,
                                                           round_, schemas, spend)
                round_no += 1
            except LLMStreamTruncated as exc:
                if resends >= _STREAM_RESENDS:
                    yield PlanFailed(f"the planner's model call failed: {exc}", "llm_unavailable", spend)
                    return
                resends += 1
                # The cut stream cost tokens the server never reported (no usage chunk): count them.
                spend = spend + _abandoned(convo, raw_parts, str(exc))
                if steps:
                    yield PlanRestarted(f"the plan stream was cut, sending the request again: {exc}")
            except LLMError as exc:
                yield PlanFailed(f"the planner's model call failed: {exc}", "llm_unavailable", spend)
                return
            except CostBudgetExceeded as exc:  # the calls before it are in ``spend`` already
                yield PlanFailed(str(exc), "max_cost_usd", spend)
                return

    def _round(self, kept: list[PlanStep], first_new_id: int, steps: list[PlanStep], reads: frozenset[str],
               replan: ReplanContext | None, asked: str | None) -> _Round:
        """One reply's bookkeeping; ``asked`` (the task and its history): also ask about blind calls."""
        rejected = replan.rejected if replan is not None and self._profile.uses(Strategy.REJECTED_CALLS) else ()
        round_ = _Round(kept, first_new_id, steps, reads, rejected, loops=self._profile.uses(Strategy.LOOP_CUT))
        if asked is not None:
            round_.blind = BlindCheck(asked, catalog_entries(self._catalog))
        return round_

    async def _repair(self, task_id: str, task: str, replan: ReplanContext | None, history: str, raw: str,
                      exc: PlanningError, round_: _Round, schemas: dict[str, dict[str, Any]], spent: Spend
                      ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], Spend]:
        """The repair round's conversation and tools, and what was spent so far; after a copied example the
        catalog shows no example of that tool (``agents.roles.plan_repair``)."""
        blind = round_.blind
        copied = blind.copied_from if blind is not None else set()
        messages = self._messages(task, replan, history, without_examples=copied)
        return (*repair_round(messages, raw, exc, self._form(), round_, replan, schemas), spent)

    async def _one_round(self, llm: LLM, request: LLMRequest, round_: _Round, raw_parts: list[str],
                         schemas: dict[str, dict[str, Any]]) -> AsyncIterator[StepEmitted | LLMReply]:
        """Yields validated steps as they stream, then the final LLMReply — none when the reply loops: the stream
        ends at the looping step (``round_.cut``), unfinished. ``round_.steps``/``raw_parts`` are filled in place
        so the caller still has them when a PlanningError interrupts the stream."""
        parser = StreamingPlanParser(param_order(schemas))
        written = 0  # output tokens so far, counted piece by piece (recounting the whole text per step is O(n²))

        def accept(new_steps: list[PlanStep]) -> list[StepEmitted]:
            out = []
            for step in new_steps:
                if round_.loops(step):
                    break  # the looping copy and whatever the model wrote after it are left out of the plan
                round_.refuse_rejected(step)
                if round_.blind is not None:
                    round_.blind.refuse(step)
                for fresh in round_.take(step):
                    validate_step(fresh, round_.known, schemas, max_steps=self._options.max_steps,
                                  waited_for=round_.waited)
                    round_.add(fresh)
                    out.append(StepEmitted(fresh, written))
            return out

        def finish() -> list[StepEmitted]:
            closed = [*accept(parser.close()), *(StepEmitted(s, written) for s in round_.close())]
            round_.answer = parser.answer  # the answer line may be the reply's last, closed only now
            return closed

        if self._options.stream_plan:
            pieces = llm.stream(request)
            try:
                async for piece in pieces:
                    if isinstance(piece, LLMReply):
                        raw_parts[:] = [piece.text]
                        for item in finish():
                            yield item
                        yield piece
                        return
                    raw_parts.append(piece)
                    written += count_tokens(piece)
                    for item in accept(parser.feed(piece)):
                        yield item
                    if round_.cut is not None:
                        return
            finally:
                # Closed now, not when the garbage collector gets to it: the embedded model serves one request at
                # a time, and the reasoning steps already emitted wait behind an unread stream.
                await close_stream(pieces)
        else:
            reply = await llm.complete(request)
            raw_parts[:] = [reply.text]
            written = reply.usage.output_tokens
            # feed() returns every step that closed in the text: close() alone would find none left
            for item in [*accept(parser.feed(reply.text)), *finish()]:
                yield item
            yield reply


class _Round:
    """The steps of one planner reply, and whether it is a delta over the kept steps.

    A terse replan asks for a delta (new steps numbered from ``first_new_id``); a model that writes a whole
    plan from step 1 instead is taken at its word — a complete plan, where a kept step is reused only when it
    is repeated unchanged (the JSON form's rule). The first step decides; the kept steps are emitted before it
    in a delta (they cost no token and are preloaded, not run)."""

    def __init__(self, kept: list[PlanStep], first_new_id: int, steps: list[PlanStep],
                 reads: frozenset[str] = frozenset(), rejected: tuple[RejectedCall, ...] = (), *,
                 loops: bool = False) -> None:
        self._kept = {s.step_id: s for s in kept}
        self._watch_loops = loops
        """``Strategy.LOOP_CUT``: a read call written a third time cuts the reply there."""
        self._rejected = rejected
        self._wrote = False
        """A model step of this reply writes: what a rejected read call is refused for may change before it."""
        self.refused_tools: set[str] = set()
        """Tools of the rejected calls this reply was refused (``refuse_rejected``)."""
        self._first_new_id = first_new_id
        self._delta: bool | None = None if kept else False
        self._reads = reads
        self._calls: dict[str, list[PlanStep]] = {}
        """The model's steps of each read call so far, by ``call_key``, so a repeat is found in O(1)."""
        self.steps = steps
        self.known: dict[int, PlanStep] = {}
        self.waited: set[int] = set()
        """Ids the known steps depend on, so validating a streamed step is O(1), not O(known)."""
        self.blind: BlindCheck | None = None
        """Asks about calls that ignore the task (``planning.blind_calls``): set on the first round only."""
        self.cut: RepeatedCall | None = None
        """The model step at which this reply was found looping (it and the rest of the reply are dropped)."""
        self.answer: str | None = None
        """The answer's shape the reply wrote after its steps (``Plan.answer``), once the reply has ended."""

    def loops(self, step: PlanStep) -> bool:
        """Whether the model's ``step`` is the looping copy of a read call it made before (``planning.loops``).
        Only the model's own steps count (not the kept ones a delta emits for it), and only reads: equal writes
        are separate side effects a plan may well ask for. Once it has, every later step is past the loop too."""
        if self.cut is not None:
            return True
        if not self._watch_loops or step.tool_name not in self._reads:
            return False
        same = self._calls.setdefault(call_key(step), [])
        self.cut = repeated_call(step, same)
        if self.cut is None:
            same.append(step)
        return self.cut is not None

    def refuse_rejected(self, step: PlanStep) -> None:
        """Raise when the model's ``step`` makes a read call its tool rejected earlier in the task (its
        precondition: ``planning.rejected``), so the repair round asks for another tool or input."""
        if step.tool_name is not None and step.tool_name not in self._reads:
            self._wrote = True
            return
        if self._wrote or not self._rejected:
            return
        call = rejected_repeat(step, self._rejected)
        if call is not None:
            self.refused_tools.add(call.tool_name)
            raise PlanValidationError((rejected_problem(step, call),))

    def add(self, step: PlanStep) -> None:
        self.known[step.step_id] = step
        self.waited.update(step.depends_on)
        self.steps.append(step)

    def take(self, step: PlanStep) -> list[PlanStep]:
        """The steps this model step puts into the plan: the kept ones first when it opens a delta; nothing
        when it repeats a kept step of the delta."""
        if self._delta is None:
            self._delta = step.step_id >= self._first_new_id
            if self._delta:
                return [*self._kept.values(), step]
        if self._delta and step.step_id in self._kept:
            if same_call(self._kept[step.step_id], step):
                return []
            raise PlanValidationError((PlanProblem(
                ProblemCode.DUPLICATE_STEP_ID,
                f"step {step.step_id} is a kept step of the previous plan (its output is reused as "
                f"${step.step_id}); number new steps from {self._first_new_id}", step.step_id),))
        return [step]

    def close(self) -> list[PlanStep]:
        """A reply without a single step keeps the kept steps as the whole plan."""
        if self._delta is None:
            self._delta = True
            for step in self._kept.values():
                self.add(step)
            return list(self._kept.values())
        return []


def param_order(schemas: Mapping[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Each tool's parameters in signature order (terse arguments may be given by position)."""
    return {name: list((schema.get("properties") or {}).keys()) for name, schema in schemas.items()}


def _read_tools(catalog: str) -> frozenset[str]:
    """The tools the catalog marks read (its `` [write]`` / `` [admin]`` flags): the planner holds the catalog
    text, not the tool specs, also after an MCP server's tool list changed."""
    return frozenset(name for name, permission in catalog_permissions(catalog).items() if permission == "read")


def _abandoned(convo: list[dict[str, Any]], raw_parts: list[str], reason: str) -> Spend:
    """What a planner stream the server never sent its usage chunk for cost: the prompt and what it wrote."""
    return abandoned_spend("planner", convo, "".join(raw_parts), reason)
