"""tetrarch: plan-then-execute agents on Ray.

    from agents import Orchestrator, RuntimeConfig, tool

Exports are resolved lazily (PEP 562) so that subpackages such as ``agents.llm`` and ``agents.store``
import without pulling in Ray and the whole runtime.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    # running tasks
    "Orchestrator",
    "TaskHandle",
    "TaskResult",
    # configuration
    "RuntimeConfig",
    # tools
    "tool",
]

_WHERE = {"Orchestrator": "agents.api", "TaskHandle": "agents.api", "TaskResult": "agents.results",
          "RuntimeConfig": "agents.config", "tool": "agents.tools"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'agents' has no attribute {name!r}")
