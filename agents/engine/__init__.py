"""The per-task engine, plain async Python (no Ray): ``supervisor`` (every task's state machine as a
coroutine, live events, the store), ``task_runner`` (ROUTE → PLAN/EXECUTE → REFLECT → decision),
``execution`` (one plan version: streamed steps fed to ``dag.Scheduler``, ready steps dispatched),
``task_state`` (the checkpoint), ``sink`` (where a running task records what happens), ``budget`` (token and
call caps), ``runtime`` (how the engine reaches the roles: the ``Runtime`` protocol and ``LocalRuntime``;
``agents.cluster.ray_runtime`` is the Ray one) and ``inprocess`` (``Orchestrator(runtime="inprocess")``: the
Supervisor core over ``LocalRuntime`` on a thread of its own).
"""

__all__: list[str] = []
