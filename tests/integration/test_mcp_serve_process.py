"""``tetrarch mcp serve`` as a real subprocess (its own local Ray), driven by the SDK's own client over stdio
and over streamable HTTP: run_task end to end with progress notifications, then an escalation answered
with respond. The LLM is scripted (tests/support/mcp_serve_llm.py) and announces itself with a print,
which must reach stderr: on stdio a stray stdout line would corrupt the protocol."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.mcp_fixtures import free_port

pytestmark = pytest.mark.ray

REPO = Path(__file__).resolve().parents[2]


def _serve_args(tmp_path: Path, *transport: str) -> list[str]:
    return ["-m", "agents.cli.mcp_serve", "serve", *transport, "--llm-factory", "support.mcp_serve_llm:build",
            "--store", str(tmp_path / "t.db")]


def _env() -> dict[str, str]:
    path = os.pathsep.join([str(REPO), str(REPO / "tests"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "RAY_ADDRESS": ""}


async def _escalate_then_respond(client: Client) -> dict[str, Any]:
    progress: list[list[str]] = [[], []]

    def collect(into: list[str]):
        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            into.append(message or "")
        return on_progress

    ran = await client.call_tool("run_task", {"task": "Double twenty."}, progress_callback=collect(progress[0]))
    first = ran.structured_content
    status = (await client.call_tool("task_status", {"task_id": first["task_id"]})).structured_content
    answered = await client.call_tool("respond", {"task_id": first["task_id"], "text": "No: double 21."},
                                      progress_callback=collect(progress[1]))
    return {"first": first, "status": status, "answered": answered.structured_content, "progress": progress}


def _check(out: dict[str, Any]) -> None:
    first, status, answered = out["first"], out["status"], out["answered"]
    assert first["status"] == "escalated" and "Is 20 the right number" in first["question"], first
    assert first["plan_summary"] == ["1. calculator(expression) — completed: step 1"]
    assert status["status"] == "escalated" and status["task_id"] == first["task_id"]
    assert answered["status"] == "accepted" and answered["answer"] == "42", answered
    assert answered["task_id"] == first["task_id"]
    before, after = out["progress"]
    for messages in (before, after):  # one notification per task event, the run's last event last
        assert "step_started step 1 calculator" in messages and "step_finished step 1" in messages, messages
        assert messages[-1] == "task_finished", messages
    assert "routed" in before and "routed" not in after, "respond continues the task, it does not route it again"


def test_mcp_serve_over_stdio_runs_a_task_escalates_and_continues_with_a_clean_stdout(tmp_path):
    stray: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):  # a stdout line that is not JSON-RPC
            stray.append(message)

    params = StdioServerParameters(command=sys.executable, args=_serve_args(tmp_path, "--stdio"), env=_env(),
                                   cwd=str(REPO))

    async def scenario() -> dict[str, Any]:
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), message_handler=on_message,
                              read_timeout_seconds=300) as client:
                return await _escalate_then_respond(client)

    out = asyncio.run(scenario())
    _check(out)
    assert stray == [], f"non-protocol output on the stdio wire: {stray[:3]}"
    assert "building the scripted LLM for mcp serve" in (tmp_path / "stderr.txt").read_text()


def test_mcp_serve_over_streamable_http_runs_a_task_escalates_and_continues(tmp_path):
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen([sys.executable, *_serve_args(tmp_path, "--http", f"127.0.0.1:{port}")], env=_env(),
                            cwd=REPO, stdout=log, stderr=subprocess.STDOUT)

    async def scenario() -> dict[str, Any]:
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(1200):  # Ray starts before the server listens; fail with the log, not on a timing
            if proc.poll() is not None:
                break
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            await asyncio.sleep(0.1)
        assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
        async with Client(url, read_timeout_seconds=300) as client:
            return await _escalate_then_respond(client)

    try:
        out = asyncio.run(scenario())
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    _check(out)
