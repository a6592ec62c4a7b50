"""Traces of finished tasks: Gantt timelines (PNG), and exports built from the event log."""
