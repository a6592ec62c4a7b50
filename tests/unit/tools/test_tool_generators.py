"""Issue 60: ``@tool`` on a generator function was accepted and failed only when a plan first ran it. Now the
declaration itself raises a ``TypeError`` subclass saying to return the collected items."""

from __future__ import annotations

import functools
import pickle

import pytest

from agents.tools import resolve_tools, tool
from agents.tools.decorator import GeneratorToolError
from agents.tools.errors import ToolDefinitionError


def cities(prefix: str):
    """Cities starting with a prefix.

    Args:
        prefix: First letters.
    """
    yield from (c for c in ("Paris", "Rome") if c.startswith(prefix))


async def stream_cities(prefix: str):
    """Cities starting with a prefix, one at a time.

    Args:
        prefix: First letters.
    """
    for c in ("Paris", "Rome"):
        yield c


class Lister:
    def __call__(self, prefix: str):
        """Cities starting with a prefix.

        Args:
            prefix: First letters.
        """
        yield prefix


@pytest.mark.parametrize(("fn", "said"), [
    (cities, "tool 'cities' is a generator function \\(it yields\\)"),
    (stream_cities, "tool 'stream_cities' is an async generator function \\(it yields\\)"),
    (functools.partial(cities, "P"), "is a generator function"),
    (Lister(), "is a generator function"),
])
def test_a_generator_tool_is_refused_when_declared(fn, said):
    with pytest.raises(GeneratorToolError, match=said) as caught:
        tool(fn)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ToolDefinitionError)
    assert "collect the items and return them" in str(caught.value)
    back = pickle.loads(pickle.dumps(caught.value))
    assert type(back) is GeneratorToolError and str(back) == str(caught.value)


def test_with_options_and_as_a_plain_function_in_tools():
    with pytest.raises(GeneratorToolError, match=r"return \[item async for item in \.\.\.\]"):
        tool(permission="read", timeout_s=5)(stream_cities)
    with pytest.raises(GeneratorToolError):
        resolve_tools([cities])


def test_a_function_returning_a_list_is_still_a_tool():
    @tool
    def city_list(prefix: str) -> list[str]:
        """Cities starting with a prefix.

        Args:
            prefix: First letters.
        """
        return list(cities(prefix))

    assert city_list("R") == ["Rome"]
