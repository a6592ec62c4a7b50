"""tetrarch: plan-then-execute agents on Ray.

    from agents import Orchestrator, RuntimeConfig, tool
"""

from agents.api import Orchestrator, TaskHandle
from agents.config import RuntimeConfig
from agents.results import TaskResult
from agents.tools import tool

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
