"""The search a name hop left out, added by code: "the capital of Spain" found, then never looked up.

The embedded planner writes a multi-hop task's first half right — a search ("capital of Spain"), a reasoning step
that answers the name ("Madrid") — and then hands the name to the calculator as if it were the figure
(``calculator("{$step_2_result} area")``). The executor refuses the call: the name states no number. Told in
words which search to add, the 1.5B planner wrote the same plan three times on two multi-hop tasks, each
replan a planner call and a review. The missing step is fully determined by the plan itself: a search like the
one the hop read, for the name the hop answered and the quantity the failed call or the task asks
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

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dag.refs import Ref, Template, compile_value, decompile
from planning.models import Plan, PlanStep
from planning.words import STOP_WORDS

__all__ = ["NameHop", "add_hop_searches", "call_words", "describe", "quantity_words", "unsearched_hops"]


@dataclass(frozen=True, slots=True)
class NameHop:
    """Step ``consumer`` put the output of reasoning step ``name_step`` (a name, read from tool step ``search``)
    where it needs a number."""

    consumer: int
    name_step: int
    search: int


def unsearched_hops(steps: Sequence[PlanStep], outputs: Mapping[int, Any], rejected: Sequence[int],
                    number_slots: Callable[[PlanStep], frozenset[int]]) -> list[NameHop]:
    """Each rejected call's hops: the reasoning steps whose output it wanted as a number (``number_slots``) that
    read one tool step and answered a name (text without a digit). Empty unless every rejected call has one:
    the planner is asked about the rest anyway, so it is asked about all.

        >>> steps = [PlanStep(step_id=1, description="", tool_name="doc_search", tool_input={"query": "capital of Spain"}),
        ...          PlanStep(step_id=2, description="the name", depends_on=[1]),
        ...          PlanStep(step_id=3, description="", tool_name="calculator", tool_input={"expression": "{$step_2_result} area"},
        ...                   depends_on=[2])]
        >>> unsearched_hops(steps, {1: [], 2: "Madrid"}, [3], lambda step: frozenset(step.depends_on))
        [NameHop(consumer=3, name_step=2, search=1)]
    """
    by_id = {s.step_id: s for s in steps}

    def a_name_from_a_search(dep: int) -> bool:
        step, output = by_id.get(dep), outputs.get(dep)
        if step is None or step.tool_name is not None or len(step.depends_on) != 1:
            return False
        source = by_id.get(step.depends_on[0])
        return source is not None and source.tool_name is not None and isinstance(output, str) \
            and not any(c.isdigit() for c in output)

    hops = []
    for sid in rejected:
        found = [NameHop(sid, dep, by_id[dep].depends_on[0]) for dep in sorted(number_slots(by_id[sid]))
                 if a_name_from_a_search(dep)]
        if not found:
            return []
        hops += found
    return hops


def describe(hops: Sequence[NameHop], before: Plan, after: Plan) -> str:
    """The replanned event's feedback: what code found and which steps it added."""
    old = {s.step_id for s in before.steps}
    found = "; ".join(f"step {h.consumer} needs a figure for the name step {h.name_step} answers, and no step "
                      "looked it up" for h in hops)
    added = ", ".join(f"step {s.step_id} ({s.tool_name} {json.dumps(s.tool_input, ensure_ascii=False)})"
                      for s in after.steps if s.step_id not in old)
    return f"Checked by code: {found}. Code added {added}."


_SUBSCRIPTS = re.compile(r"^(?:\[[^\]]*\])+")
"""Python-style subscripts the planner writes after a reference (``$step_2_result['population']``): not the
reference syntax (``dag.refs`` paths are dotted), and meaningless on a name or a search's passages."""
_WORD = re.compile(r"[A-Za-z][A-Za-z-]*")
_ARITHMETIC = frozenset("round min max abs floor ceil sqrt log exp sin cos tan pi tau e".split())
"""Names an expression may use: a call whose other words are these is arithmetic."""
_FILLER = STOP_WORDS | frozenset("""
    cover covers do does give many much there live lives figure figures km metres meters square kilometres
    kilometers decimal decimals two city country capital tell me please half double twice times sum total
    combined difference more less larger smaller bigger percentage percent share ratio average count
""".split())
"""Words of an expression or a question that say nothing about the quantity wanted: the stop words, and the
words a question asks a quantity with."""
_SAYS = {"people": "population", "inhabitants": "population", "residents": "population", "tall": "height",
         "high": "height", "long": "length"}
"""The quantity a question's word asks for ("how many people live in …" asks for a population)."""


def call_words(consumer: PlanStep) -> list[str]:
    """The words a call wrote beside its references that no expression uses ("area" in ``"{$step_2_result}
    area"``, "count", "population" in ``"count(population) in {$step_2_result}"``): a call with any is a search
    written as arithmetic."""
    written = " ".join(_beside_references(v) for v in consumer.tool_input.values() if isinstance(v, str))
    return [w for w in _WORD.findall(written) if w.lower() not in _ARITHMETIC]


def _parts(text: str) -> tuple[str | Ref, ...]:
    """``text`` as ``dag.refs`` reads it: literal text and references, each subscript after a reference cut off."""
    compiled = compile_value(text)
    parts = compiled.parts if isinstance(compiled, Template) else (compiled,)
    return tuple(_SUBSCRIPTS.sub("", part) if isinstance(part, str) and i and isinstance(parts[i - 1], Ref) else part
                 for i, part in enumerate(parts))


def _beside_references(text: str) -> str:
    return " ".join(part for part in _parts(text) if isinstance(part, str))


def quantity_words(consumer: PlanStep, task: str, hop_query: str) -> str:
    """What to search for beside the name: what the failed call wrote next to its reference ("area" in
    ``"{$step_2_result} area"``), else the task's words that are neither the hop's own ("capital", "Spain") nor
    filler, each as the quantity it asks for ("How many people live in the capital of Spain?" → "population").

        >>> step = PlanStep(step_id=3, description="", tool_name="calculator", tool_input={"expression": "round({$step_2_result})"})
        >>> quantity_words(step, "How many people live in the capital of Spain?", "capital of Spain")
        'population'
    """
    words = [w for w in call_words(consumer) if w.lower() not in _FILLER]
    if not words:
        hop = {w.lower() for w in _WORD.findall(hop_query)}
        words = [w for w in _WORD.findall(task) if w.lower() not in _FILLER and w.lower() not in hop]
    said = [_SAYS.get(w.lower(), w) for w in words]
    return " ".join(dict.fromkeys(said))


def add_hop_searches(plan: Plan, hops: Sequence[NameHop], task: str) -> Plan | None:
    """``plan`` with one search for each hop's name, placed where the hop's consumer was, and the consumer
    reading that search instead of the name. A consumer that did no arithmetic (its argument is the reference
    alone, or holds words no expression uses: a search written as arithmetic) is dropped, and what used it
    uses the search: the search's passage is the figure. None when a hop does not hold (a step missing, a search
    with no text argument): the planner is asked instead."""
    steps = {s.step_id: s for s in plan.steps}
    next_id = max(steps, default=0) + 1
    placed: dict[int, list[PlanStep]] = {}
    instead: dict[int, int] = {}
    for hop in hops:
        consumer, name, search = steps.get(hop.consumer), steps.get(hop.name_step), steps.get(hop.search)
        if consumer is None or name is None or search is None or search.tool_name is None \
                or name.tool_name is not None or hop.search not in name.depends_on or hop.consumer in placed:
            return None
        query_key = next((k for k, v in search.tool_input.items() if isinstance(v, str)), None)
        if query_key is None:
            return None
        words = quantity_words(consumer, task, search.tool_input[query_key])
        query = f"{{$step_{hop.name_step}_result}} {words}".strip()
        found = PlanStep(step_id=next_id, description=f"{words or 'the figure'} of the name step {hop.name_step} found",
                         tool_name=search.tool_name, tool_input={**search.tool_input, query_key: query},
                         depends_on=[hop.name_step])
        reading = None if call_words(consumer) else _reading(consumer, {hop.name_step: next_id})
        placed[hop.consumer] = [found] if reading is None else [found, reading]
        if reading is None:
            instead[hop.consumer] = next_id
        next_id += 1
    out: list[PlanStep] = []
    for step in plan.steps:
        if step.step_id in placed:
            out += placed[step.step_id]  # where the consumer was: after the name step, before its dependents
        elif set(step.depends_on) & set(instead):
            out.append(_reading(step, instead, keep_bare=True) or step)
        else:
            out.append(step)
    return Plan(steps=out)


def _reading(step: PlanStep, moved: dict[int, int], *, keep_bare: bool = False) -> PlanStep | None:
    """``step`` using step ``moved[n]``'s output wherever it used step ``n``'s; None when its arguments are then
    a reference alone (no arithmetic) and not ``keep_bare``."""
    def pointed(text: str) -> str:
        # The whole reference, path and subscripts too ("$step_2_result['population']"): the search's figure is
        # the value.
        parts = tuple(Ref(moved[p.step_id]) if isinstance(p, Ref) and p.step_id in moved else p for p in _parts(text))
        return decompile(Template(parts) if len(parts) > 1 else parts[0])

    tool_input = {k: pointed(v) if isinstance(v, str) else v for k, v in step.tool_input.items()}
    texts = [v for v in tool_input.values() if isinstance(v, str)]
    if not keep_bare and texts and all(isinstance(compile_value(v), Ref) for v in texts):
        return None
    depends_on = list(dict.fromkeys(moved.get(d, d) for d in step.depends_on))
    return step.model_copy(update={"tool_input": tool_input, "depends_on": depends_on})
