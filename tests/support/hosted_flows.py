"""Scripted hosted-model flows for the profile tests: each a model that plays every role by its system prompt (the
hosted profile's templates), with the calls a flow must make. Used in-process (tests/unit/llm/) and on Ray
(tests/integration/)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from support import wire

MARKERS = {
    "router": "You route tasks",
    "planner": "You are the planner",
    "executor": "You carry out one step",
    "executor_repair": "A tool call was rejected",
    "reflector": "You review the steps run",
    "clarify_check": "CHECK ONE THING",
    "executor_figures": "A calculation needs numbers",
}
"""Each role's system prompt under the hosted profile (its default templates) holds one of these."""

TASK = "How many more million people live in Rome than in Paris?"


def _role_of(body: dict[str, Any]) -> str:
    system = "\n".join(str(m.get("content", "")) for m in body["messages"] if m.get("role") == "system")
    found = [role for role, marker in MARKERS.items() if marker in system]
    assert len(found) == 1, f"no single role marker in the system prompt: {system[:200]!r}"
    return found[0]


def _user_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body["messages"] if m.get("role") == "user")


@dataclass
class Flow:
    """One scripted model: a reply per role, each a text or a function of the request's user text."""

    name: str
    replies: dict[str, str | Callable[[str, int], str]]
    status: str
    calls: dict[str, int]
    """The model calls each role makes, exactly."""
    answer_has: str = ""
    maybe: tuple[str, ...] = ()
    """Roles whose calls are not counted: the planner started beside the router, cancelled on another route."""


@dataclass
class Model:
    flow: Flow
    calls: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> str:
        role = _role_of(body)
        with self._lock:
            self.calls[role] += 1
            n = self.calls[role]
        reply = self.flow.replies.get(role)
        assert reply is not None, f"flow {self.flow.name}: unexpected {role} call"
        return reply if isinstance(reply, str) else reply(_user_text(body), n)


RIGHT_PLAN = wire.plan(wire.step(1, "lookup", {"city": "Rome"}), wire.step(2, "lookup", {"city": "Paris"}),
                       wire.step(3, "subtract", {"a": "$step_1_result", "b": "$step_2_result"}, deps=[1, 2]))
ACCEPT = wire.reflection("accept", answer="Rome has 0.7 million more people than Paris.")


def _replan_then_accept(text: str, n: int) -> str:
    if n == 1:
        return wire.reflection("replan", (2, 2, 2), answer=None, feedback="compute the difference")
    return ACCEPT


def _lookups_then_right_plan(text: str, n: int) -> str:
    return wire.plan(wire.step(1, "lookup", {"city": "Rome"}), wire.step(2, "lookup", {"city": "Paris"})) \
        if n == 1 else RIGHT_PLAN


FLOWS = [
    Flow("right plan", {"router": wire.route(), "planner": RIGHT_PLAN, "reflector": ACCEPT},
         "accepted", {"router": 1, "planner": 1, "reflector": 1}, "0.7"),
    Flow("reasoning step", {
        "router": wire.route(),
        "planner": wire.plan(wire.step(1, "lookup", {"city": "Rome"}), wire.step(2, "lookup", {"city": "Paris"}),
                             wire.step(3, None, deps=[1, 2], description="say which is larger")),
        "executor": "Rome is larger.", "reflector": ACCEPT},
         "accepted", {"router": 1, "planner": 1, "executor": 1, "reflector": 1}, "0.7"),
    # Text where the tool wants a number: the one argument repair (general), not figure reading.
    Flow("argument error", {
        "router": wire.route(),
        "planner": wire.plan(wire.step(1, "lookup", {"city": "Rome"}), wire.step(2, "lookup", {"city": "Paris"}),
                             wire.step(3, "subtract", {"a": "{$step_1_result} million", "b": "$step_2_result"},
                                       deps=[1, 2])),
        "executor_repair": json.dumps({"a": 2.8, "b": 2.1}), "reflector": ACCEPT},
         "accepted", {"router": 1, "planner": 1, "executor_repair": 1, "reflector": 1}, "0.7"),
    # The same read call three times: a small model's loop; a hosted model's plan runs as written.
    Flow("repeated read call", {
        "router": wire.route(),
        "planner": wire.plan(*(wire.step(i, "lookup", {"city": "Rome"}) for i in (1, 2, 3))),
        "reflector": wire.reflection("accept", answer="Rome has 2.8 million people.")},
         "accepted", {"router": 1, "planner": 1, "reflector": 1}, "2.8"),
    # An accept whose answer leaves out the plan's final figure: no second look on the hosted profile.
    Flow("answer without the final figure", {"router": wire.route(), "planner": RIGHT_PLAN,
                                             "reflector": wire.reflection("accept", answer="Rome is larger.")},
         "accepted", {"router": 1, "planner": 1, "reflector": 1}, "Rome is larger"),
    # A question back stands as the router wrote it (no clarify_check call).
    Flow("question back", {"router": wire.route("clarify", answer="Which cities do you mean?"),
                           "planner": RIGHT_PLAN},
         "clarify", {"router": 1}, "Which cities", maybe=("planner",)),
    Flow("replan", {"router": wire.route(), "planner": _lookups_then_right_plan, "reflector": _replan_then_accept},
         "accepted", {"router": 1, "planner": 2, "reflector": 2}, "0.7"),
]
