"""Internals of ``agents.store``: schema and migrations, redaction, JSON codec, blob files, row models.

Import the public names from ``agents.store``; these modules may change shape between versions.
"""

__all__: list[str] = []
