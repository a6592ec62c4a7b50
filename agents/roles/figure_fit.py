"""Numbers for a calculation whose plan passed passages on: code first, one model call for the rest.

A planner (a small one especially) writes ``calculator("max({$step_1_result}, {$step_2_result}) - ...")`` with
search steps whose outputs are passages, and the tool rejects the text. Code reads the one figure a passage
states about what its step looked up (``agents.checks.numeric.figures``); when a passage holds several, the model is asked
for exactly those figures (``prompts/executor_figures``), a few output tokens, instead of rewriting the whole
call with the passages pasted in (the generic repair; with the 1.5B model that call decoded 420 tokens in 108 s,
copied the passages back and failed again).

Only outputs that land where the tool wants a number are fitted: a parameter typed as a number, or the text of
a tool that returns a number (an arithmetic expression). A passage in a search query is left to the generic
repair.

    >>> from agents.tools.builtins import calculator
    >>> sorted(numeric_refs(calculator.spec.parameters, calculator.spec.returns,
    ...                     {"expression": "{$step_1_result} - {$step_2_result}"}))
    [1, 2]
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agents.checks.numbers import numbers_in, stated_numbers
from agents.checks.numeric.figures import relevant_number, top_passage
from dag.refs import Template, compile_value, references
from planning.errors import PlanningError
from planning.parse import extract_json_object
from prompts import fence_untrusted
from prompts.compact import titled

__all__ = ["SOURCE_CHARS", "code_figures", "figures_schema", "named_passage", "no_figure_message", "numeric_refs",
           "parse_figures", "plain_number", "render_sources", "stated_figures", "states_a_number"]

_NUMBER_TYPES = frozenset({"number", "integer"})
SOURCE_CHARS = 1500


def numeric_refs(parameters: Mapping[str, Any], returns: str, tool_input: Any) -> frozenset[int]:
    """The steps whose outputs a call puts where its tool wants a number."""
    if not isinstance(tool_input, dict):
        return frozenset()
    props = parameters.get("properties", {}) if isinstance(parameters, Mapping) else {}
    found: set[int] = set()
    for name, value in compile_value(tool_input).items():
        schema = props.get(name, {})
        kind = schema.get("type") if isinstance(schema, Mapping) else None
        typed_number = kind in _NUMBER_TYPES or (isinstance(kind, list) and bool(_NUMBER_TYPES & set(kind)))
        # An expression (text with refs inside) of a tool that returns a number: arithmetic over those outputs.
        expression = isinstance(value, Template) and returns.split(" ", 1)[0] == "number"
        if typed_number or expression:
            found |= references(value)
    return frozenset(found)


def code_figures(deps: Iterable[int], inputs: Mapping[int, Any], about: Mapping[int, str]) -> dict[int, float | None]:
    """Each dependency's number as code reads it: a number is itself, a passage its one relevant figure,
    None when code cannot tell which figure is meant."""
    return {dep: relevant_number(inputs[dep], about.get(dep, "")) for dep in deps if dep in inputs}


def states_a_number(output: Any) -> bool:
    """Whether the passage a model would read holds any number at all: prose without one ("Rome is the
    larger city") has no figure to read, and the call itself must change (the generic repair)."""
    return bool(numbers_in(_passage_text(output)[:SOURCE_CHARS]))


def stated_figures(output: Any) -> tuple[float, ...]:
    """The numbers the passage a model reads for ``output`` states (``render_sources`` shows the same text): the
    only figures it may read out of it (the day of a date is none). A 1.5B model read "68.4 million" as 6,840,000; a choice among the stated
    numbers cannot drop a digit.

    >>> stated_figures([{"title": "France", "text": "France had about 68.4 million people on 1 January 2024."}])
    (68400000.0, 2024.0)
    """
    return stated_numbers(_passage_text(output)[:SOURCE_CHARS])


_NAME_CHARS = 80


def named_passage(output: Any, name: Any) -> Any | None:
    """The one passage of ``output`` (a search's hits, or one passage) whose title is ``name``: where a
    reasoning step that answered a name ("Rome") points in the search it read. None when ``name`` is not a short
    name or no hit or more than one hit is titled so: then there is nothing sound to read a figure from.

    >>> hits = [{"title": "Paris", "text": "2.10 million"}, {"title": "Rome", "text": "2.75 million"}]
    >>> named_passage(hits, "Rome.")
    [{'title': 'Rome', 'text': '2.75 million'}]
    >>> named_passage(hits, "Madrid") is None
    True
    """
    if not isinstance(name, str) or not name.strip() or len(name) > _NAME_CHARS or "\n" in name.strip():
        return None
    wanted = _name_key(name)
    hits = output if isinstance(output, list) else [output]
    named = [hit for hit in hits if isinstance(hit, Mapping)
             and wanted in {_name_key(hit.get("title")), _name_key(hit.get("doc_id"))} - {""}]
    return named if len(named) == 1 else None


def _name_key(value: Any) -> str:
    # "Mount Everest." / "mount_everest" / " the Rhine" name the same hit
    if not isinstance(value, str):
        return ""
    words = value.replace("_", " ").strip().strip(".\"'").lower().split()
    return " ".join(words[1:] if words[:1] == ["the"] else words)


def no_figure_message(step_id: int, tool_name: str, dep: int, *, dep_is_a_name: bool = False) -> str:
    """Why a step cannot run when an output it needs as a number states none, and what the plan must do instead.
    The output is not quoted: this message reaches the planner as feedback, outside the fence tool output needs.
    ``dep_is_a_name``: ``dep`` is a reasoning step that answered a name from the search it read, and that search
    states no figure for it (the United Kingdom's page names London and no population). The 1.5B planner, told
    only to look the figure up, sent back the same plan twice; it is told which step to add and where.

    >>> no_figure_message(2, "calculator", 1)
    'step 2 gives calculator the output of step 1 where a number is needed, but that output states no figure: there is nothing to compute with. Look the figure up first: when step 1 names what to look up, add a reasoning step that answers that name, then search for the figure with it.'
    >>> print(no_figure_message(3, "calculator", 2, dep_is_a_name=True))
    step 3 gives calculator the output of step 2 where a number is needed, but step 2 answers a name, and what it read states no figure for it. Add a search step for the figure with that name — its query is "{$step_2_result}" and the quantity the task asks for (population, area, height…) — and give that step's output to step 3 instead of step 2's.
    """
    if dep_is_a_name:
        return (f"step {step_id} gives {tool_name} the output of step {dep} where a number is needed, but step {dep} "
                "answers a name, and what it read states no figure for it. Add a search step for the figure with that "
                f"name — its query is \"{{$step_{dep}_result}}\" and the quantity the task asks for (population, area, "
                f"height…) — and give that step's output to step {step_id} instead of step {dep}'s.")
    return (f"step {step_id} gives {tool_name} the output of step {dep} where a number is needed, but that output "
            "states no figure: there is nothing to compute with. Look the figure up first: when step "
            f"{dep} names what to look up, add a reasoning step that answers that name, then search for the figure "
            "with it.")


def render_sources(deps: Iterable[int], inputs: Mapping[int, Any], about: Mapping[int, str]) -> str:
    """One fenced source per dependency the model must read: what its step looked up, then its best passage."""
    blocks = []
    for dep in deps:
        text = _passage_text(inputs[dep])
        if len(text) > SOURCE_CHARS:
            text = text[:SOURCE_CHARS] + " …"
        blocks.append(f"Source {dep} (step {dep} looked up: {about.get(dep, '') or 'see its passage'}):\n"
                      + fence_untrusted(text, f"step {dep} output"))
    return "\n\n".join(blocks)


def figures_schema(deps: Iterable[int], choices: Mapping[int, Sequence[float]] | None = None) -> dict[str, Any]:
    """The reply's JSON schema: one number per source, nothing else (the server constrains the reply to it). With
    ``choices`` (``stated_figures`` of each source), a source's number is one its passage states."""
    keys = [str(d) for d in deps]
    options = {str(d): [plain_number(v) for v in found] for d, found in (choices or {}).items() if found}
    return {"type": "object", "properties": {k: {"enum": options[k]} if k in options else {"type": "number"}
                                             for k in keys},
            "required": keys, "additionalProperties": False}


def parse_figures(text: str, deps: Iterable[int], choices: Mapping[int, Sequence[float]] | None = None) -> dict[int, float]:
    """The model's figures, one per source; raises ``PlanningError`` (shown to the model) when one is missing,
    not a number, or (with ``choices``) not a number its source states."""
    obj = extract_json_object(text)
    figures: dict[int, float] = {}
    for dep in deps:
        value = obj.get(str(dep))
        if isinstance(value, str):
            try:
                value = float(value.replace(",", "").strip())
            except ValueError:
                pass
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise PlanningError(f"source {dep} needs one number, e.g. {{\"{dep}\": 2100000}}; got {value!r}")
        allowed = (choices or {}).get(dep)
        if allowed and not any(math.isclose(value, v, rel_tol=1e-9) for v in allowed):
            raise PlanningError(f"source {dep} does not state {value!r}; use one of the numbers it states, written in "
                                f"full: {', '.join(str(plain_number(v)) for v in allowed)}")
        figures[dep] = float(value)
    return figures


def plain_number(value: float) -> int | float:
    """A whole figure as an int (2100000, not 2100000.0): how a schema, a message or a call writes it."""
    return int(value) if value.is_integer() else value


def _passage_text(output: Any) -> str:
    text, title = top_passage(output)
    return titled(text, title) if text is not None else json.dumps(output, ensure_ascii=False, default=str)
