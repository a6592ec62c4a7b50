"""One line of the terse plan form, read into a wire ``PlanStep`` (grammar: ``planning.terse``).

A hand-written recursive-descent reader over one line: one pass, no backtracking, and every failure is an
``LLMOutputError`` naming the line, the column and what to write instead (it goes back to the model for its
one repair round).

    >>> parse_terse_line('3. calculator(expression="$1 - $2.area")', 3).tool_input
    {'expression': '{$step_1_result} - {$step_2_result.area}'}
    >>> parse_terse_line('3. calculator(expression="$1 - $2.area")', 3).depends_on
    [1, 2]
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pydantic

from dag.refs import references
from planning.errors import LLMOutputError
from planning.lenient import describe_validation_error
from planning.models import PlanStep

__all__ = ["IDENT", "THINK", "describe_call", "implied_description", "parse_terse_line", "translate_text"]

THINK = "think"
"""The pseudo-tool of a reasoning step (wire ``tool_name: null``); a real tool cannot be named ``think``."""

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A parameter name written bare (``entity=...``); other names are quoted (``"max-results"=...``)."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_INT = re.compile(r"\d+")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_PATH = re.compile(r"(?:\.(?:[A-Za-z_][A-Za-z0-9_]*|\d+))*")
# Inside text: "$$" is a literal "$"; "{$N.path}" and "$N.path" are references.
_TEXT_REF = re.compile(r"\$\$|\{\$(\d+)(" + _PATH.pattern + r")\}|\$(\d+)(" + _PATH.pattern + r")")
_LITERALS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
_HINT = 'Write each step on its own line as N. tool(param=value, ...) or N. think("question").'


def wire_ref(step_id: int, path: str = "") -> str:
    return f"$step_{step_id}_result{path}"


def translate_text(text: str, refs: set[int]) -> str:
    """Terse text → wire text: ``$N.f`` / ``{$N.f}`` → ``{$step_N_result.f}``, ``$$`` → ``$``; ids go to ``refs``."""

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        step, path = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        refs.add(int(step))
        return "{" + wire_ref(int(step), path) + "}"

    return _TEXT_REF.sub(sub, text) if "$" in text else text


def describe_call(tool_name: str, tool_input: dict[str, Any]) -> str:
    """The description a step gets when its line has no ``# comment``: the call in wire terms, as a reader of
    a trace or a replan prompt wants to see it (``lookup entity=Paris, attribute=population``)."""
    args = ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
                     for k, v in tool_input.items())
    return f"{tool_name} {args}".rstrip()


def implied_description(step: PlanStep) -> bool:
    """Whether ``step``'s description only spells out its call (``describe_call``): a reader shown the call
    needs no second copy, and a rewritten call must not keep the old one's.

        >>> implied_description(PlanStep(step_id=1, tool_name="lookup", tool_input={"city": "Paris"},
        ...                              description="lookup city=Paris"))
        True
    """
    return step.tool_name is not None and step.description == describe_call(step.tool_name, step.tool_input)


class _Line:
    """Cursor over one line; every ``_fail`` says where and what was expected."""

    def __init__(self, text: str, line_no: int) -> None:
        self.text, self.line_no, self.pos = text, line_no, 0
        self.refs: set[int] = set()

    def fail(self, problem: str) -> LLMOutputError:
        shown = self.text if len(self.text) <= 120 else self.text[:117] + "..."
        return LLMOutputError(f"Plan line {self.line_no} ({shown!r}), column {self.pos + 1}: {problem}. {_HINT}",
                              raw=self.text)

    def ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r":
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str, what: str) -> None:
        self.ws()
        if self.peek() != char:
            found = repr(self.peek()) if self.peek() else "the end of the line"
            raise self.fail(f"expected {char!r} {what}, found {found}")
        self.pos += 1

    def match(self, pattern: re.Pattern[str]) -> str | None:
        m = pattern.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group(0)

    # ---------------------------------------------------------------- values
    def value(self, depth: int = 0) -> Any:
        if depth > 20:
            raise self.fail("values nest too deeply")
        self.ws()
        c = self.peek()
        if c == "$":
            return self.ref()
        if c in "\"'":
            return translate_text(self.string(), self.refs)
        if c == "[":
            return self.items("]", depth)
        if c == "{":
            return self.mapping(depth)
        number = self.match(_NUMBER)
        if number is not None:
            return json.loads(number)
        word = self.match(IDENT)
        if word in _LITERALS:
            return _LITERALS[word]
        hint = f"{word!r} is not a value; quote text" if word else "expected a value"
        raise self.fail(hint + ' ("text"), or use a number, true, false, null, [..], {..} or a reference $N')

    def ref(self) -> str:
        self.pos += 1  # "$"
        step = self.match(_INT)
        if step is None:
            raise self.fail("a reference is $ followed by a step number, e.g. $2 or $2.field")
        self.refs.add(int(step))
        return wire_ref(int(step), self.match(_PATH) or "")

    def string(self) -> str:
        quote, start = self.peek(), self.pos
        i = start + 1
        while i < len(self.text) and self.text[i] != quote:
            i += 2 if self.text[i] == "\\" else 1
        if i >= len(self.text):
            raise self.fail("this text is never closed; close it with " + quote + " on the same line")
        self.pos = i + 1
        raw = self.text[start:self.pos]
        try:  # Python-style single quotes are what small models write most often after JSON ones
            value = json.loads(raw) if quote == '"' else ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            self.pos = start
            raise self.fail("this text has an invalid escape sequence") from None
        return str(value)

    def items(self, close: str, depth: int) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        self.ws()
        while self.peek() != close:
            out.append(self.value(depth + 1))
            self.ws()
            if self.peek() == ",":
                self.pos += 1
                self.ws()
            elif self.peek() != close:
                raise self.fail(f"expected ',' or {close!r} in the list")
        self.pos += 1
        return out

    def mapping(self, depth: int) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        self.ws()
        while self.peek() != "}":
            if self.peek() not in "\"'" or not self.peek():
                raise self.fail('expected a quoted key in the object, e.g. {"key": value}')
            key = self.string()  # keys are names, never references
            self.expect(":", "after the key")
            out[key] = self.value(depth + 1)
            self.ws()
            if self.peek() == ",":
                self.pos += 1
                self.ws()
            elif self.peek() != "}":
                raise self.fail("expected ',' or '}' in the object")
        self.pos += 1
        return out

    # ---------------------------------------------------------------- the call
    def arguments(self) -> tuple[list[Any], dict[str, Any]]:
        positional: list[Any] = []
        named: dict[str, Any] = {}
        self.ws()
        while self.peek() != ")":
            if not self.peek():
                raise self.fail("the call is never closed; end it with ')' on the same line")
            start = self.pos
            key = self.match(IDENT) or (self.string() if self.peek() in "\"'" else None)
            self.ws()
            if key is not None and self.peek() == "=":
                self.pos += 1
                if key in named:
                    raise self.fail(f"argument {key!r} is given twice")
                named[key] = self.value()
            else:
                self.pos = start
                if named:
                    raise self.fail("a positional argument cannot follow a named one")
                positional.append(self.value())
            self.ws()
            if self.peek() == ",":
                self.pos += 1
                self.ws()
            elif not self.peek():
                raise self.fail("the call is never closed; end it with ')' on the same line")
            elif self.peek() != ")":
                raise self.fail("expected ',' or ')' after the argument")
        self.pos += 1
        return positional, named

    def after(self) -> set[int]:
        """``after $1, $3``: dependencies whose values the step does not use (an ordering constraint)."""
        deps: set[int] = set()
        while True:
            self.ws()
            if self.peek() != "$":
                raise self.fail("'after' lists the steps to wait for, e.g. after $1, $3")
            self.pos += 1
            step = self.match(_INT)
            if step is None:
                raise self.fail("'after' takes step numbers, e.g. after $1, $3")
            deps.add(int(step))
            self.ws()
            if self.peek() != ",":
                return deps
            self.pos += 1


def parse_terse_line(text: str, line_no: int, params: Mapping[str, Sequence[str]] | None = None) -> PlanStep:
    """One ``N. tool(param=value, ...) [after $a, $b] [# description]`` line as a wire ``PlanStep``.
    ``params`` (tool → parameter names in order) lets arguments be given by position: ``lookup("Rome")``."""
    line = _Line(text.strip(), line_no)
    step = line.match(_INT)
    if step is None:
        raise line.fail("a step line starts with its number, e.g. 1.")
    line.expect(".", "after the step number")
    line.ws()
    name = line.match(_NAME)
    if name is None:
        raise line.fail("expected a tool name (or think) after the step number")
    line.expect("(", f"after {name}: call it as {name}(param=value, ...)")
    positional, named = line.arguments()
    line.ws()
    extra: set[int] = set()
    if line.match(re.compile(r"after\b")):
        extra = line.after()
        line.ws()
    comment: str | None = None
    if line.peek() == "#":
        comment = line.text[line.pos + 1:].strip()
    elif line.peek():
        raise line.fail("unexpected text after the call; put a description after '#'")
    if positional and name != THINK:
        named = _bind(line, name, positional, named, (params or {}).get(name))
        positional = []
    return _step(line, int(step), name, positional, named, extra, comment)


def _bind(line: _Line, name: str, positional: list[Any], named: dict[str, Any],
          order: Sequence[str] | None) -> dict[str, Any]:
    """Positional arguments named by the tool's parameter order (the planner knows it; a bare parser does not)."""
    if order is None:
        raise line.fail(f"name each argument of {name}: {name}(param=value, ...)")
    if len(positional) > len(order):
        raise line.fail(f"{name} takes {len(order)} argument(s) ({', '.join(order) or 'none'}), "
                        f"{len(positional)} were given")
    bound = dict(zip(order, positional))
    twice = sorted(set(bound) & set(named))
    if twice:
        raise line.fail(f"argument {twice[0]!r} of {name} is given by position and by name")
    return {**bound, **named}


def _step(line: _Line, step_id: int, name: str, positional: list[Any], named: dict[str, Any],
          extra: set[int], comment: str | None) -> PlanStep:
    if name == THINK:
        if len(positional) != 1 or not isinstance(positional[0], str):
            raise line.fail('think takes the question as one quoted text: think("which is larger, $1 or $2?")')
        description: str = positional[0]
        tool_name: str | None = None
    else:
        if positional:
            raise line.fail(f"name each argument of {name}: {name}(param=value, ...)")
        tool_name = name
        description = comment if comment is not None else describe_call(name, named)
    # The wire refs decide the dependencies (also a wire spelling the model wrote inside terse text). A tool
    # step's description is a comment: what it mentions is not an input.
    deps = line.refs | extra | set(references(named))
    if tool_name is None:
        deps |= set(references(description))
    try:
        # A step never waits for itself (as in the JSON form, ``planning.stream_json``); a use of its
        # own result stays in its arguments, where validation refuses it.
        return PlanStep(step_id=step_id, description=description, tool_name=tool_name, tool_input=named,
                        depends_on=sorted(deps - {step_id}))
    except pydantic.ValidationError as exc:
        raise line.fail(describe_validation_error(exc)) from None
