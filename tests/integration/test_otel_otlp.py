"""Live spans over OTLP/HTTP, as a user's Jaeger / Phoenix / Langfuse receives them: a task runs in another
process with Observability(otel=True, otel_setup=...) and a receiver on 127.0.0.1 decodes what arrives."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="opentelemetry-exporter-otlp-proto-http missing")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""
    import sys
    from support import wire
    from support.traced import run_stored
    from agents.config import Observability, RuntimeConfig
    from agents.llm import FunctionLLM

    plan = wire.plan(wire.step(1, "sleepy", {"seconds": 0.2, "label": "a"}),
                     wire.step(2, "sleepy", {"seconds": 0.2, "label": "b"}),
                     wire.step(3, "lookup", {"city": "Rome"}, deps=[1, 2]))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[r.role])
    db = sys.argv[1]
    task_id, result, _ = run_stored(db, llm, "two waits then Rome", config=RuntimeConfig(
        store_path=db, observability=Observability(otel=True, otel_setup="support.otlp_setup:setup")))
    print(task_id, result.status)
""")


class _Receiver(http.server.BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        body = self.rfile.read(int(self.headers["content-length"]))
        if self.path == "/v1/traces" and self.headers["content-type"] == "application/x-protobuf":
            _Receiver.bodies.append(body)
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_spans_arrive_over_otlp_http_with_the_genai_names(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), str(TESTS)]),
           "TETRARCH_TEST_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}/v1/traces",
           "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    try:
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "t.db")], env=env, capture_output=True,
                              text=True, timeout=120, check=False)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr
    task_id, status = done.stdout.split()
    assert status == "accepted"
    spans = []
    for body in _Receiver.bodies:
        request = ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                spans.extend(scope.spans)
    names = sorted(s.name for s in spans)
    assert names.count("invoke_agent tetrarch") == 1 and names.count("plan") == 1
    assert names.count("execute_tool sleepy") == 2 and names.count("execute_tool lookup") == 1
    assert len([n for n in names if n.startswith("chat ")]) == 3
    attrs = {s.name: {a.key: a.value for a in s.attributes} for s in spans}
    root = attrs["invoke_agent tetrarch"]
    assert root["gen_ai.conversation.id"].string_value == task_id
    assert root["gen_ai.operation.name"].string_value == "invoke_agent"
    assert attrs["execute_tool lookup"]["gen_ai.tool.name"].string_value == "lookup"
    root_id = next(s.span_id for s in spans if s.name == "invoke_agent tetrarch")
    assert all(s.parent_span_id == root_id for s in spans if s.name.startswith("execute_tool"))
