"""The page serves what the store keeps: a tool's secret parameter is redacted in every response."""

from __future__ import annotations

import urllib.request

from support import wire
from support.traced import run_stored

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM
from agents.store import REDACTED, Store
from agents.tools import tool
from agents.ui import UIServer

SECRET = "tok-page-5b8c1d7e2f"


@tool(secret_params=("token",))
def fetch_private(resource: str, token: str) -> str:
    """Fetch a private resource.

    Args:
        resource: Name of the resource.
        token: Bearer token for the private API.
    """
    return f"{resource}: 42 rows (authorised as {token})"  # an API that echoes the credential


def test_no_response_holds_the_secret(tmp_path):
    plan = wire.plan(wire.step(1, "fetch_private", {"resource": "sales", "token": SECRET}))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[r.role])
    db = tmp_path / "t.db"
    task_id, result, _ = run_stored(db, llm, "rows of the private sales table", tools=[fetch_private],
                                    config=RuntimeConfig(store_path=db))
    assert result.status == "accepted"
    with UIServer(Store(db)) as ui:
        bodies = [urllib.request.urlopen(ui.url + path, timeout=10).read() for path in
                  ("/api/tasks", f"/api/tasks/{task_id}/outputs/1/1")]
        with urllib.request.urlopen(ui.url + f"/api/tasks/{task_id}/stream", timeout=10) as stream:
            buf = b""
            while b'"task_finished"' not in buf:
                buf += stream.read1(1 << 16)
        bodies.append(buf)
    assert not any(SECRET.encode() in body for body in bodies)
    assert REDACTED.encode() in bodies[1] and REDACTED.encode() in bodies[2]
