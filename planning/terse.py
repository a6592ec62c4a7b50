"""The terse plan form: the model-facing encoding of a plan, one line a step, translated into the wire ``Plan``.

At 80 output tokens/s a plan is decode-bound; the JSON wire form spends most of its tokens on keys, quotes and
braces and writes every reference twice (in the value and in ``depends_on``). The terse form writes each
reference once and derives the dependencies from it::

    1. lookup(entity="Paris", attribute="population")
    2. lookup(entity="Rome", attribute="population")
    3. calculator(expression="$1 - $2")
    4. think("which city is larger, $1 or $2?")
    5. lookup(entity=$4.city, attribute="area") after $3   # area of the larger city

Grammar (one step per line; the reply may also hold blank lines, code fences and prose lines)::

    step      := INT "." NAME "(" [args] ")" ["after" "$" INT ("," "$" INT)*] ["#" description]
    answer    := "answer:" TEXT                     after the steps: the answer's shape, "$N[.path]" or
                                                    "{$N[.path]}" where step N's output goes (``Plan.answer``)
    args      := arg ("," arg)*
    arg       := (NAME | STRING) "=" value          tool steps take named arguments only
               | STRING                             think("question") — a reasoning step (tool_name null)
    value     := STRING | NUMBER | true | false | null | ref | "[" [value ("," value)*] "]"
               | "{" [STRING ":" value ("," STRING ":" value)*] "}"
    ref       := "$" INT ("." (NAME | INT))*        a whole value: "$step_N_result[.path]" on the wire
    STRING    := a JSON string (or a Python single-quoted one); inside it "$N[.path]" and "{$N[.path]}"
                 are references ("{$step_N_result[.path]}" on the wire) and "$$" is a literal "$"

``depends_on`` is every step referenced in the arguments (or in a think question) plus the ``after`` list.
A tool step's description is its ``# comment``, or ``describe_call`` of the call when there is none; a think
step's description is its question. Python-style ``True``/``False``/``None`` are read as JSON literals.

    >>> plan = parse_terse('1. lookup(entity="Paris")\\n2. calculator(expression="$1 * 2")  # double it')
    >>> plan.steps[1].tool_input, plan.steps[1].depends_on, plan.steps[1].description
    ({'expression': '{$step_1_result} * 2'}, [1], 'double it')
    >>> print(render_terse(plan))
    1. lookup(entity="Paris")
    2. calculator(expression="$1 * 2")  # double it
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from dag.refs import references
from planning.errors import LLMOutputError, PlanningError
from planning.models import Plan, PlanStep
from planning.terse_line import IDENT, THINK, describe_call, parse_terse_line, translate_text

__all__ = ["THINK", "TerseEncodingError", "TersePlanParser", "parse_terse", "render_terse", "render_terse_step"]

_STEP_LINE = re.compile(r"\d+\s*\.\s*\S")
# A call written without its number ("lookup(...)", "- lookup(...)", "Step 2: lookup(...)") is a step the model
# meant: reject it rather than drop it silently.
_UNNUMBERED_CALL = re.compile(r"(?:[-*]\s*|step\s*\d+\s*[:.)]\s*)?[A-Za-z_][A-Za-z0-9_.\-]*\(.*\)\s*(?:#.*)?", re.I)
_ANSWER_LINE = re.compile(r"answer\s*:\s*(?P<text>.*\S)", re.IGNORECASE)
_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_REF_TAIL = re.compile(r"[A-Za-z0-9_.}]")
# The wire spellings of a reference (dag.refs reads the same ones): whole value, and the three inline forms.
_WIRE_PATH = r"((?:\.(?:[A-Za-z_][A-Za-z0-9_]*|\d+))*)"
_WIRE_WHOLE = re.compile(r"\$step_(\d+)_result" + _WIRE_PATH)
_WIRE_INLINE = re.compile(r"\{\$step_(\d+)_result" + _WIRE_PATH + r"\}|\$\{step_(\d+)_result" + _WIRE_PATH
                          + r"\}|\$step_(\d+)_result" + _WIRE_PATH + r"(?![A-Za-z0-9_])")
_DOLLAR_NEXT = frozenset("$0123456789")  # a literal "$" before one of these would read as "$$" or a reference


class TerseEncodingError(PlanningError):
    """A wire plan that the terse form cannot express (a tool named ``think``, or a name that is not an
    identifier). Use the JSON planner prompt for such tools, or rename them."""


class TersePlanParser:
    """Feed chunks; get each step the moment its line closes. One pass over the text (O(total length)): only
    the current unfinished line is kept, and it is joined once, when its newline arrives."""

    def __init__(self, params: Mapping[str, Sequence[str]] | None = None) -> None:
        self._params = params
        self._line: list[str] = []
        self._line_no = 0
        self._closed = False
        self.steps: list[PlanStep] = []
        self.answer: str | None = None
        """The reply's ``answer:`` line after its steps, in wire spelling (the last one written), or None."""

    def feed(self, chunk: str) -> list[PlanStep]:
        if self._closed:
            raise LLMOutputError("the plan stream was already closed")
        if "\n" not in chunk:
            self._line.append(chunk)
            return []
        first, *middle, last = chunk.split("\n")
        out: list[PlanStep] = []
        self._take("".join(self._line) + first, out)
        for line in middle:
            self._take(line, out)
        self._line = [last]
        return out

    def close(self) -> list[PlanStep]:
        """End of stream: the last line (without a newline) is a line too. Raises when no step was seen."""
        if self._closed:
            return []
        self._closed = True
        out: list[PlanStep] = []
        self._take("".join(self._line), out)
        self._line = []
        if not self.steps:
            raise LLMOutputError('Your plan has no steps. Write one step a line: 1. tool(param=value, ...), or '
                                 'think("question") for a reasoning step.')
        return out

    def _take(self, line: str, out: list[PlanStep]) -> None:
        self._line_no += 1
        text = line.strip()
        if not text or text.startswith(("```", "#")):
            return
        answer = _ANSWER_LINE.fullmatch(text) if self.steps else None
        if answer is not None:
            self.answer = translate_text(answer.group("text"), set())
        elif _STEP_LINE.match(text):
            step = parse_terse_line(text, self._line_no, self._params)
            out.append(step)
            self.steps.append(step)
        elif _UNNUMBERED_CALL.fullmatch(text):
            raise LLMOutputError(f"Plan line {self._line_no} ({text[:120]!r}) is a call without a step number. "
                                 "Start each step line with its number: 1. tool(param=value, ...)", raw=text)


def parse_terse(text: str, params: Mapping[str, Sequence[str]] | None = None) -> Plan:
    """A whole terse plan (the streaming parser fed in one piece)."""
    parser = TersePlanParser(params)
    steps = parser.feed(text) + parser.close()
    return Plan(steps=steps, answer=parser.answer)


def render_terse(plan: Plan, params: Mapping[str, Sequence[str]] | None = None) -> str:
    """The terse form of a wire plan (replan context, prompt examples); ``parse_terse`` reads it back to an
    equal plan when its references use the canonical wire spellings and ``depends_on`` is sorted. With
    ``params`` (tool → parameter order) the leading arguments that follow that order are written by position."""
    lines = [render_terse_step(s, params) for s in plan.steps]
    return "\n".join(lines if plan.answer is None else [*lines, f"answer: {_unquoted(plan.answer)}"])


def _positional(step: PlanStep, params: Mapping[str, Sequence[str]] | None) -> int:
    """How many leading arguments can go by position: they must be the first parameters, in order."""
    order = list((params or {}).get(step.tool_name or "", ()))
    keys = list(step.tool_input)
    n = 0
    while n < len(keys) and n < len(order) and keys[n] == order[n]:
        n += 1
    return n


def render_terse_step(step: PlanStep, params: Mapping[str, Sequence[str]] | None = None) -> str:
    n = _positional(step, params) if step.tool_name is not None else 0
    items = list(step.tool_input.items())
    kwargs = ", ".join([_value(v) for _, v in items[:n]] + [f"{_key(k)}={_value(v)}" for k, v in items[n:]])
    implied = set(references(step.tool_input))
    if step.tool_name is None:
        implied |= references(step.description)
        call = f"{THINK}({_quoted(step.description)}{', ' + kwargs if kwargs else ''})"
        comment = None
    else:
        if step.tool_name == THINK or not _TOOL_NAME.fullmatch(step.tool_name):
            raise TerseEncodingError(f"tool {step.tool_name!r} cannot be written in the terse plan form (the name "
                                     f"{THINK!r} is reserved and names must be identifiers); rename the tool or "
                                     "use the JSON planner prompt")
        call = f"{step.tool_name}({kwargs})"
        generated = describe_call(step.tool_name, step.tool_input)
        comment = None if step.description == generated else " ".join(step.description.split("\n")).strip()
    extra = sorted(set(step.depends_on) - implied)
    after = f" after {', '.join(f'${d}' for d in extra)}" if extra else ""
    note = "" if comment is None else (f"  # {comment}" if comment else "  #")
    return f"{step.step_id}. {call}{after}{note}"


def _key(key: str) -> str:
    return key if IDENT.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _value(value: Any) -> str:
    if isinstance(value, str):
        whole = _WIRE_WHOLE.fullmatch(value)
        return _ref(int(whole.group(1)), whole.group(2)) if whole else _quoted(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _ref(step_id: int, path: str, braced: bool = False) -> str:
    return "{$" + str(step_id) + path + "}" if braced else "$" + str(step_id) + path


def _quoted(text: str) -> str:
    """A wire text as a terse string: each wire ref (any spelling ``dag.refs`` reads inside text) in terse
    spelling, a literal ``$`` doubled where it would read as the start of a reference."""
    out: list[str] = []
    pos = 0
    for m in _WIRE_INLINE.finditer(text):
        step, path = next((m.group(i), m.group(i + 1)) for i in (1, 3, 5) if m.group(i) is not None)
        follow = text[m.end():m.end() + 1]
        out.append(_escape_dollars(text[pos:m.start()], "$"))
        # Braces keep a following ".5", "x" or "}" out of the reference's path.
        out.append(_ref(int(step), path, braced=bool(follow and _REF_TAIL.match(follow))))
        pos = m.end()
    out.append(_escape_dollars(text[pos:], ""))
    return json.dumps("".join(out), ensure_ascii=False)


def _unquoted(text: str) -> str:
    """A wire text in terse spelling outside a string (an ``answer:`` line): ``_quoted`` without the
    quotes."""
    return json.loads(_quoted(" ".join(text.split())))


def _escape_dollars(text: str, following: str) -> str:
    padded = text + following
    return "".join("$$" if c == "$" and padded[i + 1:i + 2] in _DOLLAR_NEXT else c for i, c in enumerate(text))
