"""The Router role: decides whether a task needs a plan, a direct answer, a question back, or a refusal."""

from __future__ import annotations

from agents.checks.numeric.referents import named_only, planned_route
from agents.config import RouterOptions
from agents.config.prices import CostBudget
from agents.llm.base import LLM, Spend
from agents.llm.profile import Strategy, profile_of
from agents.roles.cost_meter import metered
from agents.roles.json_call import call_json
from agents.roles.messages import RoleResult
from agents.tools.registry import catalog_summary
from planning.grounded_question import written_in
from planning.models import POINTING_KINDS, RouterDecision
from planning.parse import (
    classified_word_schema,
    parse_classified_word,
    parse_router_decision,
    router_schema,
)
from planning.policy import effective_route
from planning.settled_route import STOPPED_REASON, settled_plan_confidence
from prompts import load_prompt, prepare_prompts

__all__ = ["Router"]


class Router:
    """Plain async role logic; ``agents.cluster.actors`` wraps it in a Ray actor.

    Example:
        >>> router = Router(llm, "calculator: arithmetic", RuntimeConfig().router_options())  # doctest: +SKIP
        >>> (await router.route("t1", "What is 2+2?")).value.route  # doctest: +SKIP
        'direct'
    """

    def __init__(self, llm: LLM, tools_catalog: str, options: RouterOptions) -> None:
        self._llm = llm
        self._profile = profile_of(llm)
        self._tools = tools_catalog
        self._options = options

    def warm_up(self) -> None:
        """Load the prompt template and tokenizer the first call would (``prompts.prepare_prompts``): the actors
        call this while the model server starts, so no task waits for it."""
        prepare_prompts({"router": self._profile.prompt("router")})

    def use_tools(self, tools_catalog: str) -> None:
        """Route with this tool catalog from the next task on (an MCP server's tool list changed)."""
        self._tools = tools_catalog

    async def route(self, task_id: str, task: str, history: str = "",
                    cost: CostBudget | None = None) -> RoleResult[RouterDecision]:
        """``history``: a session's earlier turns (``agents.memory.history``), a trimmable context item; a
        template that does not declare it routes without it. A template that declares
        ``tool_purposes`` (router/v5) sees what each tool is for and no argument schemas: choosing a route needs
        no arguments; one that declares ``tools`` sees the whole catalog. ``cost``: the task's money budget,
        which each model call is checked against (``agents.roles.cost_meter``)."""
        llm = metered(self._llm, cost)
        template = load_prompt("router", self._profile.prompt("router"))
        wants = set(template.variables)
        extra = {"history": history} if "history" in wants else {}
        if "tools" in wants:
            extra["tools"] = self._tools
        if "tool_purposes" in wants:
            extra["tool_purposes"] = catalog_summary(self._tools)
        prompt = template.render(budget_tokens=self._options.prompts.context_token_budget, task=task, **extra)
        form = self._profile.reply_form("router")
        json_form = form == "json"
        settle = self._settled_plan if self._profile.stop_at_plan and json_form else None
        # The schema is a fresh copy per call (a request may be narrowed in place): made only for the JSON form,
        # the one that sends it.
        call = await call_json(llm, role="router", messages=prompt.messages, parse=parse_router_decision,
                               json_schema=router_schema() if json_form else None, metadata={"task_id": task_id},
                               form=form, settle=settle)
        decision = call.value
        if decision.route == "clarify" and self._profile.uses(Strategy.CLARIFY_CHECK):
            decision, spend = await self._confirmed(llm, decision, task_id, task, history, extra)
            call_spend = call.spend + spend
        else:
            call_spend = call.spend
        # With the numeric set only, a question back on a task that names what it asks about is planned
        # (a heuristic on capitalised words: agents.checks.numeric.referents).
        route = planned_route(decision, self._options.min_confidence, task) \
            if "numeric" in self._options.prompts.checks else effective_route(decision, self._options.min_confidence)
        if route != decision.route:
            # Low confidence: ask instead of guessing (DESIGN.md); keep the model's reason for the user. A question
            # back on a task that names everything it asks about is planned (the numeric set only), and the reason
            # says code decided.
            reason = decision.reason if route == "clarify" else \
                f"planned by code: the task names {', '.join(named_only(task))} and points at nothing else (the " \
                f"router asked back: {decision.reason})"
            decision = RouterDecision(route=route, confidence=decision.confidence, reason=reason, answer=None)
        return RoleResult(decision, call_spend)

    async def _confirmed(self, llm: LLM, decision: RouterDecision, task_id: str, task: str, history: str,
                         extra: dict[str, str]) -> tuple[RouterDecision, Spend]:
        """A question back (``Strategy.CLARIFY_CHECK``) stands only if one narrow follow-up question
        (``clarify_check``) finds a word the task writes that points at something never named (a word the model
        itself calls a pronoun or a demonstrative: a closed set of kinds the server constrains the reply to);
        otherwise the task is planned and the reason says why. Small models ask back about any name they do not know; the follow-up
        asks only about pointing words, and costs a call only when the router chose to ask. (The router's own
        quote is not required to match: it may quote the task's words translated.)"""
        template = load_prompt("clarify_check", self._profile.prompt("clarify_check"))
        values = {k: v for k, v in {"history": history, **extra}.items() if k in template.variables}
        prompt = template.render(budget_tokens=self._options.prompts.context_token_budget, task=task, **values)
        check = await call_json(llm, role="router", messages=prompt.messages, parse=parse_classified_word,
                                json_schema=classified_word_schema(), metadata={"task_id": task_id})
        word, kind = check.value.word, check.value.kind
        # A word the reply leaves unclassified (a server that does not hold it to the schema) counts as
        # pointing, as before the plain form went: only a kind outside the closed set overrules the question.
        pointing = kind is None or kind in POINTING_KINDS
        if word is not None and pointing and written_in(word, task, history):
            return decision, check.spend
        found = f"found {word!r}, which the task does not say" if word and pointing else \
            f"found {word!r}, a {kind}: it names what it means" if word else \
            "found no word that points at something the task never names"
        return _planned(decision, f"asked again, the model {found}"), check.spend

    def _settled_plan(self, text: str) -> RouterDecision | None:
        confidence = settled_plan_confidence(text, min_confidence=self._options.min_confidence)
        if confidence is None:
            return None
        return RouterDecision(route="plan", confidence=confidence, reason=STOPPED_REASON, answer=None)


def _planned(decision: RouterDecision, why: str) -> RouterDecision:
    return RouterDecision(route="plan", confidence=decision.confidence, answer=None,
                          reason=f"planned by code: {why} (the router asked: {decision.answer})")
