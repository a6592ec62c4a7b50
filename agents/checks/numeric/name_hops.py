"""A reasoning step that only names its search's one hit for arithmetic, answered by code instead of a model.

The embedded planner copies its prompt's name hop (search, then "the name of …", then search with that name)
onto things the task already names: it searched "population of Paris", asked a reasoning step for "the name of
the city-proper population of Paris", and gave that answer to the calculator. The engine then reads the figure
through the reasoning step (``StepRequest.read_through``): from the hit titled with the name it answered. When
the search returned one hit and every step that uses the reasoning step wants a number from it, that hit is the
only one the read-through can reach, so the model call could only confirm its title or fail the step. Code
answers the title; a model call on two CPU cores costs 5-7 s.

    >>> from planning.models import PlanStep
    >>> hop = PlanStep(step_id=3, description="the name of the population of Paris", depends_on=[1])
    >>> calc = PlanStep(step_id=5, description="difference", tool_name="calculator",
    ...                 tool_input={"expression": "{$step_3_result} - {$step_4_result}"}, depends_on=[3, 4])
    >>> title_answer(hop, [{"title": "Paris", "text": "Paris had about 2.10 million people."}], [calc],
    ...              number_slots=lambda step: frozenset({3, 4}))
    'Paris'

A hop whose name feeds a search (the real hop: "capital of Italy" → the Italy page → "Rome") needs the model: the
answer is in the passage, not its title. So does one whose hit states no figure at all: the numbers its users want
are not in that passage, so the name they need is not its title ("capital of the United Kingdom" → the United
Kingdom page, which names London and gives no population).

    >>> title_answer(hop, [{"title": "United Kingdom", "text": "A country; its capital is London."}], [calc],
    ...              number_slots=lambda step: frozenset({3, 4})) is None
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agents.checks.numbers import numbers_in
from agents.checks.numeric.figures import top_passage
from planning.models import PlanStep

__all__ = ["title_answer"]


def title_answer(reasoning: PlanStep, source_output: Any, consumers: Sequence[PlanStep], *,
                 number_slots: Callable[[PlanStep], frozenset[int]]) -> str | None:
    """The title of the one hit ``source_output`` holds, when ``reasoning`` reads only that search and every
    step in ``consumers`` (the steps that use it; at least one) is a tool call that puts its output where a
    number goes (``number_slots(step)``: the steps whose outputs it takes as numbers). None otherwise: the
    model answers the step."""
    if reasoning.tool_name is not None or len(reasoning.depends_on) != 1 or not consumers:
        return None
    if any(c.tool_name is None or reasoning.step_id not in number_slots(c) for c in consumers):
        return None
    hits = source_output if isinstance(source_output, list) else None
    if hits is None or len(hits) != 1 or not isinstance(hits[0], Mapping):
        return None
    text, _ = top_passage(hits)
    if text is None or not numbers_in(text):
        return None
    title = hits[0].get("title")
    return title.strip() if isinstance(title, str) and title.strip() else None
