"""An ``otel_setup`` hook for tests: the global TracerProvider exports over OTLP/HTTP to the endpoint in
``TETRARCH_TEST_OTLP_ENDPOINT`` (a receiver the test runs on 127.0.0.1)."""

from __future__ import annotations

import os


def setup() -> None:
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "tetrarch-test"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=os.environ["TETRARCH_TEST_OTLP_ENDPOINT"])))
    trace.set_tracer_provider(provider)
