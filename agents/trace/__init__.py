"""Traces of past tasks, rebuilt from the store: the model (``model``), HTML, Chrome trace, Gantt PNG and
OpenTelemetry exports, and the ``tetrarch trace`` command."""

__all__: list[str] = []
