"""A conversation with an ``Orchestrator``: each turn is an ordinary task that also sees the earlier turns.

The session and its turns live in the task store's file (``RuntimeConfig.store_path``), so
``orch.session(s.id)`` continues a session from another process or a new Orchestrator. See docs/memory.md.

Example:
    >>> s = orch.session()                                                        # doctest: +SKIP
    >>> s.run("What is the population of Paris?").answer                          # doctest: +SKIP
    'About 2.1 million.'
    >>> s.run("And Rome? Which of the two is bigger?").answer                     # doctest: +SKIP
    'Rome (2.8 million) is bigger than Paris (2.1 million).'
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from agents.memory.sessions import SessionStore, Turn
from agents.results import TaskResult

__all__ = ["Session"]


class Session:
    """A handle on one session; get it from ``orch.session()`` (new) or ``orch.session(session_id)``.
    (It holds the Orchestrator's submit function, not the Orchestrator: agents.api imports this module.)"""

    def __init__(self, submit: Callable[..., Any], store_path: str | os.PathLike[str],
                 session_id: str) -> None:
        self._submit, self._store_path = submit, store_path
        self.id = session_id

    def __repr__(self) -> str:
        return f"Session(id={self.id!r})"

    def submit(self, task: str, *, output_type: Any = None) -> Any:
        """Start the next turn and return its ``TaskHandle`` at once (the turn sees every turn finished before
        now). ``output_type``: as ``Orchestrator.submit``'s."""
        return self._submit(task, self.id, output_type)

    def run(self, task: str, timeout: float | None = None, *, output_type: Any = None) -> TaskResult:
        """``submit(task, output_type=...).result(timeout)``."""
        result: TaskResult = self.submit(task, output_type=output_type).result(timeout=timeout)
        return result

    def turns(self) -> list[Turn]:
        """The session's turns so far, oldest first (question, answer, status, task id, step outputs used)."""
        store = SessionStore(self._store_path)
        try:
            return store.turns(self.id)
        finally:
            store.close()
