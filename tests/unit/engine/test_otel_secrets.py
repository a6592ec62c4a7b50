"""Live spans carry what the store keeps: a tool's secret parameter never reaches an exporter, even with tool
arguments and results opted in."""

from __future__ import annotations

import pytest
from support import wire
from support.traced import run_stored

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM
from agents.store import REDACTED
from agents.tools import tool

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")

SECRET = "tok-live-9d2e7a41c3"


@tool(secret_params=("token",))
def fetch_private(resource: str, token: str) -> str:
    """Fetch a private resource.

    Args:
        resource: Name of the resource.
        token: Bearer token for the private API.
    """
    return f"{resource}: 42 rows (authorised as {token})"  # an API that echoes the credential


def test_no_span_holds_the_secret(tmp_path):
    from support.otel import global_exporter

    exporter = global_exporter()
    plan = wire.plan(wire.step(1, "fetch_private", {"resource": "sales", "token": SECRET}))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[r.role])
    db = tmp_path / "t.db"
    _, result, _ = run_stored(db, llm, "rows of the private sales table", tools=[fetch_private],
                              config=RuntimeConfig(store_path=db, observability={"otel": True, "otel_content": True}))
    assert result.status == "accepted"
    spans = exporter.get_finished_spans()
    values = [str(v) for s in spans for v in s.attributes.values()]
    values += [str(v) for s in spans for e in s.events for v in e.attributes.values()]
    assert not any(SECRET in v for v in values)
    call = next(s for s in spans if s.name == "execute_tool fetch_private")
    assert REDACTED in call.attributes["gen_ai.tool.call.arguments"]
    assert REDACTED in call.attributes["gen_ai.tool.call.result"]
