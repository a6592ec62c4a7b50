"""Read a role's reply out of what real models emit: code fences, prose around the object, trailing
commas, Python literals (the lenient reading itself is ``planning.lenient``). Tolerant about form, strict about meaning: the result is always a validated
wire model, and every failure is one ``LLMOutputError`` whose message is written for the repair round.

    >>> parse_router_decision('Sure! ```json\\n{"route": "direct", "confidence": 0.9, "answer": "4",}\\n```').answer
    '4'
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import pydantic

from planning.errors import LLMOutputError
from planning.lenient import describe_validation_error, extract_json_object, loads_lenient, normalise_step
from planning.models import ClassifiedWord, Plan, Reflection, RouterDecision
from planning.stream import StreamingPlanParser
from planning.terse_reflection import find_verdict_line, parse_terse_reflection
from planning.terse_route import find_route_line, parse_terse_route
from planning.tool_inputs import step_forms

__all__ = [
    "describe_validation_error",
    "drop_titles",
    "extract_json_object",
    "inline_refs",
    "json_schema_for",
    "classified_word_schema",
    "parse_classified_word",
    "router_schema",
    "loads_lenient",
    "normalise_step",
    "parse_model",
    "parse_plan",
    "parse_reflection",
    "parse_router_decision",
    "plan_schema",
    "reflection_schema",
]

M = TypeVar("M", bound=pydantic.BaseModel)


def parse_model(text: str, model_cls: type[M]) -> M:
    """Extract the JSON object and validate it as ``model_cls``; errors become LLMOutputError."""
    if model_cls is Plan:
        return parse_plan(text)  # type: ignore[return-value]
    data = extract_json_object(text)
    try:
        return model_cls.model_validate(data)
    except pydantic.ValidationError as exc:
        raise LLMOutputError(f"Your JSON does not match the required format: {describe_validation_error(exc)}. "
                             "Return only one JSON object with the required fields.", raw=text) from None


def parse_router_decision(text: str) -> RouterDecision:
    """The router's reply, in the JSON wire form or the terse one-line form (``planning.terse_route``)."""
    if isinstance(text, str) and find_route_line(text):
        return parse_terse_route(text)
    return parse_model(text, RouterDecision)


def parse_reflection(text: str, answer_given: bool = False) -> Reflection:
    """The reflector's reply, in the JSON wire form or the terse form (``planning.terse_reflection``),
    whichever the model wrote: a line starting like ``accept 5 5 5`` makes it terse. ``answer_given``: the
    review was shown an answer to confirm, so a terse accept may leave the answer out."""
    if isinstance(text, str) and find_verdict_line(text) is not None:
        return parse_terse_reflection(text, answer_given=answer_given)
    return parse_model(text, Reflection)


def parse_plan(text: str) -> Plan:
    """A whole plan; the same code path as streaming (``StreamingPlanParser``), so a plan parses to the
    same steps whether it arrived in one piece or in chunks. A bare array of steps is accepted."""
    parser = StreamingPlanParser()
    steps = parser.feed(text)
    steps += parser.close()
    return Plan(steps=steps)


def json_schema_for(model_cls: type[pydantic.BaseModel]) -> dict[str, Any]:
    """The wire model's JSON Schema for constrained decoding: ``$ref``s inlined, titles dropped. A fresh copy
    each call (callers narrow it in place)."""
    return _fresh(_schema_of(model_cls))


def _fresh(node: Any) -> Any:
    """A copy of a JSON tree (dicts and lists copied, leaves shared: they are immutable): ~4x faster than
    ``copy.deepcopy``, which a role call otherwise pays for its cached reply schema."""
    if type(node) is dict:
        return {k: _fresh(v) for k, v in node.items()}
    if type(node) is list:
        return [_fresh(v) for v in node]
    return node


@functools.lru_cache(maxsize=64)
def _schema_of(model_cls: type[pydantic.BaseModel]) -> dict[str, Any]:
    # Every role call sends its reply schema; generating it from the model took ~40% of a one-step task's CPU.
    return drop_titles(inline_refs(model_cls.model_json_schema()))




def plan_schema(tools: Mapping[str, Mapping[str, Any]] | Iterable[str]) -> dict[str, Any]:
    """The plan schema for these tools: given their parameter schemas (name → JSON Schema), each step is a reasoning
    step or one tool's call with that tool's own arguments (``planning.tool_inputs``); given names only,
    ``tool_name`` is limited to them (or null for a reasoning step).

    Grammar-constrained servers then cannot emit a tool that does not exist: the prompt regression set
    measured qwen2.5-coder-1.5b copying the prompt example's tool name in 13 of 15 invalid plans (8/23 valid);
    with the names enumerated, 22/23 were valid. Validation still checks everything (servers without
    constrained decoding ignore the schema).

        >>> list(plan_schema(["lookup"])["properties"])
        ['steps']
        >>> schema = plan_schema({"lookup": {"properties": {"city": {"type": "string"}}}})
        >>> len(schema["properties"]["steps"]["items"]["anyOf"])  # a reasoning step; lookup with, without a description
        3
    """
    if isinstance(tools, Mapping):
        # Not sorted: the keys' order is the order the grammar makes the model write the arguments in, the
        # tool's own order, as the catalog shows it.
        key = json.dumps(tools, default=str)
        return _fresh(_plan_schema_with_inputs(key))
    return _fresh(_plan_schema(tuple(sorted(set(tools)))))


@functools.lru_cache(maxsize=64)
def _plan_schema(names: tuple[str, ...]) -> dict[str, Any]:
    schema = json_schema_for(Plan)
    if names:
        step = schema["properties"]["steps"]["items"]
        step["properties"]["tool_name"] = {"anyOf": [{"enum": list(names), "type": "string"}, {"type": "null"}],
                                           "default": None}
    return _bounded(schema)


@functools.lru_cache(maxsize=64)
def _plan_schema_with_inputs(tools_json: str) -> dict[str, Any]:
    # Keyed by the schemas' JSON: a planner asks once per plan, and the forms for a few dozen tools take ~1 ms.
    schema = json_schema_for(Plan)
    schema["properties"]["steps"]["items"] = {"anyOf": step_forms(json.loads(tools_json))}
    return _bounded(schema)


def _bounded(schema: dict[str, Any]) -> dict[str, Any]:
    # A plan has at least one step (validation says so too): with two examples in a prompt, the 1.5B model
    # answered comparisons with {"steps": []} until the grammar ruled it out.
    schema["properties"]["steps"]["minItems"] = 1
    return schema


ROUTE_REASON_CHARS = 80


def parse_classified_word(text: str) -> ClassifiedWord:
    """A classifying ``clarify_check``'s reply: the word (stripped; empty is None) and its kind."""
    reply = parse_model(text, ClassifiedWord)
    word = reply.word.strip() if reply.word is not None else None
    return ClassifiedWord(word=word or None, kind=reply.kind if word else None)


def classified_word_schema() -> dict[str, Any]:
    """Both fields required: a reply names its word and, in the closed set of kinds, what the word is."""
    schema = json_schema_for(ClassifiedWord)
    schema["required"] = ["word", "kind"]
    return schema


def router_schema() -> dict[str, Any]:
    """The router decision's schema with the reason capped at ``ROUTE_REASON_CHARS``: nothing reads more of it,
    and a small model decoding a few tokens a second wrote 45 tokens of reason before the planner could start."""
    return _fresh(_router_schema())


@functools.lru_cache(maxsize=1)
def _router_schema() -> dict[str, Any]:
    schema = json_schema_for(RouterDecision)
    schema["properties"]["reason"]["maxLength"] = ROUTE_REASON_CHARS
    return schema


def reflection_schema() -> dict[str, Any]:
    """The reflection schema with each score an explicit enum 1-5: llama.cpp's grammar builder ignores
    integer ``minimum``/``maximum`` (llama-cpp-python 0.3.36), and the 1.5B model wrote ``correctness: 0``."""
    return _fresh(_reflection_schema())


@functools.lru_cache(maxsize=1)
def _reflection_schema() -> dict[str, Any]:
    schema = json_schema_for(Reflection)
    for score in schema["properties"]["scores"]["properties"].values():
        score.pop("minimum", None)
        score.pop("maximum", None)
        score["enum"] = [1, 2, 3, 4, 5]
    return schema


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace ``{"$ref": "#/$defs/X"}`` with the definition. Small models and some servers' grammar
    builders handle flat schemas better. Recursive definitions keep their ``$defs``."""
    defs = schema.get("$defs", {})

    class _Recursive(Exception):
        pass

    def resolve(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                key = ref.removeprefix("#/$defs/")
                if key in seen or key not in defs:
                    raise _Recursive
                return {**resolve(defs[key], seen | {key}), **{k: v for k, v in node.items() if k != "$ref"}}
            return {k: resolve(v, seen) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(v, seen) for v in node]
        return node

    try:
        return resolve(schema, frozenset())
    except _Recursive:
        return schema


def drop_titles(node: Any, *, in_properties: bool = False) -> Any:
    """Remove pydantic's ``title`` noise — except where ``title`` is the NAME of a property."""
    if isinstance(node, dict):
        return {k: drop_titles(v, in_properties=(k == "properties" and not in_properties))
                for k, v in node.items() if in_properties or k != "title"}
    if isinstance(node, list):
        return [drop_titles(v) for v in node]
    return node
