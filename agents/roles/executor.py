"""The Executor role: runs one plan step — a tool call, or a reasoning step answered by one LLM call.

The LLM is called only for ``tool_name: null`` steps, for one argument-repair round after a
``ToolArgumentError`` (rewriting the call; with ``Strategy.FIGURE_FIT``, reading the figures a calculation needs
out of passages first), and when the reflector asked to retry a tool step with a modification. With
``Strategy.REPAIR_SCOPE`` a rewrite that puts a different value in place of the plan's (another name the tool
knows) fails the step instead (``agents.roles.repair_scope``).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agents.config import ExecutorOptions
from agents.errors import CostBudgetExceeded, InvalidLLMOutputError
from agents.idempotency import Fence, IdempotencyJournal
from agents.llm.base import LLM, LLMError, LLMRequest, Spend
from agents.llm.profile import Strategy, profile_of
from agents.roles.figure_fit import (
    code_figures,
    figures_schema,
    named_passage,
    no_figure_message,
    numeric_refs,
    parse_figures,
    plain_number,
    render_sources,
    stated_figures,
    states_a_number,
)
from agents.roles.cost_meter import metered
from agents.roles.json_call import call_json, reply_record
from agents.roles.messages import StepErrorKind, StepOutcome, StepRequest
from agents.roles.repair_scope import changed_subject
from agents.roles.render import render_inputs
from agents.store.redact import REDACTED
from agents.tools import Tool, ToolDispatcher, ToolRegistry, idempotency_key
from agents.tools.errors import ToolArgumentError, ToolError
from dag.errors import DagError
from dag.refs import compile_value, resolve
from planning.parse import extract_json_object
from prompts import fence_untrusted, load_prompt, prepare_prompts

__all__ = ["Executor"]


def _parse_arguments(text: str) -> dict[str, Any]:
    obj = extract_json_object(text)
    # Models sometimes wrap the arguments: {"arguments": {...}} or {"tool_input": {...}}.
    for key in ("arguments", "tool_input", "args"):
        if set(obj) == {key} and isinstance(obj[key], dict):
            return obj[key]
    return obj


class Executor:
    """Runs steps; many at once on one asyncio loop (the Ray actor has ``max_concurrency``)."""

    def __init__(self, tools: Sequence[Tool], llm: LLM, options: ExecutorOptions, *, name: str = "executor",
                 journal: IdempotencyJournal | None = None, node_id: str = "",
                 clock: Callable[[], float] = time.time) -> None:
        self._tool_options, self._journal = options.tools, journal
        self._documents_path = options.documents_path  # doc_search's user documents, per tool call
        self.use_tools(tools)
        self._llm = llm
        self._profile = profile_of(llm)
        self._prompts = options.prompts
        self._name = name
        self._node_id = node_id
        self._clock = clock

    def warm_up(self) -> None:
        """Load the prompt templates and tokenizer the first call would (``prompts.prepare_prompts``; the same
        tokenizer measures tool outputs, ``agents.tools.output.truncate_output``): the actors call this while the
        model server starts, so no task waits for it."""
        names = ("executor", "executor_figures", "executor_repair")
        prepare_prompts({name: self._profile.prompt(name) for name in names})

    def use_tools(self, tools: Sequence[Tool]) -> None:
        """Run steps with these tools from now on (an MCP server's tool list changed); calls already under
        way finish with the tools they started with."""
        opts = self._tool_options
        self._registry = ToolRegistry(tools)
        self._dispatcher = ToolDispatcher(
            self._registry, max_attempts=opts.max_attempts, backoff_s=opts.backoff_s,
            backoff_max_s=opts.backoff_max_s, max_output_tokens=opts.max_output_tokens, journal=self._journal,
            documents_path=self._documents_path)

    async def run(self, req: StepRequest, inputs: Mapping[int, Any]) -> StepOutcome:
        started = self._clock()
        acc = _Accumulator(metered(self._llm, req.cost))  # each model call of the step under the money cap
        try:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for runs _run as a task of its own, and a step
            # cancelled (plan restart) just as that task fails left its exception never retrieved — asyncio
            # logged a spurious error for it (found by benchmarks/fuzz).
            async with asyncio.timeout(req.timeout_s):
                output, args, attempts, from_journal = await self._run(req, inputs, acc)
        except TimeoutError:
            if acc.unrepaired is not None:
                # The tool answered at once; the time went waiting for the model's repair (a shared model busy
                # with a long plan). The tool's own error tells the planner what to change; "timeout" would not.
                return self._failed(req, started, acc, "argument", (
                    f"{acc.unrepaired} (not repaired: the model had not answered the repair when "
                    f"step_timeout_s={req.timeout_s:g}s ran out)"))
            return self._failed(req, started, acc, "timeout",
                                f"step {req.step.step_id} did not finish within step_timeout_s={req.timeout_s:g}s")
        except _StepFailure as exc:
            return self._failed(req, started, acc, exc.kind, exc.message)
        except CostBudgetExceeded as exc:  # not a failure of the step: the engine stops the task
            return self._failed(req, started, acc, "max_cost_usd", str(exc))
        return StepOutcome(step_id=req.step.step_id, attempt=req.attempt, ok=True, started_at=started,
                           finished_at=self._clock(), output=output, spend=acc.spend,
                           executor=self._name, node_id=self._node_id, tool_attempts=attempts,
                           from_journal=from_journal, arguments=args, output_inline=True)

    def _failed(self, req: StepRequest, started: float, acc: _Accumulator, kind: StepErrorKind,
                message: str) -> StepOutcome:
        return StepOutcome(step_id=req.step.step_id, attempt=req.attempt, ok=False, started_at=started,
                           finished_at=self._clock(), error_kind=kind, error=message, spend=acc.spend,
                           executor=self._name, node_id=self._node_id)

    async def _run(self, req: StepRequest, inputs: Mapping[int, Any],
                   acc: _Accumulator) -> tuple[Any, dict[str, Any] | None, int, bool]:
        step = req.step
        if step.tool_name is None:
            return await self._reason(req, inputs, acc), None, 0, False
        try:
            args = resolve(compile_value(step.tool_input), inputs)
        except DagError as exc:
            raise _StepFailure("dependency", f"step {step.step_id}: {exc}") from exc
        self._refuse_redacted_secrets(step.step_id, step.tool_name, args)
        if req.confirmed and req.modification:
            raise _StepFailure("permission", (
                f"step {step.step_id}: a human approved this {step.tool_name!r} call as planned; the reviewer's change "
                f"({req.modification!r}) is not applied to an approved call — replan with the exact call"))
        if req.modification:
            args = await self._repair_arguments(req, args, f"The reviewer asked to change this call: "
                                                            f"{req.modification}", acc)
        for repair_round in range(2):
            try:
                # Keyed by the resolved call, not the attempt: a retried or resumed write applies once.
                key = idempotency_key(req.task_id, step.step_id, step.tool_name, args)
                result = await self._dispatcher.call(step.tool_name, args, idempotency_key=key,
                                                     timeout_s=req.timeout_s, confirmed=req.confirmed,
                                                     fence=self._fence(req))
                return result.output, args, result.attempts, result.from_journal
            except ToolArgumentError as exc:
                if req.confirmed:
                    # The human approved exactly these arguments: a model does not rewrite them afterwards.
                    raise _StepFailure("argument", (
                        f"{exc} (a human approved this call with these arguments, so they are not repaired by the "
                        "model; replan with valid arguments)")) from exc
                if repair_round == 1:
                    raise _StepFailure("argument", f"{exc} (still invalid after one repair round)") from exc
                is_read = self._registry.get(step.tool_name).spec.permission == "read"
                if exc.fix and is_read:
                    # The tool named the right value: a read retried with it costs no model call and no replan.
                    args = {**args, **exc.fix}
                    continue
                acc.unrepaired = str(exc)
                fitting = is_read and self._profile.uses(Strategy.FIGURE_FIT)
                fitted = await self._fit_numbers(req, inputs, acc) if fitting else None
                if fitted is not None:
                    # The earlier outputs (passages) went where the tool wants numbers: each one's figure about what
                    # its step looked up is the number the plan meant (figure_fit: code first, then one model call).
                    args = resolve(compile_value(step.tool_input), fitted)
                    acc.unrepaired = None
                    continue
                repaired = await self._repair_arguments(req, args, str(exc), acc)
                acc.unrepaired = None
                scoped = self._profile.uses(Strategy.REPAIR_SCOPE)
                if scoped and (swap := changed_subject(args, repaired, req.step.description)) is not None:
                    raise _StepFailure("argument", (
                        f"{exc} (the argument repair put {swap[1]!r} where the plan had {swap[0]!r}: a different "
                        "value, not another spelling of it, so that call was not made)")) from exc
                args = repaired
            except ToolError as exc:
                raise _StepFailure(_kind_of(exc), str(exc)) from exc
        raise AssertionError("unreachable")

    def _fence(self, req: StepRequest) -> Fence | None:
        if req.generation <= 0:
            return None
        return Fence(req.generation, req.dispatch, f"{self._name}:{uuid.uuid4().hex[:12]}")

    def _refuse_redacted_secrets(self, step_id: int, tool_name: str, args: Any) -> None:
        """A resumed step whose secret argument was redacted from the checkpoint (secrets are never stored)
        must not call the tool with the placeholder."""
        tool = self._registry.get(tool_name) if tool_name in self._registry else None
        if tool is None or not isinstance(args, dict):
            return
        lost = [p for p in tool.spec.secret_params if isinstance(args.get(p), str) and REDACTED in args[p]]
        if lost:
            raise _StepFailure("permanent", (
                f"step {step_id}: the secret argument(s) {', '.join(lost)} of tool {tool_name!r} were redacted from "
                "the checkpoint (secrets are never stored), so this step cannot run after a resume; submit the task "
                "again with the secret"))

    async def _reason(self, req: StepRequest, inputs: Mapping[int, Any], acc: _Accumulator) -> str:
        step_text = req.step.description + (f"\nReviewer's instruction: {req.modification}" if req.modification else "")
        template = load_prompt("executor", self._profile.prompt("executor"))
        # A template that opens like the other roles' prompts takes the tool list (its shared prefix).
        extra = {"tools": self._registry.catalog_text()} if "tools" in template.variables else {}
        prompt = template.render(
            budget_tokens=self._prompts.context_token_budget, task=req.task, step=step_text,
            inputs=render_inputs({k: inputs[k] for k in req.step.depends_on if k in inputs}), **extra)
        request = LLMRequest(role="executor", messages=prompt.messages,
                             metadata={"task_id": req.task_id, "step_id": str(req.step.step_id)})
        try:
            reply = await acc.llm.complete(request)
        except LLMError as exc:
            raise _StepFailure("llm", f"the reasoning step's model call failed: {exc}") from exc
        acc.add(Spend(reply.usage, (reply_record("executor", prompt.messages, reply),)))
        return reply.text.strip()

    async def _fit_numbers(self, req: StepRequest, inputs: Mapping[int, Any],
                           acc: _Accumulator) -> dict[int, Any] | None:
        """``inputs`` with each passage that feeds a number slot replaced by its figure, or None when there is
        nothing to fit or an output goes elsewhere (the generic repair's case)."""
        tool = self._registry.get(req.step.tool_name or "")
        slots = numeric_refs(tool.spec.parameters, tool.spec.returns, req.step.tool_input)
        deps = [d for d in req.step.depends_on if d in inputs and not isinstance(inputs[d], (int, float))]
        if not deps or not set(deps) <= slots:
            return None
        sources, about = self._through_names(req, inputs, deps)
        numeric = "numeric" in self._prompts.checks
        # Which figure a passage means is a guess about its wording: code makes it only with the numeric set;
        # otherwise the model reads each figure, choosing among the numbers its passage states.
        figures = code_figures(deps, sources, about) if numeric else {d: None for d in deps}
        unread = [d for d, number in figures.items() if number is None]
        bare = [d for d in unread if not states_a_number(sources[d])]
        if bare:
            # No number at all where the tool needs one: a repaired call could only invent it. The step fails now
            # and says so (its error reaches the reviewer and replanner); sound for any task.
            raise _StepFailure("argument", no_figure_message(req.step.step_id, tool.name, bare[0],
                                                             dep_is_a_name=numeric and bare[0] in req.read_through))
        if unread:
            figures.update(await self._read_figures(req, sources, unread, about, acc))
        fitted = dict(inputs)
        for dep, number in figures.items():
            assert number is not None
            fitted[dep] = plain_number(number)
        return fitted

    @staticmethod
    def _through_names(req: StepRequest, inputs: Mapping[int, Any],
                       deps: list[int]) -> tuple[dict[int, Any], dict[int, str]]:
        """Where to read each dependency's figure, and what it is about. A reasoning step that answered a name
        with no figure ("Rome") is read through: its figure is the one the passage of that name states, in the
        search the reasoning step read (``StepRequest.read_through``), about what that search looked up."""
        sources, about = dict(inputs), dict(req.inputs_about)
        for dep in deps:
            search = req.read_through.get(dep)
            if search is None or search not in inputs or states_a_number(inputs[dep]):
                continue
            passage = named_passage(inputs[search], inputs[dep])
            if passage is not None:
                sources[dep], about[dep] = passage, req.inputs_about.get(search, "")
        return sources, about

    async def _read_figures(self, req: StepRequest, inputs: Mapping[int, Any], deps: list[int],
                            about: Mapping[int, str], acc: _Accumulator) -> dict[int, float]:
        choices = {dep: stated_figures(inputs[dep]) for dep in deps}
        template = load_prompt("executor_figures", self._profile.prompt("executor_figures"))
        prompt = template.render(task=req.task, step=req.step.description,
                                 sources=render_sources(deps, inputs, about))
        try:
            call = await call_json(acc.llm, role="executor", messages=prompt.messages,
                                   parse=lambda text: parse_figures(text, deps, choices),
                                   json_schema=figures_schema(deps, choices),
                                   max_tokens=16 + 16 * len(deps),
                                   metadata={"task_id": req.task_id, "step_id": str(req.step.step_id)})
        except InvalidLLMOutputError as exc:
            acc.add(exc.spend or Spend())
            raise _StepFailure("argument", f"reading the figures out of steps {deps}'s passages failed: "
                                           f"{exc.error}") from exc
        except LLMError as exc:
            raise _StepFailure("llm", f"the figure-reading model call failed: {exc}") from exc
        acc.add(call.spend)
        return call.value

    async def _repair_arguments(self, req: StepRequest, args: dict[str, Any], error: str,
                                acc: _Accumulator) -> dict[str, Any]:
        tool = self._registry.get(req.step.tool_name or "")
        template = load_prompt("executor_repair", self._profile.prompt("executor_repair"))
        arguments = json.dumps(args, ensure_ascii=False, default=str)
        if req.step.depends_on:  # filled in from earlier steps' output: untrusted data, fenced as such
            arguments = fence_untrusted(arguments, "arguments filled in from earlier steps' output")
        values = {"step": req.step.description, "tool_name": tool.name,
                  "tool_schema": json.dumps(tool.spec.parameters, ensure_ascii=False),
                  "arguments": arguments, "error": error}
        # Older pinned versions take fewer variables; rendering stays strict about the ones they declare.
        prompt = template.render(**{k: v for k, v in values.items() if k in template.variables})
        try:
            call = await call_json(acc.llm, role="executor", messages=prompt.messages, parse=_parse_arguments,
                                   json_schema=tool.spec.parameters,
                                   metadata={"task_id": req.task_id, "step_id": str(req.step.step_id)})
        except InvalidLLMOutputError as exc:
            acc.add(exc.spend or Spend())
            raise _StepFailure("argument", f"argument repair failed: {exc.error}") from exc
        except LLMError as exc:
            raise _StepFailure("llm", f"the argument-repair model call failed: {exc}") from exc
        acc.add(call.spend)
        return call.value


class _StepFailure(Exception):
    def __init__(self, kind: StepErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class _Accumulator:
    """What one step's LLM calls cost so far (a failure still reports what it spent), and the model they go
    to."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.spend = Spend()
        self.unrepaired: str | None = None
        """The tool's argument error while a model call repairs it (what the step failed of, if time runs out)."""

    def add(self, spend: Spend) -> None:
        self.spend = self.spend + spend


def _kind_of(exc: ToolError) -> StepErrorKind:
    kind = getattr(exc, "kind", "permanent")
    return kind if kind in ("argument", "transient", "permanent", "timeout", "unknown_tool", "permission") \
        else "permanent"
