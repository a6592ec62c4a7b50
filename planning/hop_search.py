"""The search a name hop left out, added by code: "the capital of Spain" found, then never looked up.

The embedded planner writes a multi-hop task's first half right — a search ("capital of Spain"), a reasoning step
that answers the name ("Madrid") — and then hands the name to the calculator as if it were the figure
(``calculator("{$step_2_result} area")``). The executor refuses the call: the name states no number. Told in
words which search to add, the 1.5B planner wrote the same plan three times on the dev split (multi-hop 07 and
09), each replan a planner call and a review. The missing step is fully determined by the plan itself: a search
like the one the hop read, for the name the hop answered and the quantity the failed call or the task asks
for. Code writes it, and the call that wanted the figure takes the search's output instead (or is dropped when
it did no arithmetic at all: the search's passage is the answer's figure).

    >>> from planning.models import Plan, PlanStep
    >>> plan = Plan(steps=[
    ...     PlanStep(step_id=1, description="", tool_name="doc_search", tool_input={"query": "capital of Spain", "k": 1}),
    ...     PlanStep(step_id=2, description="the name of the capital of Spain", depends_on=[1]),
    ...     PlanStep(step_id=3, description="", tool_name="calculator",
    ...              tool_input={"expression": "{$step_2_result} area"}, depends_on=[2])])
    >>> hop = NameHop(consumer=3, name_step=2, search=1)
    >>> [(s.step_id, s.tool_name, s.tool_input) for s in add_hop_searches(plan, [hop], "What area does it cover?").steps]
    [(1, 'doc_search', {'query': 'capital of Spain', 'k': 1}), (2, None, {}), (4, 'doc_search', {'query': '{$step_2_result} area', 'k': 1})]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from planning.models import Plan, PlanStep

__all__ = ["NameHop", "add_hop_searches", "call_words", "quantity_words"]


@dataclass(frozen=True, slots=True)
class NameHop:
    """Step ``consumer`` put the output of reasoning step ``name_step`` (a name, read from tool step ``search``)
    where it needs a number."""

    consumer: int
    name_step: int
    search: int


_REF = re.compile(r"\{?\$step_(\d+)_result\}?(?:\[[^\]]*\])*")
_WORD = re.compile(r"[A-Za-z][A-Za-z-]*")
# Words of an expression or a question that say nothing about the quantity wanted.
_NOT_A_QUANTITY = frozenset("""
    a an and are as at be by cover covers do does for from give has have how in is it its many much of on or the
    their there this to was what which with live lives figure figures result value number step round min max abs
    floor ceil sqrt log exp pi tau e km metres meters square kilometres kilometers decimal decimals one two city
    country capital tell me please half double twice times sum total combined difference more less larger smaller
    bigger percentage percent share ratio average count
""".split())


def call_words(consumer: PlanStep) -> str:
    """The words a call wrote beside its references that are no function of an expression ("area" in
    ``"{$step_2_result} area"``, "population" in ``"count(population) in {$step_2_result}"``): a call
    with any is a search written as arithmetic."""
    written = " ".join(v for v in consumer.tool_input.values() if isinstance(v, str))
    return " ".join(w for w in _WORD.findall(_REF.sub(" ", written)) if w.lower() not in _NOT_A_QUANTITY)


def quantity_words(consumer: PlanStep, task: str, hop_query: str) -> str:
    """What to search for beside the name: the words the failed call wrote next to its reference ("area" in
    ``"{$step_2_result} area"``), else the task's words that are neither the hop's own ("capital", "Spain") nor
    filler ("How many people live in the capital of Spain?" → "people").

        >>> step = PlanStep(step_id=3, description="", tool_name="calculator", tool_input={"expression": "round({$step_2_result})"})
        >>> quantity_words(step, "How many people live in the capital of Spain?", "capital of Spain")
        'people'
    """
    own = call_words(consumer)
    if own:
        return own
    hop = {w.lower() for w in _WORD.findall(hop_query)}
    asked = [w for w in _WORD.findall(task) if w.lower() not in _NOT_A_QUANTITY and w.lower() not in hop]
    return " ".join(asked)


def add_hop_searches(plan: Plan, hops: Sequence[NameHop], task: str) -> Plan | None:
    """``plan`` with one search added after each hop's name step, and each hop's consumer reading that search
    instead of the name. A consumer that did no arithmetic (its argument is the reference alone, or holds words of
    its own: a search written as arithmetic) is dropped: the new search is the figure. None when a hop does not hold (a step missing, a search
    with no text argument) or a dropped consumer has dependents: the planner is asked instead."""
    steps = {s.step_id: s for s in plan.steps}
    next_id = max(steps, default=0) + 1
    added: dict[int, PlanStep] = {}
    replaced: dict[int, PlanStep | None] = {}
    for hop in hops:
        consumer, name, search = steps.get(hop.consumer), steps.get(hop.name_step), steps.get(hop.search)
        if consumer is None or name is None or search is None or search.tool_name is None \
                or name.tool_name is not None or hop.search not in name.depends_on:
            return None
        query_key = next((k for k, v in search.tool_input.items() if isinstance(v, str)), None)
        if query_key is None:
            return None
        words = quantity_words(consumer, task, search.tool_input[query_key])
        query = f"{{$step_{hop.name_step}_result}} {words}".strip()
        found = PlanStep(step_id=next_id, description=f"{words or 'the figure'} of the name step {hop.name_step} found",
                         tool_name=search.tool_name, tool_input={**search.tool_input, query_key: query},
                         depends_on=[hop.name_step])
        added[hop.name_step] = found
        # A call with words of its own searched in the calculator's place: the search replaces it.
        replaced[hop.consumer] = None if call_words(consumer) else _reading(consumer, hop.name_step, next_id)
        next_id += 1
    dropped = {sid for sid, step in replaced.items() if step is None}
    if any(set(s.depends_on) & dropped for s in plan.steps if s.step_id not in dropped):
        return None
    out: list[PlanStep] = []
    for step in plan.steps:
        if step.step_id in replaced:
            continue  # placed after the search it now reads (dependencies before dependents)
        out.append(step)
        if step.step_id in added:
            out.append(added[step.step_id])
    out += [step for step in replaced.values() if step is not None]
    return Plan(steps=out)


def _reading(consumer: PlanStep, name_step: int, search_step: int) -> PlanStep | None:
    """``consumer`` reading step ``search_step``'s figure where it read ``name_step``'s name; None when its
    arguments are the reference alone (no arithmetic)."""
    def ref(match: re.Match[str]) -> str:
        if int(match.group(1)) != name_step:
            return match.group(0)
        # The whole reference, subscripts too ("$step_2_result['population']"): the search's figure is the value.
        return f"{{$step_{search_step}_result}}" if match.group(0).startswith("{") else f"$step_{search_step}_result"

    tool_input = {k: _REF.sub(ref, v) if isinstance(v, str) else v for k, v in consumer.tool_input.items()}
    texts = [v for v in tool_input.values() if isinstance(v, str)]
    if texts and all(_REF.fullmatch(v) for v in texts):
        return None
    depends_on = [search_step if d == name_step else d for d in consumer.depends_on]
    return consumer.model_copy(update={"tool_input": tool_input, "depends_on": depends_on})
