"""Helpers shared by tests: wire-format JSON builders for scripted roles and tiny tools."""
