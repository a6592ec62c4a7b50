"""tetrarch: plan-then-execute agents on Ray.

    from agents import Orchestrator, RuntimeConfig, tool

Exports are resolved lazily (PEP 562) so that subpackages such as ``agents.llm`` and ``agents.store``
import without pulling in Ray and the whole runtime.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

__all__ = [
    # running tasks
    "Orchestrator",
    "TaskHandle",
    "TaskResult",
    # configuration
    "RuntimeConfig",
    "Deployment",
    "Observability",
    "ToolPolicy",
    # tools
    "tool",
]

_WHERE = {"Orchestrator": "agents.api", "TaskHandle": "agents.api", "TaskResult": "agents.results",
          "RuntimeConfig": "agents.config", "Deployment": "agents.config", "Observability": "agents.config",
          "ToolPolicy": "agents.config", "tool": "agents.tools"}


CLASHING_DISTRIBUTIONS = ("openai_agents",)
"""Distributions (their normalised names) that install a top-level ``agents`` package too: the OpenAI Agents SDK."""


def _check_no_clash() -> None:
    """Refuse to load beside a distribution that owns a package named ``agents`` as well: pip would have merged or
    shadowed the two packages' files, and whichever loads first breaks the other in ways that name neither. (The
    installed distributions' ``.dist-info`` folders are looked for directly: ``importlib.metadata`` would cost every
    ``import agents`` ~30 ms.)"""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            dist, _, rest = name.partition("-")
            if dist.lower() in CLASHING_DISTRIBUTIONS and rest.endswith(".dist-info"):
                from agents.errors import PackageClashError

                raise PackageClashError(
                    f"tetrarch and the OpenAI Agents SDK ({name} in {entry}) are installed in the same "
                    "environment, and both install a top-level package named `agents`, so neither works reliably "
                    "here. Use a separate virtual environment for each (or `pip uninstall openai-agents` in this "
                    "one); tetrarch's package names cannot change.")


_check_no_clash()


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'agents' has no attribute {name!r}")
