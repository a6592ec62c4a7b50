"""MCP tool listings → ToolSpecs, outputs, validation and errors: pure, no server."""

from __future__ import annotations

import pickle

import pytest
from ray import cloudpickle

from agents.tools import MCPServerHTTP, MCPServerStdio, MCPToolOverride, ToolRegistry, tool
from agents.tools.errors import ToolArgumentError, ToolDefinitionError
from agents.tools.mcp import (MCPCallInterruptedError, MCPConnectionError, MCPListError, MCPTool, MCPToolError,
                              access_of, output_of, resolve_tools, spec_from_listing, tools_from_listing)

SERVER = MCPServerHTTP("http://127.0.0.1:9/mcp", prefix="geo")
POPULATION = {"name": "population", "description": "Population in millions.",
              "inputSchema": {"type": "object", "title": "populationArguments",
                              "properties": {"city": {"type": "string", "title": "City"},
                                             "year": {"type": "integer"}},
                              "required": ["city"]},
              "annotations": {"readOnlyHint": True}}


def listed(name, annotations=None, **extra):
    return {"name": name, "description": f"{name} tool",
            "inputSchema": {"type": "object", "properties": {"x": {"type": "number"}}}, "annotations": annotations,
            **extra}


def test_listing_becomes_a_prefixed_spec_with_a_clean_schema():
    spec = spec_from_listing(SERVER, POPULATION)
    assert spec.name == "geo_population" and spec.description == "Population in millions."
    assert spec.parameters == {"type": "object", "properties": {"city": {"type": "string"}, "year": {"type": "integer"}},
                               "required": ["city"], "additionalProperties": False}
    assert (spec.permission, spec.requires_confirmation, spec.idempotent) == ("read", False, True)


@pytest.mark.parametrize("annotations,confirm,expected", [
    ({"readOnlyHint": True}, True, ("read", False, True)),
    ({"destructiveHint": True}, True, ("write", True, False)),
    ({"destructiveHint": True}, False, ("write", False, False)),
    (None, True, ("write", True, False)),                         # the spec presumes destructive
    ({"destructiveHint": False}, True, ("write", False, False)),
    ({"destructiveHint": False, "idempotentHint": True}, True, ("write", False, True)),
    ({"readOnlyHint": False, "destructiveHint": True}, True, ("write", True, False)),
])
def test_annotations_map_onto_permissions(annotations, confirm, expected):
    a = access_of(annotations, confirm)
    assert (a.permission, a.requires_confirmation, a.idempotent) == expected


def test_overrides_win_over_annotations():
    server = MCPServerStdio("srv", overrides={"save": {"permission": "read", "requires_confirmation": False,
                                                      "timeout_s": 3, "secret_params": ["x"]},
                                             "drop": MCPToolOverride(permission="admin")})
    save = spec_from_listing(server, listed("save", {"destructiveHint": True}))
    drop = spec_from_listing(server, listed("drop", {"readOnlyHint": True}))
    assert (save.permission, save.requires_confirmation, save.timeout_s, save.secret_params) == ("read", False, 3, ("x",))
    assert drop.permission == "admin"


def test_names_that_are_not_identifiers_are_made_into_identifiers():
    server = MCPServerStdio("srv")
    assert spec_from_listing(server, listed("get-page.v2")).name == "get_page_v2"
    assert spec_from_listing(server, listed("3d")).name == "mcp_3d"


def test_include_exclude_and_typos_in_overrides():
    server = MCPServerStdio("srv", include=["a", "b"], exclude=["b"])
    assert [t.name for t in tools_from_listing(server, [listed("a"), listed("b"), listed("c")])] == ["a"]
    with pytest.raises(ToolDefinitionError, match="no tool named \\['typo'\\]"):
        tools_from_listing(MCPServerStdio("srv", overrides={"typo": {}}), [listed("a")])
    with pytest.raises(ToolDefinitionError, match="secret_params"):
        spec_from_listing(MCPServerStdio("srv", overrides={"a": {"secret_params": ["nope"]}}), listed("a"))


def test_bad_server_configurations_are_rejected_up_front():
    with pytest.raises(ValueError, match="prefix"):
        MCPServerStdio("srv", prefix="not ok")
    with pytest.raises(ValueError, match="http"):
        MCPServerHTTP("127.0.0.1:8000/mcp")


def test_secrets_in_env_and_headers_stay_out_of_reprs_and_labels():
    stdio = MCPServerStdio("/venv/bin/python", ["server.py"], env={"TOKEN": "s3cret"})
    http = MCPServerHTTP("http://127.0.0.1:1/mcp", headers={"Authorization": "Bearer s3cret"})
    assert "s3cret" not in repr(stdio) + repr(http) + stdio.label + http.label
    assert stdio.label == "python server.py"


def test_outputs_unwrap_structured_results_like_a_tool_return_value():
    assert output_of(SERVER, "p", {"content": [{"type": "text", "text": "2.1"}],
                                   "structuredContent": {"result": 2.1}}, "geo_p") == 2.1
    assert output_of(SERVER, "p", {"content": [], "structuredContent": {"a": 1, "b": 2}}, "geo_p") == {"a": 1, "b": 2}
    assert output_of(SERVER, "p", {"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"},
                                               {"type": "image", "data": "…", "mimeType": "image/png"}]},
                     "geo_p") == "one\ntwo\n[image content: image/png]"


def test_is_error_becomes_a_permanent_tool_error_with_the_server_message():
    with pytest.raises(MCPToolError, match="refused: no") as info:
        output_of(SERVER, "p", {"content": [{"type": "text", "text": "refused: no"}], "isError": True}, "geo_p")
    assert info.value.kind == "permanent" and info.value.tool_name == "geo_p"


def make_tool():
    return MCPTool(SERVER, "population", spec_from_listing(SERVER, POPULATION))


def test_arguments_are_validated_against_the_schema_before_any_call():
    t = make_tool()
    assert t.validate_arguments({"city": "Paris", "year": "2020"}) == {"city": "Paris", "year": 2020}
    with pytest.raises(ToolArgumentError) as info:
        t.validate_arguments({"town": "Paris", "year": "soon"})
    message = str(info.value)
    assert "missing required argument 'city'" in message and "'town' was unexpected" in message
    assert "argument 'year'" in message
    with pytest.raises(ToolArgumentError, match="JSON object"):
        t.validate_arguments(["Paris"])  # type: ignore[arg-type]


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps])
def test_mcp_tools_pickle_to_executors(dumps):
    t = make_tool()
    t.validate_arguments({"city": "x"})  # a compiled validator must not break pickling
    back = pickle.loads(dumps(t))
    assert isinstance(back, MCPTool) and back.spec == t.spec and back.server == t.server
    assert back.is_async and back.remote_name == "population"
    assert ToolRegistry([back]).schemas()["geo_population"]["required"] == ["city"]


@pytest.mark.parametrize("error", [
    MCPToolError("boom", tool_name="t", server="s"),
    MCPConnectionError("gone", tool_name="t", retry_after=1.5, server="s"),
    MCPCallInterruptedError("cut", tool_name="t", server="s"),
    MCPListError("cannot list", server="s"),
])
def test_errors_cross_process_boundaries_intact(error):
    back = pickle.loads(cloudpickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error) and back.server == "s" and back.kind == error.kind


def test_resolve_tools_without_servers_wraps_functions_and_refuses_duplicates():
    def double(x: int) -> int:
        """Twice x.

        Args:
            x: A number.
        """
        return 2 * x

    assert [t.name for t in resolve_tools([double])] == ["double"]
    with pytest.raises(ToolDefinitionError, match="two tools are named 'double'"):
        resolve_tools([double, tool(double)])
