"""Every error a user can receive crosses Ray intact: pickled and unpickled it has the same type, the same
message and the same attributes (Ray pickles errors raised in actors). One closed tree under TetrarchError."""

import importlib
import inspect
import pickle
import typing

import pytest

from agents.errors import TetrarchError

MODULES = ["agents.errors", "agents.store.errors", "agents.tools.errors", "agents.llm.base",
           "agents.llm.local.errors", "agents.engine.budget"]


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def _sample(param: inspect.Parameter):
    hint = str(param.annotation)
    if "int" in hint and "str" not in hint:
        return 3
    if "float" in hint:
        return 1.5
    if "Sequence" in hint or "tuple" in hint or "list" in hint:
        return ("a", "b")
    if "Literal" in hint:
        return typing.get_args(param.annotation)[0] if typing.get_args(param.annotation) else "token_budget"
    if param.name == "cap":
        return "token_budget"
    return f"<{param.name}>"


def _instances():
    for name in MODULES:
        importlib.import_module(name)
    for cls in sorted(set(_all_subclasses(TetrarchError)), key=lambda c: (c.__module__, c.__qualname__)):
        params = [p for p in inspect.signature(cls.__init__).parameters.values()
                  if p.name != "self" and p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        args = [_sample(p) for p in params if p.kind is not p.KEYWORD_ONLY]
        kwargs = {p.name: _sample(p) for p in params if p.kind is p.KEYWORD_ONLY}
        try:
            yield pytest.param(cls(*args, **kwargs), id=f"{cls.__module__}.{cls.__qualname__}")
        except TypeError as exc:  # a constructor this sampler cannot feed: name it, do not skip silently
            raise AssertionError(f"cannot build {cls.__qualname__} for the round trip: {exc}") from exc


@pytest.mark.parametrize("error", list(_instances()))
def test_error_round_trips_through_pickle(error):
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error)
    assert str(back) == str(error)
    assert back.__dict__ == error.__dict__


def test_the_runtime_errors_join_the_tree():
    from agents.errors import BudgetExceeded, RoleUnavailableError
    from agents.llm.base import LLMError
    from agents.tools.errors import ToolError

    for cls in (LLMError, ToolError, BudgetExceeded, RoleUnavailableError):
        assert issubclass(cls, TetrarchError)


def test_unknown_task_message_is_not_wrapped_twice():
    from agents.errors import UnknownTaskError

    back = pickle.loads(pickle.dumps(UnknownTaskError("x")))
    assert str(back).count("no task") == 1 and back.task_id == "x"
