"""The Reflector role: scores an executed plan and proposes accept / retry_step / replan / escalate.

It only proposes: ``planning.policy.decide`` has the last word.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from agents.checks.facts import Fact, Severity, render_facts, text_of
from agents.checks.review import evidence_of, result_facts
from agents.checks.sound import final_figure
from agents.config import PromptOptions
from agents.config.prices import CostBudget
from agents.errors import InvalidLLMOutputError
from agents.llm.base import LLM, Spend
from agents.llm.profile import Strategy, profile_of
from agents.roles.answer_feed import AnswerFeed, AnswerOut
from agents.roles.cost_meter import metered
from agents.roles.json_call import call_json
from agents.roles.messages import RoleResult, SecondLook, StepView
from agents.roles.render import render_checks, step_calls
from agents.roles.typed_review import typed_call, typed_review
from agents.outputs import OutputSpec
from agents.tools.registry import catalog_params
from dag.errors import DagError
from dag.refs import Ref, Template, compile_value, fill_text, find_reference, resolve
from planning.grammar import TERSE_CONFIRMING_GRAMMAR, TERSE_REFLECTION_GRAMMAR
from planning.models import Plan, Reflection
from planning.parse import parse_reflection, reflection_schema
from planning.written_answer import figure_pattern, parse_written_answer, written_answer_schema
from prompts import PromptTemplate, load_prompt, prepare_prompts
from prompts.fence import fence_untrusted
from prompts.compact import render_results_compact

__all__ = ["Reflector", "drafted_answer", "filled_answer", "filled_text", "render_draft"]

_DRAFT_VALUE_CHARS = 120
"""The longest text a draft is filled with: a name or a short phrase. A passage is not an answer (the reviewer
writes one from it instead)."""

_ANSWER_TOKENS = 200
"""A sentence or two: the answer prompt's reply is bounded so a model that will not end it cannot run on."""


class Reflector:
    def __init__(self, llm: LLM, prompts: PromptOptions, tools_catalog: str = "") -> None:
        self._llm = llm
        self._profile = profile_of(llm)
        self._prompts = prompts
        self._tools = tools_catalog
        """Shown only by a template that opens like the other roles' prompts (the shared prefix); otherwise read
        for each tool's parameter order, to write a step's arguments by position as the planner does."""

    @property
    def checks(self) -> tuple[str, ...]:
        """The built-in check sets whose facts its prompt shows: ``RuntimeConfig.builtin_checks``, the sound set's
        notes only for a model whose profile uses ``Strategy.REVIEW_NOTES``."""
        if self._profile.uses(Strategy.REVIEW_NOTES):
            return tuple(self._prompts.checks)
        return tuple(c for c in self._prompts.checks if c != "sound")

    def warm_up(self) -> None:
        """Load the prompt template and tokenizer the first call would (``prompts.prepare_prompts``): the actors
        call this while the model server starts, so no task waits for it."""
        answered = self._profile.uses(Strategy.ANSWER_AGAIN)
        prepare_prompts({"reflector": self._profile.prompt("reflector"),
                         **({"answer": self._profile.prompt("answer")} if answered else {})})

    def use_tools(self, tools_catalog: str) -> None:
        self._tools = tools_catalog

    async def reflect(self, task_id: str, task: str, plan: Plan, results: Sequence[StepView],
                      again: SecondLook | None = None,
                      cost: CostBudget | None = None, output: OutputSpec | None = None,
                      answer: AnswerOut | None = None) -> RoleResult[Reflection]:
        """Review the results and propose what happens next. ``again``: this is a second look at results this
        reviewer already reviewed (``planning.policy.ReviewAgain``); why is shown among the facts code checked (a
        contradiction when code found the answer wrong; a note otherwise). With ``Strategy.ANSWER_AGAIN`` only the answer is written again when the previous one left out
        the figure the plan computed last (``answer_again``). ``cost``: the task's money budget, which each
        model call is checked against (``agents.roles.cost_meter``). ``output``: the task's output type, which an
        accept's answer is written as (JSON under its schema) and validated against (``agents.roles.typed_review``).
        ``answer``: where the answer goes while the review streams, once the reply has accepted
        (``agents.roles.answer_feed``); the answer-only second look does not stream."""
        llm = metered(self._llm, cost)
        if again is not None and again.reason == "unstated_figure" and self._profile.uses(Strategy.ANSWER_AGAIN) \
                and output is None:  # its narrow call writes a sentence, not the output's JSON
            return await self.answer_again(task_id, task, plan, results, again, llm)
        return await self._review(task_id, task, plan, results, again, llm, output, answer)

    async def _review(self, task_id: str, task: str, plan: Plan, results: Sequence[StepView],
                      again: SecondLook | None, llm: LLM, output: OutputSpec | None = None,
                      answer: AnswerOut | None = None) -> RoleResult[Reflection]:
        template = load_prompt("reflector", self._profile.prompt("reflector"))
        form = self._profile.reply_form("reflector")
        refused, refused_fault = ("", True) if again is None else (again.feedback, again.answer_fault)
        note = "" if not refused else (
            f"Your previous answer to these results was refused: {refused} Write the answer again from the results."
            if refused_fault else f"Your previous answer to these results was not accepted: {refused}")
        # A second look was told why the previous answer did not count: it writes one, it confirms no draft.
        draft = None if again is not None else self._shown_draft(template, plan, results, task, output)
        prompt = template.render(budget_tokens=self._prompts.context_token_budget, task=task,
                                 **self._variables(template, task, plan, results, note, refused_fault, draft))
        schema = reflection_schema() if form == "json" else None  # a copy, only where it is sent
        messages, schema, parse, llm = typed_review(prompt.messages, schema, output, llm)
        if draft is not None:  # an accept may confirm the plan's answer without writing one
            parse = partial(parse_reflection, answer_given=True)
        feed = None if answer is None else AnswerFeed(answer, lambda text: filled_text(text, results, task))
        grammar = TERSE_REFLECTION_GRAMMAR if draft is None else TERSE_CONFIRMING_GRAMMAR
        call = await typed_call(call_json(llm, role="reflector", messages=messages, parse=parse,
                                          json_schema=schema, metadata={"task_id": task_id}, form=form,
                                          grammar=grammar, on_text=feed and feed.feed))
        review = call.value
        if draft is not None and review.action == "accept" and not review.answer:
            review = review.model_copy(update={"answer": draft})
        return RoleResult(filled_answer(review, results, task), call.spend)

    @staticmethod
    def _shown_draft(template: PromptTemplate, plan: Plan, results: Sequence[StepView], task: str,
                     output: OutputSpec | None) -> str | None:
        """The plan's answer draft, filled, where this review shows it: a template that asks for it, an answer
        that is text (a typed output is written as its JSON), and a draft every reference of which filled."""
        if output is not None or "drafted_answer" not in template.variables:
            return None
        return drafted_answer(plan, results, task)

    async def answer_again(self, task_id: str, task: str, plan: Plan, results: Sequence[StepView],
                           again: SecondLook, llm: LLM | None = None) -> RoleResult[Reflection]:
        """The second look after an accept whose answer left out the plan's final figure, as one narrow call: the
        ``answer`` prompt shows the task, the steps and what code checked, and asks only for the answer, which the
        server holds to writing that figure (``planning.written_answer.figure_pattern``). The previous review's
        verdict and scores stand (code found nothing wrong with the results or the answer); the new answer is
        checked like any other before it counts. Where the figure has no pattern (zero) or the model cannot
        write such an answer, the whole review is asked again instead."""
        llm = llm or self._llm
        evidence = evidence_of(results, plan)
        found = final_figure(evidence)
        pattern = figure_pattern(found[1].value) if found is not None else None
        if pattern is None:
            return await self._review(task_id, task, plan, results, again, llm)
        template = load_prompt("answer", self._profile.prompt("answer"))
        prompt = template.render(
            budget_tokens=self._prompts.context_token_budget, task=task, tools=self._tools,
            steps=render_results_compact(results, calls=step_calls(plan, catalog_params(self._tools))),
            checks=render_facts(result_facts(task, evidence, self.checks)))
        try:
            call = await call_json(llm, role="reflector", messages=prompt.messages,
                                   parse=parse_written_answer,
                                   json_schema=written_answer_schema(pattern), max_tokens=_ANSWER_TOKENS,
                                   metadata={"task_id": task_id, "purpose": "answer"})
        except InvalidLLMOutputError as exc:
            review = await self._review(task_id, task, plan, results, again, llm)
            return RoleResult(review.value, (exc.spend or Spend()) + review.spend)
        reflection = again.previous.model_copy(update={"answer": call.value})
        return RoleResult(filled_answer(reflection, results, task), call.spend)

    def _variables(self, template: PromptTemplate, task: str, plan: Plan, results: Sequence[StepView],
                   refused_note: str = "", refused_fault: bool = True,
                   draft: str | None = None) -> dict[str, str]:
        """What the template declares, besides the task: ``steps``, one line a step with its call and its result,
        all fenced; the facts code checked, as ``checks`` or as ``code_checks`` (left out when code found nothing);
        the tool list for a template that opens like the other roles' prompts; the plan's answer ``draft``,
        filled, for a template that shows it (``drafted_answer``)."""
        wants = set(template.variables)
        out: dict[str, str] = {}
        if "tools" in wants:
            out["tools"] = self._tools
        if wants & {"checks", "code_checks"}:  # facts computed by code, which a model misses (agents.checks)
            facts = result_facts(task, evidence_of(results, plan), self.checks)
            if refused_note:
                facts = (*facts, Fact(Severity.CONTRADICTION if refused_fault else Severity.NOTE, refused_note))
            out.update({"checks": render_facts(facts)} if "checks" in wants else {"code_checks": render_checks(facts)})
        if "steps" in wants:
            out["steps"] = render_results_compact(results, calls=step_calls(plan, catalog_params(self._tools)))
        if "drafted_answer" in wants:
            out["drafted_answer"] = render_draft(draft)
        return out


def filled_answer(reflection: Reflection, results: Sequence[StepView], task: str = "") -> Reflection:
    """The reflection with the step references its answer makes (``{$step_N_result}``, the plan's syntax) filled
    with those steps' outputs, so a figure reaches the user exactly as the tool returned it instead of copied
    digit by digit. The reviewer chose which step it cites; code only writes the value in. A reference to a
    step that did not complete stays written, and ``agents.checks.sound`` refuses the answer. Nothing is filled
    when the task or a step's output itself writes such a reference (the answer may be quoting it).

        >>> from planning.models import Scores
        >>> review = Reflection(scores=Scores(completeness=5, correctness=5, format=5), overall_pass=True,
        ...                     action="accept", answer="Rome has {$step_3_result} more people.")
        >>> filled_answer(review, [StepView(3, "difference", "calculator", "completed", 1200)]).answer
        'Rome has 1200 more people.'
    """
    answer = reflection.answer
    if not answer:
        return reflection
    filled = filled_text(answer, results, task)
    return reflection if filled == answer else reflection.model_copy(update={"answer": filled})


def filled_text(answer: str, results: Sequence[StepView], task: str = "") -> str:
    """``answer`` with its step references filled (``filled_answer``), also for the answer while it streams."""
    if find_reference(answer) is None:
        return answer
    done = {r.step_id: r.output for r in results if r.status == "completed"}
    if any(find_reference(text) for text in (task, *map(text_of, done.values()))):
        return answer
    return fill_text(answer, done)


def drafted_answer(plan: Plan, results: Sequence[StepView], task: str = "") -> str | None:
    """The planner's answer draft (``Plan.answer``) filled with the outputs it names, or None when there is
    none or it cannot stand as an answer: a step it names did not complete, or gave something other than a
    number, a truth value or a short one-line text (a passage or a record is the reviewer's to read and word).

        >>> plan = Plan(steps=[], answer="Rome has {$step_3_result} more people.")
        >>> drafted_answer(plan, [StepView(3, "difference", "calculator", "completed", 1200)])
        'Rome has 1200 more people.'
    """
    if not plan.answer:
        return None
    done = {r.step_id: r.output for r in results if r.status == "completed"}
    compiled = compile_value(plan.answer)
    named = [compiled] if isinstance(compiled, Ref) else compiled.refs if isinstance(compiled, Template) else []
    try:
        if not named or not all(_plain(resolve(ref, done)) for ref in named):
            return None
    except DagError:  # a step it names did not complete, or has no such field
        return None
    filled = filled_text(plan.answer, results, task)
    return None if find_reference(filled) is not None else filled


def _plain(value: Any) -> bool:
    if isinstance(value, str):
        return 0 < len(value.strip()) <= _DRAFT_VALUE_CHARS and "\n" not in value.strip()
    return isinstance(value, int | float) and value == value  # bool is an int; NaN is not an answer


def render_draft(draft: str | None) -> str:
    """The draft as the reviewer's prompt shows it (fenced: it holds tool outputs), or nothing without one."""
    if draft is None:
        return ""
    return "The plan's answer, filled in from the results:\n" + fence_untrusted(draft, "the plan's answer")
