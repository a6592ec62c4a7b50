"""``@tool``: turn a typed, documented function into a Tool an LLM can call.

    >>> @tool(permission="read", timeout_s=5)
    ... def population(city: str) -> float:
    ...     '''Population of a city in millions.
    ...
    ...     Args:
    ...         city: English city name.
    ...     '''
    ...     return {"paris": 2.1}[city.lower()]
    >>> population("Paris"), population.spec.parameters["required"]
    (2.1, ['city'])
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import sys
from collections.abc import Callable, Mapping
from typing import Any, Literal, overload

import pydantic

from agents.tools.errors import ToolArgumentError, ToolDefinitionError
from agents.tools.schema import (
    ParameterModel,
    build_parameter_model,
    parameter_hints,
    parameters_schema,
    parse_docstring,
    return_kind,
)

__all__ = ["GeneratorToolError", "Permission", "Tool", "ToolSpec", "tool"]

Permission = Literal["read", "write", "admin"]


class ToolSpec(pydantic.BaseModel):
    """What the runtime and the LLM know about a tool. Plain data: it crosses actor boundaries."""

    model_config = pydantic.ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]
    permission: Permission = "read"
    requires_confirmation: bool = False
    timeout_s: float | None = None
    idempotent: bool = True
    secret_params: tuple[str, ...] = ()
    cpu_heavy: bool = False
    key_param: str | None = None
    """The parameter that receives the step's idempotency key (hidden from the model); None: the tool takes none."""
    returns: str | None = None
    """What the tool returns, for the planner: the docstring's ``Returns:`` line, else the annotation's kind
    ("number", "text", "list", "object"); None: unknown (e.g. an MCP tool that does not say)."""


class Tool:
    """A callable function plus its ToolSpec. ``tool_obj(...)`` calls the function directly;
    ``await tool_obj.invoke(args)`` validates LLM-produced arguments first."""

    def __init__(self, fn: Callable[..., Any], spec: ToolSpec, hints: dict[str, Any] | None = None) -> None:
        self.fn = fn
        self.spec = spec
        self._hints = hints
        self._model: type[ParameterModel] | None = None
        functools.update_wrapper(self, fn)
        self._qualname = fn.__qualname__.removesuffix(".__wrapped__")

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.spec.name!r}, permission={self.spec.permission!r})"

    def _argument_model(self) -> type[ParameterModel]:
        # Rebuilt lazily after unpickling: generated pydantic classes do not pickle by reference.
        if self._model is None:
            self._model = build_parameter_model(self.fn, self.spec.name, parse_docstring(self.fn.__doc__),
                                                self._hints, exclude=frozenset({self.spec.key_param} - {None}))
        return self._model

    def validate_arguments(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Check LLM-produced arguments against the schema; returns the coerced keyword arguments.

        Raises ToolArgumentError listing every problem, phrased so the LLM can fix the call.
        """
        if not isinstance(args, Mapping):
            raise ToolArgumentError(f"tool {self.name!r} takes a JSON object of arguments, got "
                                    f"{type(args).__name__}", tool_name=self.name)
        model = self._argument_model()
        try:
            parsed = model.model_validate(dict(args))
        except pydantic.ValidationError as exc:
            raise ToolArgumentError(self._describe(exc, args), tool_name=self.name) from None
        return {name: getattr(parsed, name) for name in model.model_fields}

    def _describe(self, exc: pydantic.ValidationError, args: Mapping[str, Any]) -> str:
        expected = ", ".join(self._argument_model().model_fields) or "no arguments"
        problems: list[str] = []
        for err in exc.errors(include_url=False):
            loc = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                problems.append(f"unknown argument {loc!r} (expected: {expected})")
            elif err["type"] == "missing" and len(err["loc"]) == 1:
                problems.append(f"missing required argument {loc!r}")
            else:
                problems.append(f"argument {loc!r}: {err['msg']}")
        return f"invalid arguments for tool {self.name!r}: " + "; ".join(problems)

    async def invoke(self, args: Mapping[str, Any]) -> Any:
        """Validate, then run: coroutines are awaited, blocking functions run in a worker thread so the
        executor's event loop keeps serving other steps."""
        kwargs = self.validate_arguments(args)
        if self.is_async:
            return await self.fn(**kwargs)
        return await asyncio.to_thread(self.fn, **kwargs)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_tool, (self._picklable_fn(), self.spec, self._hints))

    def _picklable_fn(self) -> Callable[..., Any]:
        # `@tool` rebinds the module name to the Tool, so plain pickle would not find the function under
        # its own qualname. Point the qualname at `<name>.__wrapped__` (functools sets it on the Tool),
        # which pickle and cloudpickle resolve by reference; nested functions go by value (cloudpickle).
        module = sys.modules.get(self.fn.__module__)
        if module is not None and "." not in self._qualname and "<" not in self._qualname:
            target = getattr(module, self._qualname, None)
            if target is self:
                self.fn.__qualname__ = f"{self._qualname}.__wrapped__"
            elif target is self.fn:
                self.fn.__qualname__ = self._qualname
        return self.fn


class GeneratorToolError(ToolDefinitionError, TypeError):
    """``@tool`` on a generator function (``yield``, sync or async): a step's output is one value, which a
    generator never hands over; refused when the tool is declared rather than when a plan first runs it."""


def _generator_kind(fn: Callable[..., Any]) -> str | None:
    """"generator" / "async generator" when calling ``fn`` (a function, a ``partial`` of one, or an object whose
    ``__call__`` is one) makes a generator; else None."""
    for target in (fn, getattr(fn, "func", None), getattr(type(fn), "__call__", None)):
        if inspect.isasyncgenfunction(target):
            return "async generator"
        if inspect.isgeneratorfunction(target):
            return "generator"
    return None


def _rebuild_tool(fn: Callable[..., Any], spec: ToolSpec, hints: dict[str, Any] | None = None) -> Tool:
    return Tool(fn, spec, hints)


def _make_tool(fn: Callable[..., Any], *, permission: Permission, requires_confirmation: bool,
               timeout_s: float | None, idempotent: bool | None, name: str | None,
               secret_params: tuple[str, ...], cpu_heavy: bool, key_param: str | None = None) -> Tool:
    if isinstance(fn, Tool):
        fn = fn.fn
    if not callable(fn):
        raise ToolDefinitionError(f"@tool needs a function, got {type(fn).__name__}")
    tool_name = name or getattr(fn, "__name__", "")
    if (kind := _generator_kind(fn)) is not None:
        collect = "[item async for item in ...]" if kind == "async generator" else "list(...)"
        raise GeneratorToolError(f"tool {tool_name or fn!r} is {'an' if kind[0] == 'a' else 'a'} {kind} function "
                                 "(it yields): a tool returns one value that the plan's next steps use; collect the "
                                 f"items and return them, e.g. return {collect}", tool_name=tool_name or None)
    if not tool_name.isidentifier():
        raise ToolDefinitionError(f"tool name {tool_name!r} must be an identifier; pass name='...'")
    if permission not in ("read", "write", "admin"):
        raise ToolDefinitionError(f"tool {tool_name!r}: permission must be 'read', 'write' or 'admin', "
                                  f"not {permission!r}", tool_name=tool_name)
    if timeout_s is not None and timeout_s <= 0:
        raise ToolDefinitionError(f"tool {tool_name!r}: timeout_s must be positive", tool_name=tool_name)
    docs = parse_docstring(fn.__doc__)
    if not docs.summary:
        raise ToolDefinitionError(f"tool {tool_name!r} has no docstring; add one: the LLM chooses tools by it",
                                  tool_name=tool_name)
    hints = parameter_hints(fn, tool_name)
    if key_param is not None and key_param not in inspect.signature(fn).parameters:
        raise ToolDefinitionError(f"tool {tool_name!r}: key_param {key_param!r} is not a parameter of the function",
                                  tool_name=tool_name)
    model = build_parameter_model(fn, tool_name, docs, hints, exclude=frozenset({key_param} - {None}))
    unknown_secrets = set(secret_params) - set(model.model_fields)
    if unknown_secrets:
        raise ToolDefinitionError(f"tool {tool_name!r}: secret_params {sorted(unknown_secrets)} are not "
                                  "parameters of the function", tool_name=tool_name)
    spec = ToolSpec(name=tool_name, description=docs.summary, parameters=parameters_schema(model),
                    permission=permission, requires_confirmation=requires_confirmation, timeout_s=timeout_s,
                    idempotent=(permission == "read") if idempotent is None else idempotent,
                    secret_params=tuple(secret_params), cpu_heavy=cpu_heavy, key_param=key_param,
                    returns=docs.returns or return_kind(fn))
    made = Tool(fn, spec, hints)
    made._model = model
    return made


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(*, permission: Permission = "read", requires_confirmation: bool = False, timeout_s: float | None = None,
         idempotent: bool | None = None, name: str | None = None, secret_params: tuple[str, ...] | str = (),
         cpu_heavy: bool = False) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(fn: Callable[..., Any] | None = None, /, *, permission: Permission = "read",
         requires_confirmation: bool = False, timeout_s: float | None = None, idempotent: bool | None = None,
         name: str | None = None, secret_params: tuple[str, ...] | str = (), cpu_heavy: bool = False,
         key_param: str | None = None) -> Any:
    """Declare a tool. Usable bare (``@tool``) or with options (``@tool(permission="write")``).

    ``permission``: read | write | admin. ``requires_confirmation``: the call escalates for a human's
    approval before it runs. ``idempotent`` defaults to True for read tools and False otherwise;
    non-idempotent calls go through the idempotency journal so a retry or a resume never applies them
    twice. ``secret_params`` (parameter names; one name may be given as a str) are redacted from events and
    traces. ``cpu_heavy`` tools may run as Ray tasks with their own CPU. ``key_param`` names a parameter (hidden from the model) that receives the
    step's idempotency key, the same on every retry and resume of the call: pass it to the outside system
    (an ``Idempotency-Key`` header, a unique request id) and the write is exactly-once end to end, even for
    the step in flight when its runner died.

    >>> @tool(permission="write", key_param="request_id")
    ... def charge(amount: int, request_id: str = "") -> str:
    ...     '''Charge an amount once.
    ...
    ...     Args:
    ...         amount: Cents.
    ...     '''
    ...     return request_id
    >>> charge.spec.key_param, "request_id" in charge.spec.parameters["properties"]
    ('request_id', False)
    """
    # A str is one parameter's name (tuple("token") would be five one-letter names, rejected letter by letter).
    secrets = (secret_params,) if isinstance(secret_params, str) else tuple(secret_params)
    options = {"permission": permission, "requires_confirmation": requires_confirmation, "timeout_s": timeout_s,
               "idempotent": idempotent, "name": name, "secret_params": secrets, "cpu_heavy": cpu_heavy,
               "key_param": key_param}
    if fn is not None:
        return _make_tool(fn, **options)  # type: ignore[arg-type]
    return lambda f: _make_tool(f, **options)  # type: ignore[arg-type]
