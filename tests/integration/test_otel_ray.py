"""Live spans on Ray: the runner runs in the Supervisor actor, where Observability.otel_setup installs the
TracerProvider; its spans reach an OTLP/HTTP receiver on 127.0.0.1 with the same names as in-process."""

from __future__ import annotations

import http.server
import os
import threading
from pathlib import Path

import pytest
from support import tools as T
from support import wire

from agents import Observability, Orchestrator, RuntimeConfig
from agents.llm import FunctionLLM

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="opentelemetry-exporter-otlp-proto-http missing")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402

pytestmark = pytest.mark.ray
TESTS = Path(__file__).resolve().parents[1]


class _Receiver(http.server.BaseHTTPRequestHandler):
    spans: list = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        body = self.rfile.read(int(self.headers["content-length"]))
        for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
            for scope in resource.scope_spans:
                _Receiver.spans.extend(scope.spans)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def receiver():
    """Set up before Ray starts: its workers inherit the endpoint and the path to ``support.otlp_setup``. A Ray
    another module left running started without them, so this module starts its own."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    saved = {k: os.environ.get(k) for k in ("TETRARCH_TEST_OTLP_ENDPOINT", "PYTHONPATH")}
    os.environ["TETRARCH_TEST_OTLP_ENDPOINT"] = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS.parent), str(TESTS), saved["PYTHONPATH"]) if p)
    yield _Receiver.spans
    server.shutdown()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def test_spans_are_emitted_in_the_supervisor_actor(receiver, ray_session, tmp_path):
    plan = wire.plan(wire.step(1, "sleepy", {"seconds": 0.5, "label": "a"}),
                     wire.step(2, "sleepy", {"seconds": 0.5, "label": "b"}),
                     wire.step(3, "lookup", {"city": "Rome"}, deps=[1, 2]))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[r.role])
    config = RuntimeConfig(store_path=tmp_path / "t.db",
                           observability=Observability(otel=True, otel_setup="support.otlp_setup:setup"))
    orch = Orchestrator(llm=llm, tools=T.ALL, config=config)
    try:
        result = orch.run("two waits, then Rome", timeout=120)
    finally:
        orch.shutdown()  # the actor exits; SimpleSpanProcessor exported each span as it ended
    assert result.status == "accepted"
    mine = [s for s in receiver if any(a.key == "tetrarch.task_id" and a.value.string_value == result.task_id
                                       for a in s.attributes)]
    names = sorted(s.name for s in mine)
    assert names.count("invoke_agent tetrarch") == 1 and names.count("plan") == 1
    assert names.count("execute_tool sleepy") == 2 and len([n for n in names if n.startswith("chat ")]) == 3
    sleeps = [s for s in mine if s.name == "execute_tool sleepy"]
    assert sleeps[0].start_time_unix_nano < sleeps[1].end_time_unix_nano
    assert sleeps[1].start_time_unix_nano < sleeps[0].end_time_unix_nano  # parallel on the executors
