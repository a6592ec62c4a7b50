"""A planner reply that keeps writing the same call: how a looping model shows in its plan stream.

The embedded 1.5B planner sometimes writes one call (and a reasoning step after it) again and again until it
runs out of steps: one benchmark stream repeated the same ``doc_search`` up to step 41 of 50, 160 s, while the
reasoning steps it had already emitted waited behind it at the one-request model server. A plan may repeat a
call on purpose (two branches that each need the same lookup), so ``planning.validate`` accepts repeats; a
*third* copy within one reply is taken as the loop instead — twice is still a plausible plan, a third equal read
adds nothing the first one did not return. The planner role asks this of each streamed step of a read tool and
stops reading at the first flagged one (``agents/roles/planner.py``); equal writes are separate side effects and
are never asked about.

    >>> from planning.models import PlanStep
    >>> def search(sid): return PlanStep(step_id=sid, tool_name="doc_search", tool_input={"query": "Rhine"})
    >>> def think(sid): return PlanStep(step_id=sid, depends_on=[sid - 1])
    >>> reply = [search(1), think(2), search(3), think(4)]
    >>> repeated_call(search(3), reply[:2]) is None
    True
    >>> repeated_call(search(5), reply)
    RepeatedCall(step_id=5, tool_name='doc_search', repeats=(1, 3))
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from planning.delta import call_key
from planning.models import PlanStep

__all__ = ["LOOP_COPIES", "RepeatedCall", "repeated_call"]

LOOP_COPIES = 3
"""The copy of one call that marks a looping reply (see the module docstring for why not the second)."""


class RepeatedCall(BaseModel):
    """``step_id`` makes the same ``tool_name`` call (same input, same dependencies) as the steps ``repeats``."""

    model_config = ConfigDict(frozen=True)

    step_id: int
    tool_name: str
    repeats: tuple[int, ...]

    def describe(self) -> str:
        earlier = ", ".join(map(str, self.repeats[:-1])) + f" and {self.repeats[-1]}"
        return (f"step {self.step_id} repeats the {self.tool_name} call of steps {earlier} (same input, same "
                f"dependencies): the planner was looping, so its plan ends before step {self.step_id}")


def repeated_call(step: PlanStep, earlier: Iterable[PlanStep], *,
                  copies: int = LOOP_COPIES) -> RepeatedCall | None:
    """The earlier steps ``step`` repeats when it is at least the ``copies``-th copy of their call, else None.

    A reasoning step (``tool_name`` None) is never a repeat: what it does is its description, which the call
    key leaves out, so two of them after the same steps may well ask two different questions. Only the earlier
    steps with the same call matter, so a caller that indexes its steps by ``planning.delta.call_key`` may pass
    just those (O(1) per streamed step instead of O(steps so far))."""
    if step.tool_name is None:
        return None
    key = call_key(step)
    same = tuple(s.step_id for s in earlier if call_key(s) == key)
    if len(same) < copies - 1:
        return None
    return RepeatedCall(step_id=step.step_id, tool_name=step.tool_name, repeats=same)
