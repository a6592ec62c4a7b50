"""The ``tetrarch`` command (``main``), its live progress view (``progress``) and ``make demo`` (``demo``)."""

from agents.cli.main import main

__all__ = ["main"]
