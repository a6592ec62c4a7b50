from __future__ import annotations

import asyncio
import enum
import pickle
import random
import sys
from pathlib import Path
from typing import Literal

import pydantic
import pytest
from ray import cloudpickle
from typing_extensions import TypedDict

from agents.tools import (
    MemoryJournal,
    PermanentToolError,
    ToolArgumentError,
    ToolDefinitionError,
    ToolDispatcher,
    ToolPermissionError,
    ToolRegistry,
    ToolTimeoutError,
    TransientToolError,
    UnknownToolError,
    idempotency_key,
    tool,
)
from agents.tools.dispatch import backoff_delay, classify_exception
from agents.tools.output import serialize_output, truncate_output
from agents.tools.schema import parse_docstring

sys.path.insert(0, str(Path(__file__).parent))
import _sample_tools


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(pydantic.BaseModel):
    x: float
    y: float


class Opts(TypedDict, total=False):
    depth: int


def run(coro):
    return asyncio.run(coro)


# ------------------------------------------------------------------ schema
def test_schema_from_hints_and_docstring():
    @tool
    def search(query: str, k: int = 3, mode: Literal["fast", "exact"] = "fast", tags: list[str] | None = None,
               color: Color = Color.RED, at: Point | None = None, weights: dict[str, float] | None = None,
               span: tuple[int, int] = (0, 1), opts: Opts | None = None) -> list[str]:
        """Search the documents.

        Longer explanation that is part of the description.

        Args:
            query (str): What to look for.
                Several words are fine.
            k: How many results.
            mode: Matching mode.
            tags: Only documents with these tags.
            color: A colour.
            at: A point.
            weights: Field weights.
            span: A range.
            opts: Options.

        Returns:
            The ids.
        """
        return []

    spec = search.spec
    assert spec.description == "Search the documents. Longer explanation that is part of the description."
    params = spec.parameters
    assert params["type"] == "object" and params["additionalProperties"] is False
    assert params["required"] == ["query"]
    props = params["properties"]
    assert props["query"] == {"type": "string", "description": "What to look for. Several words are fine."}
    assert props["k"]["type"] == "integer" and props["k"]["default"] == 3
    assert props["mode"]["enum"] == ["fast", "exact"]
    assert props["tags"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}
    assert props["color"]["enum"] == ["red", "blue"]
    assert props["at"]["anyOf"][0]["properties"]["x"] == {"type": "number"}  # $ref inlined, titles dropped
    assert "$defs" not in params and "title" not in str(params)
    assert props["weights"]["anyOf"][0]["additionalProperties"] == {"type": "number"}
    assert props["span"]["prefixItems"] == [{"type": "integer"}, {"type": "integer"}]
    assert props["opts"]["anyOf"][0]["properties"]["depth"] == {"type": "integer"}


def test_property_named_title_is_kept():
    @tool
    def publish(title: str) -> str:
        """Publish.

        Args:
            title: The headline.
        """
        return title

    assert publish.spec.parameters["properties"]["title"] == {"type": "string", "description": "The headline."}


@pytest.mark.parametrize("source, message", [
    ("def f(x: int):\n    return x", "has no docstring"),
    ("def f(x):\n    '''Doc.'''\n    return x", "parameter 'x' has no type annotation"),
    ("def f(*xs: int):\n    '''Doc.'''\n    return xs", "*args/**kwargs"),
    ("def f(x: int, /):\n    '''Doc.'''\n    return x", "positional-only"),
    ("def f(x: object):\n    '''Doc.'''\n    return x", "has no JSON Schema"),
])
def test_definition_errors(source, message):
    namespace: dict = {"object": type("Opaque", (), {})}
    exec(source, namespace)  # noqa: S102 - the test defines functions from source on purpose
    with pytest.raises(ToolDefinitionError, match=message.replace("*", r"\*")):
        tool(namespace["f"])


def test_parse_docstring_sections():
    doc = parse_docstring("""Summary line.

    Args:
        a: First.
        b (int): Second,
            continued.

    Raises:
        ValueError: never listed as an argument.
    """)
    assert doc.summary == "Summary line."
    assert dict(doc.params) == {"a": "First.", "b": "Second, continued."}


# ------------------------------------------------------------------ validation
def test_validation_messages_list_every_problem():
    with pytest.raises(ToolArgumentError) as err:
        _sample_tools.greet.validate_arguments({"town": "x", "excited": "maybe"})
    assert str(err.value) == ("invalid arguments for tool 'greet': missing required argument 'name'; "
                              "argument 'excited': Input should be a valid boolean, unable to interpret input; "
                              "unknown argument 'town' (expected: name, excited)")


def test_validation_coerces_and_fills_defaults():
    assert _sample_tools.greet.validate_arguments({"name": "Ada"}) == {"name": "Ada", "excited": False}
    with pytest.raises(ToolArgumentError, match="takes a JSON object"):
        _sample_tools.greet.validate_arguments(["Ada"])  # type: ignore[arg-type]


def test_tool_stays_callable_and_invokes_sync_and_async():
    assert _sample_tools.greet("Ada", excited=True) == "hello Ada!"
    assert run(_sample_tools.greet.invoke({"name": "Ada"})) == "hello Ada"
    assert run(_sample_tools.store_value.invoke({"key": "a", "value": "3"})) == "a=3"
    assert _sample_tools.store_value.spec.idempotent is False and _sample_tools.greet.spec.idempotent is True


@pytest.mark.parametrize("dumps, loads", [(pickle.dumps, pickle.loads), (cloudpickle.dumps, pickle.loads)])
def test_module_level_tools_pickle(dumps, loads):
    for original in (_sample_tools.greet, _sample_tools.store_value):
        copy = loads(dumps(original))
        assert copy.spec == original.spec
        args = {"key": "k", "value": 1} if copy.name == "store_value" else {"name": "x"}
        assert copy.validate_arguments(args) == original.validate_arguments(args)
    assert loads(dumps(_sample_tools.greet))("Bo") == "hello Bo"


def test_nested_tool_pickles_by_value_with_cloudpickle():
    @tool
    def local(n: int) -> int:
        """Add one.

        Args:
            n: A number.
        """
        return n + 1

    assert pickle.loads(cloudpickle.dumps(local))(1) == 2


# ------------------------------------------------------------------ registry
def test_registry_lookup_errors_and_catalog():
    registry = ToolRegistry([_sample_tools.greet, _sample_tools.store_value])
    with pytest.raises(UnknownToolError) as err:
        registry.get("gret")
    assert str(err.value) == "unknown tool 'gret'; available: greet, store_value. Did you mean 'greet'?"
    assert registry.schemas()["greet"]["required"] == ["name"]
    # The return kind (from the annotation) tells the planner what each tool's output can feed.
    assert registry.catalog_text().splitlines()[0] == "- greet(name: str, excited: bool?) -> text: Greet someone."
    assert "- store_value(key: str, value: int) -> text [write]: Store a value." in registry.catalog_text()
    assert "greet" in registry and len(registry) == 2 and [t.name for t in registry] == ["greet", "store_value"]
    with pytest.raises(ToolDefinitionError, match="two tools are named 'greet'"):
        ToolRegistry([_sample_tools.greet, _sample_tools.greet])


def test_registry_wraps_plain_callables():
    def shout(text: str) -> str:
        """Upper-case the text.

        Args:
            text: Input.
        """
        return text.upper()

    assert ToolRegistry([shout]).get("shout").spec.permission == "read"


# ------------------------------------------------------------------ dispatcher
class Flaky:
    def __init__(self, failures: list[BaseException]) -> None:
        self.failures = failures
        self.calls = 0

    def make(self):
        outer = self

        @tool
        async def flaky(x: int) -> int:
            """Fails a few times.

            Args:
                x: Echoed.
            """
            outer.calls += 1
            if outer.failures:
                raise outer.failures.pop(0)
            return x

        return flaky


def recording_sleep():
    delays: list[float] = []

    async def sleep(d: float) -> None:
        delays.append(d)

    return delays, sleep


def test_transient_errors_are_retried_with_capped_jittered_backoff():
    flaky = Flaky([TransientToolError("busy"), ConnectionError("reset"), TimeoutError()])
    delays, sleep = recording_sleep()
    dispatcher = ToolDispatcher(ToolRegistry([flaky.make()]), max_attempts=4, backoff_s=1.0, backoff_max_s=2.5,
                                sleep=sleep, rng=random.Random(7))
    result = run(dispatcher.call("flaky", {"x": 5}))
    assert (result.output, result.attempts, flaky.calls) == (5, 4, 4)
    rng = random.Random(7)
    assert delays == [rng.uniform(0, 1.0), rng.uniform(0, 2.0), rng.uniform(0, 2.5)]


def test_retry_after_is_respected_and_attempts_exhaust():
    class RateLimited(Exception):
        status_code = 429
        retry_after = 2.0

    flaky = Flaky([RateLimited("slow down"), RateLimited("slow down")])
    delays, sleep = recording_sleep()
    dispatcher = ToolDispatcher(ToolRegistry([flaky.make()]), max_attempts=2, backoff_s=0.01, backoff_max_s=5,
                                sleep=sleep, rng=random.Random(0))
    with pytest.raises(TransientToolError, match="gave up after 2 attempts") as err:
        run(dispatcher.call("flaky", {"x": 1}))
    assert err.value.attempts == 2 and delays == [2.0]


@pytest.mark.parametrize("exc, kind", [
    (TransientToolError("x"), "transient"), (ConnectionRefusedError(), "transient"), (TimeoutError(), "timeout"),
    (type("E", (Exception,), {"status_code": 503})(), "transient"),
    (type("E", (Exception,), {"status": 404})(), "permanent"),
    (ValueError("bad"), "permanent"), (ToolArgumentError("bad arg"), "argument"), (KeyError("k"), "permanent"),
])
def test_classification(exc, kind):
    assert classify_exception(exc, "t").kind == kind


def test_permanent_and_argument_errors_are_not_retried():
    flaky = Flaky([ValueError("broken"), ToolArgumentError("x must be even")])
    dispatcher = ToolDispatcher(ToolRegistry([flaky.make()]), sleep=recording_sleep()[1])
    with pytest.raises(PermanentToolError, match="tool 'flaky' raised ValueError: broken"):
        run(dispatcher.call("flaky", {"x": 1}))
    with pytest.raises(ToolArgumentError, match="x must be even"):
        run(dispatcher.call("flaky", {"x": 1}))
    assert flaky.calls == 2
    with pytest.raises(ToolArgumentError):
        run(dispatcher.call("flaky", {"y": 1}))
    assert flaky.calls == 2  # invalid arguments never reach the tool


def test_null_for_an_optional_parameter_means_its_default():
    @tool
    def search(query: str, k: int = 3, lang: str | None = "en") -> str:
        """Search.

        Args:
            query: what to look for.
            k: how many passages.
            lang: a language, or None for any.
        """
        return f"{query}/{k}/{lang}"

    dispatcher = ToolDispatcher(ToolRegistry([search]), max_attempts=1)
    assert run(dispatcher.call("search", {"query": "Paris", "k": None})).output == "Paris/3/en"
    # null stays null where the parameter allows it, and a required one still fails with its message
    assert run(dispatcher.call("search", {"query": "Paris", "lang": None})).output == "Paris/3/None"
    with pytest.raises(ToolArgumentError, match="'query'"):
        run(dispatcher.call("search", {"query": None}))


def test_timeout():
    @tool(timeout_s=0.05)
    async def slow() -> str:
        """Never finishes in time."""
        await asyncio.sleep(5)
        return "late"

    dispatcher = ToolDispatcher(ToolRegistry([slow]), max_attempts=1)
    with pytest.raises(ToolTimeoutError, match="did not return within 0.05s"):
        run(dispatcher.call("slow", {}))
    with pytest.raises(ToolTimeoutError, match="within 0.01s"):
        run(dispatcher.call("slow", {}, timeout_s=0.01))  # the tighter of the two wins


def test_confirmation_required():
    @tool(permission="admin", requires_confirmation=True)
    def drop(table: str) -> str:
        """Drop a table.

        Args:
            table: Name.
        """
        return f"dropped {table}"

    dispatcher = ToolDispatcher(ToolRegistry([drop]))
    with pytest.raises(ToolPermissionError, match="requires a human's confirmation"):
        run(dispatcher.call("drop", {"table": "t"}))
    assert run(dispatcher.call("drop", {"table": "t"}, confirmed=True)).output == "dropped t"


def test_journal_makes_writes_exactly_once():
    calls = []

    @tool(permission="write")
    def send(to: str) -> str:
        """Send a message.

        Args:
            to: Recipient.
        """
        calls.append(to)
        return f"sent #{len(calls)}"

    journal = MemoryJournal()
    dispatcher = ToolDispatcher(ToolRegistry([send]), journal=journal)
    key = idempotency_key("task", 2, "send", {"to": "bob"})
    first = run(dispatcher.call("send", {"to": "bob"}, idempotency_key=key))
    again = run(ToolDispatcher(ToolRegistry([send]), journal=journal).call("send", {"to": "bob"},
                                                                          idempotency_key=key))
    assert calls == ["bob"] and first.output == again.output == "sent #1"
    assert (first.from_journal, again.from_journal, again.attempts) == (False, True, 0)
    other = idempotency_key("task", 2, "send", {"to": "eve"})
    assert other != key and other.startswith("task:")


def test_output_serialisation_and_truncation():
    assert serialize_output({"p": Point(x=1, y=2), "c": Color.BLUE, "s": frozenset({2, 1})}) == \
        {"p": {"x": 1.0, "y": 2.0}, "c": "blue", "s": [1, 2]}
    assert truncate_output("short", 10) == ("short", False)
    text, cut = truncate_output("word " * 500, 20)
    assert cut and text.endswith("[output truncated by tetrarch: showing 20 of 501 tokens]")  # "word"×500 + trailing space

    @tool
    def big() -> list[int]:
        """A large list."""
        return list(range(5000))

    result = run(ToolDispatcher(ToolRegistry([big]), max_output_tokens=50).call("big", {}))
    assert result.truncated and isinstance(result.output, str) and "showing 50 of" in result.output


def test_backoff_delay_bounds():
    rng = random.Random(1)
    for attempt in range(1, 12):
        assert 0 <= backoff_delay(attempt, 0.2, 5.0, rng) <= min(5.0, 0.2 * 2 ** (attempt - 1))


def test_a_closure_tool_validates_after_cloudpickle_even_with_unimported_string_annotations():
    # Found by `make bench`: cloudpickle rebuilds a closure with only the globals its body uses, so a
    # string return annotation ("Any", under `from __future__ import annotations`) no longer resolved in
    # the executor and every call failed. The resolved parameter types travel with the Tool.
    from ray import cloudpickle

    namespace: dict = {}
    exec(  # noqa: S102 - a module-like namespace with postponed annotations, as in benchmarks/world.py
        "from __future__ import annotations\n"
        "from typing import Any, Literal\n"
        "from agents.tools import tool\n"
        "def make(table):\n"
        "    @tool\n"
        "    def lookup(entity: str, unit: Literal['m', 'km'] = 'm') -> Any:\n"
        "        '''Look something up.\n\n        Args:\n            entity: Name.\n            unit: Unit.\n        '''\n"
        "        return table[entity]\n"
        "    return lookup\n", namespace)
    rebuilt = cloudpickle.loads(cloudpickle.dumps(namespace["make"]({"x": 1})))
    assert rebuilt.validate_arguments({"entity": "x"}) == {"entity": "x", "unit": "m"}
    with pytest.raises(ToolArgumentError, match="unit"):
        rebuilt.validate_arguments({"entity": "x", "unit": "mi"})
    assert asyncio.run(rebuilt.invoke({"entity": "x"})) == 1


def test_what_a_tool_returns_comes_from_its_docstring_or_its_annotation():
    from agents.tools.builtins import calculator, doc_search

    @tool
    def untyped(x: int):
        """No annotation."""

    @tool
    def several(x: int) -> int | str:
        """Two kinds."""

    assert (calculator.spec.returns, doc_search.spec.returns) == ("number", "passages (text with figures, best first)")
    assert untyped.spec.returns is None and several.spec.returns is None
    assert "-> " not in ToolRegistry([untyped]).catalog_text()
