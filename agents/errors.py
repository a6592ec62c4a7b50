"""The error tree users see. Misuse errors (the developer's mistake) are separate from run-time errors.

A task that fails never raises out of ``handle.result()``: its ``TaskResult.error`` explains it. The
exceptions here are for the Orchestrator itself (bad configuration, Ray unreachable, unknown task).
"""

from __future__ import annotations

__all__ = [
    "TetrarchError",
    "UsageError",
    "ConfigError",
    "UnknownTaskError",
    "TaskNotWaitingError",
    "ClusterUnavailableError",
    "ClusterVersionMismatchError",
    "CodeShippingError",
    "ActorStartError",
    "OrchestratorClosedError",
    "TaskTimeoutError",
    "InvalidLLMOutputError",
]


class TetrarchError(Exception):
    """Base of every error tetrarch raises."""


class UsageError(TetrarchError):
    """The API was used in a way it does not support; the message says how to use it."""


class ConfigError(UsageError):
    """A configuration value is invalid or inconsistent."""


class UnknownTaskError(UsageError):
    def __init__(self, task_id: str) -> None:
        super().__init__(
            f"no task {task_id!r} in this store; list tasks with `tetrarch tasks` or check RuntimeConfig.store_path"
        )
        self.task_id = task_id


class TaskNotWaitingError(UsageError):
    def __init__(self, task_id: str, status: str) -> None:
        super().__init__(
            f"task {task_id!r} is {status!r}, not waiting for a human; respond() only answers escalated tasks"
        )
        self.task_id = task_id
        self.status = status


class ClusterUnavailableError(TetrarchError):
    """Ray could not be started or reached."""


class ActorStartError(ClusterUnavailableError):
    """Ray could not place or start the role actors (missing resources, no free CPUs, dead nodes)."""


class ClusterVersionMismatchError(ClusterUnavailableError):
    """The cluster runs a different Ray or Python version than this driver."""


class CodeShippingError(ClusterUnavailableError):
    """The project or tool code could not be packaged or uploaded to the cluster (runtime_env)."""


class OrchestratorClosedError(UsageError):
    def __init__(self) -> None:
        super().__init__("this Orchestrator was shut down; create a new one")


class TaskTimeoutError(TetrarchError, TimeoutError):
    """``handle.result(timeout=...)`` elapsed before the task finished (the task keeps running)."""


class InvalidLLMOutputError(TetrarchError):
    """A role's LLM output stayed invalid after its one repair round (internal; becomes a failed task)."""

    def __init__(self, role: str, error: str, raw: str = "") -> None:
        super().__init__(f"the {role} returned invalid output twice (after one repair round): {error}")
        self.role = role
        self.error = error
        self.raw = raw
        self.usage = None
        self.records: tuple = ()

    def with_usage(self, usage, records: tuple) -> "InvalidLLMOutputError":
        """Attach what the failed calls cost, so budgets stay exact even for failures."""
        self.usage = usage
        self.records = records
        return self
