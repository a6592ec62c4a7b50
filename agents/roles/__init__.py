"""The four roles as plain async classes — no Ray: ``Router``, ``Planner`` (a streaming generator of plan
steps), ``Executor`` (runs one step: a tool call or a reasoning step) and ``Reflector``.

``messages`` holds the values that cross between the engine and the roles; ``json_call`` the one LLM call with
its repair round that every role shares; ``render`` how plans and results are shown to a model.
``agents.cluster`` turns these classes into Ray actors; ``agents.engine.runtime.LocalRuntime`` calls them
in-process.
"""

__all__: list[str] = []
