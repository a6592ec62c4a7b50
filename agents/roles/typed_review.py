"""The reviewer under a typed output (``agents.outputs``): its accept's answer is written as the output type's JSON
and validated by code; an answer that does not validate gets the one repair round every role call has
(``agents.roles.json_call``), with the validation error, and then ``InvalidOutputError`` (the task escalates).

In the JSON reply form the reply schema's ``answer`` becomes the output's schema, so the server (or the embedded
model's grammar) holds the reviewer to it. In the terse form, on a backend with native tool calls, an accept's answer
is the arguments of a final ``final_result`` tool call whose parameters are the output's schema
(``agents.roles.output_tool``); elsewhere (no tool calls, the server rejected them, a grammar-held reply) the answer
line is the JSON text, which the prompt's last message asks for in one added line with the schema.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from agents.errors import InvalidLLMOutputError, InvalidOutputError
from agents.llm.base import LLM
from agents.outputs import OutputInvalid, OutputSpec, schema_line, validate_output
from agents.roles.output_tool import OutputToolLLM, offers_tools
from planning.errors import AnswerMissingError, PlanningError
from planning.models import Reflection
from planning.parse import parse_reflection

__all__ = ["typed_call", "typed_review"]

T = TypeVar("T")

_MISMATCH = "the answer does not match the task's output type: "


def typed_review(messages: list[dict[str, Any]], schema: dict[str, Any] | None, output: OutputSpec | None,
                 llm: LLM) -> tuple[list[dict[str, Any]], dict[str, Any] | None, Callable[[str], Reflection], LLM]:
    """The review call's messages, reply schema, parser and model under ``output`` (all unchanged without one): in
    the terse form the model is an ``OutputToolLLM`` where ``llm`` takes tools."""
    if output is None:
        return messages, schema, parse_reflection, llm
    if schema is not None:
        answer = json.loads(json.dumps(output.json_schema))
        schema.setdefault("$defs", {}).update(answer.pop("$defs", {}))  # "#/$defs/..." resolves at the root
        schema["properties"]["answer"] = {"anyOf": [answer, {"type": "null"}]}  # a retry or a replan has none
    else:
        line = schema_line(output)
        if offers_tools(llm):
            tooled = OutputToolLLM(llm, output)
            llm, line = tooled, tooled.line  # swapped back for the schema line if the server turns the tool down
        last = messages[-1]
        messages = [*messages[:-1], {**last, "content": f"{last['content']}\n{line}"}]
    return messages, schema, lambda raw: _parse(raw, output), llm


def _parse(raw: str, output: OutputSpec) -> Reflection:
    # Under a type an accept must carry the value: without one the engine would fall back to a step's output, which
    # was never validated. A missing answer is an output that is not there: the repair round, then the escalation.
    try:
        reflection = parse_reflection(_answer_as_text(raw))
    except AnswerMissingError:
        reflection = None
    if reflection is None or (reflection.action == "accept" and reflection.answer is None):
        raise PlanningError(f"{_MISMATCH}the accept gives no answer; write the answer as JSON matching the schema")
    if reflection.action == "accept":  # only an accept's answer is the output
        try:
            validate_output(output, reflection.answer)
        except OutputInvalid as exc:
            raise PlanningError(f"{_MISMATCH}{exc}; write the answer as JSON matching the schema") from None
    return reflection


def _answer_as_text(raw: str) -> str:
    """A JSON reply whose answer is the output's JSON value (the schema asked for it), with that answer as text:
    ``Reflection.answer`` is the answer's text, whatever its type."""
    try:
        data = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(data, dict) and "answer" in data and not isinstance(data["answer"], str | None):
        return json.dumps({**data, "answer": json.dumps(data["answer"])})
    return raw


async def typed_call(call: Awaitable[T]) -> T:
    """``call``, with an output that stayed invalid after its repair raised as ``InvalidOutputError``."""
    try:
        return await call
    except InvalidLLMOutputError as exc:
        if not exc.error.startswith(_MISMATCH):
            raise
        raise InvalidOutputError(exc.role, exc.error.removeprefix(_MISMATCH), exc.raw).with_spend(exc.spend) from None
