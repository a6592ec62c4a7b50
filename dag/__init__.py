"""The pure DAG core: typed ``$step_N_result`` references, the scheduler state machine, graph algorithms and
diagrams. No Ray, no asyncio, no clock: everything here is tested without a runtime.

Example:
    >>> from dag import Scheduler, compile_value, resolve
    >>> s = Scheduler(); s.add_step(1); s.seal(); s.ready()
    [1]
    >>> resolve(compile_value("$step_1_result.n"), {1: {"n": 3}})
    3
"""

from dag.errors import (
    CycleError,
    DagError,
    DuplicateStepError,
    InvalidTransitionError,
    NotReadyError,
    RefResolutionError,
    SchedulerSealedError,
    SelfDependencyError,
    SnapshotError,
    StaleAttemptError,
    UnknownDependencyError,
    UnknownStepError,
)
from dag.graph import build_graph, critical_path, find_cycle, topological_levels
from dag.refs import Ref, Template, compile_value, decompile, references, resolve
from dag.render import to_dot, to_mermaid
from dag.scheduler import Scheduler, StepState

__all__ = [
    "CycleError",
    "DagError",
    "DuplicateStepError",
    "InvalidTransitionError",
    "NotReadyError",
    "Ref",
    "RefResolutionError",
    "Scheduler",
    "SchedulerSealedError",
    "SelfDependencyError",
    "SnapshotError",
    "StaleAttemptError",
    "StepState",
    "Template",
    "UnknownDependencyError",
    "UnknownStepError",
    "build_graph",
    "compile_value",
    "critical_path",
    "decompile",
    "find_cycle",
    "references",
    "resolve",
    "to_dot",
    "to_mermaid",
    "topological_levels",
]
