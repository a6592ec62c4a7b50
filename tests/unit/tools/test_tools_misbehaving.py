"""Regressions of issue 19 in tool dispatch (no Ray): a tool that ends its process, a flood of output, an
output that is not data — each becomes a clear step outcome instead of a hung or lying executor."""

from __future__ import annotations

import asyncio
import socket
import sys

import pytest

from agents.tools import ToolDispatcher, ToolRegistry, tool
from agents.tools.errors import PermanentToolError
from agents.tools.output import UnserializableOutputError, serialize_output, truncate_output


@tool
def exits() -> str:
    """Ends the process (a bug in a tool)."""
    sys.exit(3)


@tool
async def exits_async() -> str:
    """Ends the process from a coroutine."""
    sys.exit("bye")


@tool
def opens_socket() -> object:
    """Returns a live socket (not data)."""
    return socket.socket()


def _call(fn, **args):
    # With a timeout, as the executor calls it: asyncio.wait_for runs the call as a task of its own, and a task
    # re-raises SystemExit out of the event loop (what hung the executor actor).
    return asyncio.run(ToolDispatcher(ToolRegistry([fn]), max_attempts=3).call(fn.name, args, timeout_s=30))


@pytest.mark.parametrize(("fn", "code"), [(exits, "3"), (exits_async, "'bye'")])
def test_sys_exit_in_a_tool_is_a_permanent_tool_error(fn, code):
    with pytest.raises(PermanentToolError) as info:
        _call(fn)
    assert f"called sys.exit({code})" in str(info.value) and info.value.attempts == 1


def test_a_socket_output_is_a_clear_tool_error_not_its_repr():
    with pytest.raises(PermanentToolError, match="returned a socket, which is not data"):
        _call(opens_socket)


def test_serialize_output_keeps_text_like_values_and_rejects_objects():
    import datetime
    import decimal

    assert serialize_output([datetime.date(2024, 1, 2), decimal.Decimal("1.50")]) == ["2024-01-02", "1.50"]
    with pytest.raises(UnserializableOutputError):
        serialize_output({"handle": object()})


def test_a_huge_output_is_cut_without_counting_all_of_it():
    text, cut = truncate_output("x" * 50_000_000, 100)
    assert cut and text.endswith("[output truncated by tetrarch: showing 100 tokens of 50000000 characters]")
    assert len(text) < 2_000


def test_secret_params_as_a_str_is_one_parameter_name():
    @tool(secret_params="token")
    def call_api(token: str, query: str) -> str:
        """Calls an API.

        Args:
            token: The API token.
            query: What to ask.
        """
        return query

    assert call_api.spec.secret_params == ("token",)


@pytest.mark.parametrize(("annotation", "default"), [(int, "all"), (str, None), (list[int], "1,2")])
def test_a_default_that_contradicts_its_type_hint_is_rejected_at_decoration(annotation, default):
    from agents.tools.errors import ToolDefinitionError

    def fetch(limit=default) -> str:
        """Fetches rows.

        Args:
            limit: How many.
        """
        return str(limit)

    fetch.__annotations__ = {"limit": annotation, "return": str}
    with pytest.raises(ToolDefinitionError, match=r"parameter 'limit' defaults to .*, which is not a"):
        tool(fetch)


def test_defaults_that_fit_their_hint_still_work():
    @tool
    def fetch(limit: int = 10, name: str | None = None, ratio: float = 1) -> str:
        """Fetches rows.

        Args:
            limit: How many.
            name: Optional name.
            ratio: A ratio.
        """
        return f"{limit} {name} {ratio}"

    assert _call(fetch).output == "10 None 1"
