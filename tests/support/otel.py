"""The process's global TracerProvider for tests of ``Observability(otel=True)``: the OpenTelemetry API lets
a process set it once, so every test shares one SDK provider and reads (then clears) its in-memory exporter."""

from __future__ import annotations

from typing import Any

_EXPORTER: Any = None


def global_exporter() -> Any:
    """The in-memory exporter behind the global provider (installed on first use), emptied."""
    global _EXPORTER
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    if _EXPORTER is None:
        _EXPORTER = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
        if trace.get_tracer_provider() is not provider:
            raise RuntimeError("another global TracerProvider was set in this test process first")
    _EXPORTER.clear()
    return _EXPORTER
