"""Typed outputs: ``orch.run(task, output_type=Model)`` gives ``result.output``, the answer validated as ``Model``.

Any type pydantic's ``TypeAdapter`` takes works: a pydantic model, a dataclass, a TypedDict, ``int``,
``list[str]``. The task records the type by import path (``module:qualname``) with its JSON schema
(``OutputSpec``), so a Ray Supervisor, the reviewer's actor and a task resumed from a new process rebuild it. A
type that cannot be imported by its path (a class defined inside a function) works in this process only; on Ray
it is refused at submit (``OutputTypeError``).

Example:
    >>> spec = output_spec(list[int], importable=True)
    >>> spec.type_path
    'list[int]'
    >>> validate_output(spec, "[1, 2]")
    [1, 2]
"""

from __future__ import annotations

import importlib
import json
import threading
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from agents.errors import UsageError

if typing.TYPE_CHECKING:
    from agents.results import TaskResult

__all__ = ["OutputSpec", "OutputTypeError", "OutputInvalid", "output_spec", "output_type_of", "validate_output",
           "output_json", "schema_spec", "typed_result"]

_LIVE: dict[str, Any] = {}
"""Types named in this process (also ones no import path reaches): the in-process runtime finds them here."""
_LOCK = threading.Lock()


class OutputTypeError(UsageError):
    """An ``output_type`` that cannot be used: not a type pydantic validates, or one another process cannot import."""


class OutputInvalid(ValueError):
    """The answer does not validate as the output type; the message names the field and what is wrong."""


class OutputSpec(BaseModel):
    """The output type as a task records it: its import path and its JSON schema."""

    model_config = ConfigDict(frozen=True)

    type_path: str
    json_schema: dict[str, Any]


def _path_of(tp: Any) -> str:
    if typing.get_origin(tp) is not None or not isinstance(tp, type):
        return repr(tp).replace("typing.", "")  # list[str], dict[str, int]: rebuilt by eval over builtins
    if tp.__module__ == "builtins":
        return tp.__qualname__
    return f"{tp.__module__}:{tp.__qualname__}"


SCHEMA_ONLY = "json-schema"
"""The ``type_path`` of an output given as a JSON schema alone (MCP's ``run_task``): validated as JSON data."""


def schema_spec(schema: Any) -> OutputSpec:
    """An output given by its JSON schema alone (a client with no Python type): the answer is JSON data valid
    under ``schema``."""
    import jsonschema  # the MCP SDK's dependency: only its server gives outputs this way

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except (jsonschema.SchemaError, TypeError, AttributeError) as exc:
        raise OutputTypeError(f"the output schema is not a JSON schema: {getattr(exc, 'message', exc)}") from None
    return OutputSpec(type_path=SCHEMA_ONLY, json_schema=schema)


def output_spec(tp: Any, *, importable: bool) -> OutputSpec:
    """The spec of ``tp``; ``importable=True`` (Ray, resume) also requires another process to rebuild it by path.
    An ``OutputSpec`` (``schema_spec``) is its own."""
    if isinstance(tp, OutputSpec):
        return tp
    try:
        schema = TypeAdapter(tp).json_schema()
    except Exception as exc:  # noqa: BLE001 - pydantic raises several kinds for a type it cannot handle
        raise OutputTypeError(f"output_type={tp!r} is not a type pydantic can validate ({exc}); use a pydantic "
                              "model, a dataclass, a TypedDict or a plain type such as int or list[str]") from None
    path = _path_of(tp)
    with _LOCK:
        _LIVE[path] = tp
    if importable:
        try:
            found = _import(path)
        except Exception:  # noqa: BLE001 - any failure means the same thing to the user
            found = None
        if found is not tp and _path_of(found) != path:
            raise OutputTypeError(f"output_type {path} cannot be imported by its path from another process (a Ray "
                                  "worker, or a resume from a new process): define it at the top level of a module "
                                  "the workers can import")
    return OutputSpec(type_path=path, json_schema=schema)


def _import(path: str) -> Any:
    if ":" not in path:
        return eval(path, {"__builtins__": __builtins__, **vars(typing)})  # noqa: S307 - a path we wrote ourselves
    module, qualname = path.split(":", 1)
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def output_type_of(spec: OutputSpec) -> Any:
    """The type ``spec`` names: the one named in this process, else imported by its path."""
    if spec.type_path == SCHEMA_ONLY:
        return Any
    with _LOCK:
        live = _LIVE.get(spec.type_path)
    if live is not None:
        return live
    try:
        tp = _import(spec.type_path)
    except Exception as exc:  # noqa: BLE001
        raise OutputTypeError(f"the task's output_type {spec.type_path} cannot be imported here ({exc}); make it "
                              "importable by that path in this process") from None
    with _LOCK:
        _LIVE[spec.type_path] = tp
    return tp


def _adapter(spec: OutputSpec) -> TypeAdapter[Any]:
    return TypeAdapter(output_type_of(spec))


def validate_output(spec: OutputSpec, answer: str) -> Any:
    """``answer`` (JSON text) as the output type; ``OutputInvalid`` names the first field that is wrong."""
    if spec.type_path == SCHEMA_ONLY:
        return _schema_valid(spec.json_schema, answer)
    text = answer.strip()
    try:
        return _adapter(spec).validate_json(text)
    except ValidationError as exc:
        if spec.json_schema.get("type") != "string" or text.startswith('"'):
            raise OutputInvalid(_describe(exc)) from None
    # A string output written bare: the JSON reply form's answer is the value itself (a JSON string arrives as its
    # text), and a terse answer line may hold the name without quotes. Either is the string.
    try:
        return _adapter(spec).validate_python(text)
    except ValidationError as exc:
        raise OutputInvalid(_describe(exc)) from None


def _schema_valid(schema: dict[str, Any], answer: str) -> Any:
    import jsonschema

    try:
        data = json.loads(answer)
    except ValueError as exc:
        raise OutputInvalid(f"the answer is not JSON: {exc}") from None
    error = jsonschema.exceptions.best_match(jsonschema.validators.validator_for(schema)(schema).iter_errors(data))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "the answer"
        raise OutputInvalid(f"field {where!r}: {error.message}")
    return data


def output_json(spec: OutputSpec, value: Any) -> Any:
    """The validated value as JSON data (what crosses to the caller's process, which validates it again)."""
    return _adapter(spec).dump_python(value, mode="json")


def _describe(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "the answer"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    if first.get("type") == "json_invalid":
        return f"the answer is not JSON: {first.get('msg')}"
    return f"field {where!r}: {first.get('msg')}{more}"


def schema_line(spec: OutputSpec) -> str:
    """The line the terse reviewer prompt gets: the answer is JSON matching the schema."""
    return ("The answer must be one line of JSON matching this JSON schema (no prose around it): "
            + json.dumps(spec.json_schema, separators=(",", ":")))


def typed_result(result: TaskResult, tp: Any = None) -> TaskResult:
    """``result`` with its ``output`` (JSON data from the Supervisor) validated into the type: ``tp`` when the caller
    submitted the task, else the one ``result.output_type`` names (left as JSON data if this process cannot
    import it)."""
    if result.output is None or result.output_type is None:
        return result
    if isinstance(tp, OutputSpec):
        tp = output_type_of(tp)
    if tp is None:
        try:
            tp = output_type_of(OutputSpec(type_path=result.output_type, json_schema={}))
        except OutputTypeError:
            return result
    return result.model_copy(update={"output": TypeAdapter(tp).validate_python(result.output)})
