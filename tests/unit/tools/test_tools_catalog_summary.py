"""The router's tool list (``catalog_summary``) and each tool's parameter order (``catalog_params``) are read
back from the catalog text the roles receive: names and purposes only, whatever the signatures hold."""

from __future__ import annotations

from typing import Literal

from agents.tools import tool
from agents.tools.registry import ToolRegistry, catalog_params, catalog_permissions, catalog_summary
from benchmarks.world import World, make_tools


@tool
def pick(mode: Literal["a)", 'b"(', "c"], count: int = 1, tags: list[str] | None = None) -> str:
    """Pick something, e.g. pick("a)", 2).

    Args:
        mode: Which one.
        count: How many.
        tags: Labels.
    """
    return mode


@tool(permission="admin")
def wipe(path: str) -> None:
    """Delete a file: cannot be undone.

    Args:
        path: The file.
    """


def test_the_summary_keeps_names_purposes_returns_and_permissions_only() -> None:
    registry = ToolRegistry([pick, wipe])
    text = registry.catalog_text()
    assert "mode: Which one." in text  # the planner's catalog is unchanged
    assert registry.catalog_summary().splitlines() == ["- pick -> text: Pick something.",
                                                      "- wipe [admin]: Delete a file: cannot be undone."]
    assert catalog_params(text) == {"pick": ["mode", "count", "tags"], "wipe": ["path"]}


def test_the_benchmark_tools_lose_their_argument_schemas_in_the_summary() -> None:
    text = ToolRegistry(make_tools(World.load())).catalog_text()
    summary = catalog_summary(text)
    assert summary.splitlines() == [
        "- lookup: Look up one attribute of an entity (a city, country, company or river) in the knowledge base.",
        "- calculator -> number: Evaluate an arithmetic expression."]
    assert catalog_params(text) == {"lookup": ["entity", "attribute"], "calculator": ["expression"]}


def test_lines_that_are_not_tool_lines_are_kept_and_nothing_breaks() -> None:
    assert catalog_summary("") == "" and catalog_params("") == {}
    odd = "- broken(no closing paren: str\nsome free text\n- (nameless)"
    assert catalog_summary(odd) == odd and catalog_params(odd) == {}


@tool(permission="write")
def save(text: str) -> str:
    """Save the text.

    Returns:
        list[str]: ids [write]-free words, e.g. "a: b".

    Args:
        text: What to save.
    """
    return text


def test_each_tools_permission_is_read_back_from_its_catalog_line() -> None:
    registry = ToolRegistry([pick, wipe, save, *make_tools(World.load())])
    assert catalog_permissions(registry.catalog_text()) == {t.name: t.spec.permission for t in registry}
    assert catalog_permissions("fetch_page(url)") == {}  # not a catalog line: no tool, so no read tool either
