"""Parse a JSON wire plan while it streams: each step is returned the moment its JSON object closes, so the
executor can start it before the planner has finished writing the rest of the plan. ``planning.stream``'s
``StreamingPlanParser`` hands a reply here when it turns out to be JSON (or to the terse parser otherwise).

    >>> p = JsonPlanParser()
    >>> p.feed('```json\\n{"steps": [{"step_id": 1, "tool_name": "search", "tool_input": {"q": "a}"}}')
    [PlanStep(step_id=1, description='search q=a}', tool_name='search', tool_input={'q': 'a}'}, depends_on=[])]
    >>> p.feed(', {"step_id": 2, "depends_on": [1]}]}\\n```'), p.close()
    ([PlanStep(step_id=2, description='', tool_name=None, tool_input={}, depends_on=[1])], [])

One pass over the text in total (state is kept between chunks; nothing is re-scanned), so a long plan
costs O(length) however finely it is chunked.
"""

from __future__ import annotations

import enum
import json
import re

import pydantic

from dag.refs import references
from planning.errors import LLMOutputError
from planning.lenient import describe_validation_error, loads_lenient, normalise_step
from planning.models import PlanStep
from planning.terse_line import describe_call

__all__ = ["JsonPlanParser"]

_WS = " \t\r\n"
_STRING_STOP = re.compile(r'["\\]')
_STRUCTURE = re.compile(r'["{}\[\]]')


class _Mode(enum.Enum):
    SEEK = "seek"  # outside any JSON: prose, fences
    OBJECT = "object"  # inside the top-level object, looking for its "steps" key
    STEPS = "steps"  # inside the steps array
    DONE = "done"  # the steps array closed; the rest is ignored


class JsonPlanParser:
    """Feed text chunks; get each PlanStep once, in order, as soon as its object is complete."""

    def __init__(self) -> None:
        self._buf: list[str] = []
        self._text = ""
        self._i = 0
        self._mode = _Mode.SEEK
        self._stack: list[str] = []
        self._in_str = False
        self._esc = False
        self._str_start = 0
        self._last_key: str | None = None
        self._pending_key: str | None = None
        self._steps_depth = 0
        self._bare = False
        self._elem_start = -1
        self._index = 0
        self.steps: list[PlanStep] = []
        self._closed = False

    # ------------------------------------------------------------------ public
    def feed(self, chunk: str) -> list[PlanStep]:
        if self._closed:
            raise LLMOutputError("the plan stream was already closed")
        if not chunk or self._mode is _Mode.DONE:
            return []  # after the steps array closed, the rest (closing brace, a fence, prose) is irrelevant
        self._text += chunk
        out: list[PlanStep] = []
        self._scan(out)
        self.steps.extend(out)
        return out

    def close(self) -> list[PlanStep]:
        """End of stream. Raises LLMOutputError when no complete ``steps`` array was seen."""
        self._closed = True
        if self._mode is _Mode.DONE:
            return []
        if self._mode is _Mode.STEPS:
            raise LLMOutputError(
                f"Your plan was truncated or malformed: the \"steps\" array never closed (after {len(self.steps)} "
                "complete steps). Return the complete plan as one JSON object.", raw=self._text)
        if self._mode is _Mode.OBJECT:
            raise LLMOutputError("Your plan was truncated: the JSON object never closed and no \"steps\" array "
                                 "was found. Return the complete plan as one JSON object.", raw=self._text)
        raise LLMOutputError('Your output has no "steps" array. Return only one JSON object of the form '
                             '{"steps": [{"step_id": 1, ...}]}.', raw=self._text)

    # ------------------------------------------------------------------ scanner
    def _scan(self, out: list[PlanStep]) -> None:
        text = self._text
        n = len(text)
        i = self._i
        while i < n:
            if self._mode is _Mode.SEEK:
                i = self._seek(text, i)
                continue
            if self._mode is _Mode.DONE:
                i = n
                break
            if self._in_str:
                if self._esc:
                    self._esc = False
                    i += 1
                    continue
                # Only a quote or a backslash changes anything inside a string: jump to the next one.
                found = _STRING_STOP.search(text, i)
                if found is None:
                    i = n
                    break
                i = found.start()
                if text[i] == "\\":
                    self._esc = True
                else:
                    self._in_str = False
                    if self._mode is _Mode.OBJECT and len(self._stack) == 1:
                        self._last_key = _decode(text[self._str_start:i + 1])
                i += 1
                continue
            if self._mode is _Mode.STEPS and len(self._stack) > self._steps_depth:
                # Inside a step only strings and brackets matter (the step's text is parsed when it closes).
                found = _STRUCTURE.search(text, i)
                if found is None:
                    i = n
                    break
                i = found.start()
            c = text[i]
            if c == '"':
                self._in_str, self._str_start = True, i
                self._check_element_start(c, i)
            elif c in "{[":
                self._open(c, i)
            elif c in "}]":
                self._close(c, i, text, out)
            elif self._mode is _Mode.OBJECT and len(self._stack) == 1:
                if c == ":":
                    self._pending_key = self._last_key
                elif c not in _WS:
                    self._pending_key = None
                    if c == ",":
                        self._last_key = None
            elif c not in _WS and c != ",":
                self._check_element_start(c, i)
            i += 1
        self._i = i

    def _seek(self, text: str, i: int) -> int:
        starts = [p for p in (text.find("{", i), text.find("[", i)) if p != -1]
        if not starts:
            return len(text)
        start = min(starts)
        self._stack = [text[start]]
        self._in_str = self._esc = False
        self._last_key = self._pending_key = None
        if text[start] == "{":
            self._mode = _Mode.OBJECT
        else:
            self._mode, self._steps_depth, self._bare = _Mode.STEPS, 1, True
        return start + 1

    def _open(self, c: str, i: int) -> None:
        if self._mode is _Mode.OBJECT and len(self._stack) == 1:
            if c == "[" and self._pending_key == "steps":
                self._stack.append(c)
                self._mode, self._steps_depth, self._bare = _Mode.STEPS, 2, False
                return
            self._pending_key = None
        if self._mode is _Mode.STEPS and len(self._stack) == self._steps_depth:
            if c == "{":
                self._elem_start = i
            else:
                self._check_element_start(c, i)
        self._stack.append(c)

    def _close(self, c: str, i: int, text: str, out: list[PlanStep]) -> None:
        expected = "{" if c == "}" else "["
        if self._stack[-1] != expected:
            if self._mode is _Mode.STEPS and not (self._bare and not self.steps):
                raise LLMOutputError(f"Your plan has mismatched brackets near character {i}: {c!r} closes "
                                     f"{self._stack[-1]!r}. Return only one valid JSON object.", raw=text)
            self._mode = _Mode.SEEK  # a stray bracket in prose; keep looking for the plan
            return
        self._stack.pop()
        depth = len(self._stack)
        if self._mode is _Mode.STEPS:
            if depth == self._steps_depth and c == "}":
                out.append(self._step(text[self._elem_start:i + 1]))
            elif depth == self._steps_depth - 1:
                self._mode = _Mode.DONE
                return
        if not self._stack:
            self._mode = _Mode.SEEK  # a top-level object without "steps": keep looking

    def _check_element_start(self, c: str, i: int) -> None:
        """A steps-array element that is not an object: a bare array in prose (``[see below]``) is
        skipped; in a real steps array it is an error."""
        if self._mode is not _Mode.STEPS or len(self._stack) != self._steps_depth:
            return
        if self._bare and not self.steps and self._elem_start < 0:
            self._mode = _Mode.SEEK
            self._stack = []
            return
        raise LLMOutputError(f"steps.{self._index}: every step must be a JSON object, found {c!r}. Return "
                             '{"steps": [{"step_id": 1, ...}, ...]}.', raw=self._text)

    def _step(self, raw: str) -> PlanStep:
        index = self._index
        self._index += 1
        self._elem_start = -1
        try:
            data = loads_lenient(raw)
        except json.JSONDecodeError as exc:
            raise LLMOutputError(f"Step number {index + 1} in your plan is not valid JSON: {exc}. Return only one "
                                 "JSON object.", raw=self._text) from None
        except RecursionError:
            raise LLMOutputError(f"Step number {index + 1} nests JSON too deeply.", raw=self._text) from None
        try:
            step = PlanStep.model_validate(normalise_step(data))
        except pydantic.ValidationError as exc:
            raise LLMOutputError("Your plan does not match the required format: "
                                 f"{describe_validation_error(exc, prefix=f'steps.{index}')}. Return only one JSON "
                                 "object with the required fields.", raw=self._text) from None
        return _implied(step, given=data)


def _implied(step: PlanStep, given: dict[str, object]) -> PlanStep:
    """What a short JSON step leaves out, as the terse form implies it: ``depends_on`` is the steps its
    arguments refer to, a tool step's description is its call. A small model decodes a few tokens a second, and
    these two fields were about half of each step it wrote; an explicit ``depends_on`` is kept as written (and
    validated), less the step's own id."""
    update: dict[str, object] = {}
    # A step never waits for itself, written or implied (as in the terse form): its own id orders nothing, and a
    # use of its own result stays in its arguments, where validation says so ("uses its own result").
    if "depends_on" not in given:
        update["depends_on"] = sorted(references(step.tool_input) - {step.step_id})
    elif step.step_id in step.depends_on:
        update["depends_on"] = [d for d in step.depends_on if d != step.step_id]
    if not step.description and step.tool_name is not None and "description" not in given:
        update["description"] = describe_call(step.tool_name, step.tool_input)
    return step.model_copy(update=update) if update else step


def _decode(quoted: str) -> str:
    try:
        value = json.loads(quoted)
    except json.JSONDecodeError:
        return quoted[1:-1]
    return value if isinstance(value, str) else quoted[1:-1]
