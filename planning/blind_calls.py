"""Planned calls whose result cannot depend on the task: asked about once, in the planner's repair round.

A small planner sometimes writes a call that looks like work but ignores the task's data. Three kinds are found
from the call alone, for any tool and any language:

- **A copy of the tool's documented example.** Precondition: a string argument of at least
  ``MIN_EXAMPLE_CHARS`` characters holding a digit occurs verbatim in the tool's own catalog entry (its
  description or an argument's), and none of the numbers in it is written in the task (as a number of its own:
  the "4" of "K-7349" is not). The call then computes the documentation's example ("(2.10 - 2.75) / 2.75 * 100"),
  not anything the task asked.
- **An expression that cancels itself.** Precondition: a string argument parses as arithmetic once each step
  reference (``{$step_N_result}``, with its ``.field``) stands for a variable, and it subtracts, divides or takes
  the remainder of one reference by the very same reference (``x - x``, ``x / x``, ``x % x``): that part is 0 or 1
  whatever the data, so the two figures it was meant to combine are one. A plan that looked up only one of two
  entities writes this.
- **Arithmetic on figures from nowhere.** Precondition: the step depends on no step, a string argument parses as
  arithmetic with no step reference, and at least two of its numbers are not figures the task states (as the
  checks' one number reader reads the task, in every reading a grouping mark allows, "3,000" or "3.000"; the
  digits of a code such as "K-7349" are no figure). Such figures are the model's invention or its
  memory: "max(1200, 900) - min(1200, 900)" for "which team is larger?" before any team was looked up. Unit
  constants ("24 * 60 * 60") fit the precondition too, which is why this is a question the planner may answer by
  keeping the call.

These are strong signs, not proofs (a task may really ask for the documentation's example), so the planner is
asked once, with the reason, and its second answer stands: the caller checks only the first round. The repair
round after a copied example shows the catalog without that tool's examples
(``agents.tools.registry.catalog_without_examples``): told not to, the 1.5B model still copied the example it saw.

    >>> from planning.models import PlanStep
    >>> entry = '- calculator(expression: str) -> number: Evaluate, e.g. "(2.10 - 2.75) / 2.75 * 100".'
    >>> copied = PlanStep(step_id=1, tool_name="calculator", tool_input={"expression": "(2.10 - 2.75) / 2.75 * 100"})
    >>> blind_call(copied, entry, "Which shop sold more last week, and by what percentage?", task_figures=()).copied
    True
    >>> ratio = PlanStep(step_id=3, tool_name="calculator", depends_on=[1],
    ...                  tool_input={"expression": "{$step_1_result}.balance / {$step_1_result}.balance"})
    >>> print(blind_call(ratio, entry, "How many times the balance of A is that of B?", task_figures=()))
    step 3 computes {$step_1_result}.balance / {$step_1_result}.balance: one value on both sides of '/', so the result is the same whatever the data. Each side needs its own figure: if the plan has not looked up the second one, add the step that does and refer to it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass

from dag.refs import strings_in
from planning.models import PlanStep

__all__ = ["MIN_EXAMPLE_CHARS", "MIN_INVENTED_FIGURES", "BlindCall", "blind_call", "cancelling_operator",
           "unwritten_figures"]

MIN_EXAMPLE_CHARS = 8
"""Shorter arguments ("api", "Q2", "2025-03") are ordinary values that a description may well mention."""

MIN_INVENTED_FIGURES = 2
"""Figures from nowhere a call must compute with before it is asked about (and noted to the reviewer,
``agents.checks.sound``): one may be a unit constant or a percentage's 100."""

_REF = re.compile(r"\{\$step_\d+_result\}(?:\.[A-Za-z_][\w-]*)*|\$step_\d+_result(?:\.[A-Za-z_][\w-]*)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_GROUPING = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
"""A thousands comma inside an expression ("3,000"), which the calculator reads as grouping."""
_LEADING_ZEROS = re.compile(r"(?<![\w.])0+(?=\d)")
"""The zeros a code's digits start with ("K-0042"), which Python's grammar refuses in a number."""
_CANCELLING = {ast.Sub: "-", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}


@dataclass(frozen=True, slots=True)
class BlindCall:
    """Why a call cannot depend on the task; ``copied``: it is the tool's documented example; ``invented``: it
    computes with figures from nowhere."""

    reason: str
    copied: bool
    invented: bool = False

    def __str__(self) -> str:
        return self.reason


def blind_call(step: PlanStep, tool_entry: str, task: str, *, task_figures: Collection[float]) -> BlindCall | None:
    """Why ``step``'s call cannot depend on the task (``tool_entry``: its tool's lines of the catalog), else None.

    ``task_figures``: every reading of the figures the task states, from the one number reader, which knows what
    is no figure (the digits of a code such as "K-7349", a date's day): ``agents.checks.numbers.numbers_in``."""
    if step.tool_name is None:
        return None
    for value in strings_in(step.tool_input):
        if _copied_example(value, tool_entry, task):
            return BlindCall(
                # The value is not quoted: the repair round hides the example, and a quote would show it again.
                f"step {step.step_id} gives {step.tool_name} the example from {step.tool_name}'s own description, "
                "not figures of this task. Write the call this task needs: take its figures from the task or from "
                "the steps that look them up ($N).", copied=True)
        invented = [] if step.depends_on else unwritten_figures(value, task_figures)
        if len(invented) >= MIN_INVENTED_FIGURES:
            return BlindCall(
                f"step {step.step_id} computes with {' and '.join(invented[:3])}, figures the task does not state "
                "and no step looks up. If they are facts about the task's subjects, add the steps that look them "
                "up with the tools and refer to their results; keep the call only if they are constants such as "
                "units.", copied=False, invented=True)
        cancelled = cancelling_operator(value)
        if cancelled is not None:
            return BlindCall(
                f"step {step.step_id} computes {value}: one value on both sides of '{cancelled}', so the result is "
                "the same whatever the data. Each side needs its own figure: if the plan has not looked up the "
                "second one, add the step that does and refer to it.", copied=False)
    return None


def _copied_example(value: str, tool_entry: str, task: str) -> bool:
    text = value.strip()
    if len(text) < MIN_EXAMPLE_CHARS or not any(c.isdigit() for c in text) or text not in tool_entry:
        return False
    # Whole numbers, not substrings: "4" is not written in a task that says "K-7349".
    written = set(_NUMBER.findall(task))
    return not any(number in written for number in _NUMBER.findall(text))


def unwritten_figures(value: str, task_figures: Collection[float]) -> list[str]:
    """The numbers of ``value`` read as arithmetic that are not among ``task_figures`` (none when it is not
    arithmetic or refers to a step), in the order written; ``round()``'s digits are not counted.

    >>> unwritten_figures("max(1,200, 900) - min(1200, 900)", [1200.0])
    ['900']
    >>> unwritten_figures("{$step_1_result} / 2", [])
    []
    """
    if _REF.search(value):
        return []
    try:
        tree = ast.parse(_LEADING_ZEROS.sub("", _GROUPING.sub("", value.strip())), mode="eval")
    except (SyntaxError, ValueError):
        return []
    # round()'s digits say how to write the result, not what it is computed from.
    digits = {id(node.args[1]) for node in ast.walk(tree) if isinstance(node, ast.Call)
              and isinstance(node.func, ast.Name) and node.func.id == "round" and len(node.args) == 2}
    found = sorted((node.col_offset, node.value) for node in ast.walk(tree) if isinstance(node, ast.Constant)
                   and type(node.value) in (int, float) and id(node) not in digits)
    written = set(task_figures)
    return list(dict.fromkeys(str(v) for _, v in found if float(v) not in written))


def cancelling_operator(value: str) -> str | None:
    """The operator of a ``ref <op> ref`` part of ``value`` read as arithmetic (same reference both sides), else
    None. Anything that does not parse as an expression is not arithmetic and is left alone.

    >>> cancelling_operator("{$step_1_result}.balance / {$step_1_result}.balance")
    '/'
    >>> cancelling_operator("{$step_1_result} - {$step_2_result}") is None
    True
    """
    names: dict[str, str] = {}

    def variable(match: re.Match[str]) -> str:
        return names.setdefault(match.group(0), f"_ref{len(names)}")

    source = _REF.sub(variable, value)
    if not names:
        return None
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in _CANCELLING and isinstance(node.left, ast.Name) \
                and isinstance(node.right, ast.Name) and node.left.id == node.right.id:
            return _CANCELLING[type(node.op)]
    return None
