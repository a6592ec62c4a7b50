"""Typed outputs on Ray: the type crosses to the Supervisor and the reviewer's actor by its import path, and the
driver's result holds the validated value."""

from __future__ import annotations

import pydantic
import pytest
from support import tools as T
from support import wire

from agents import Orchestrator, RuntimeConfig
from agents.llm import ScriptedLLM
from agents.outputs import OutputTypeError
from planning.models import Scores

pytestmark = pytest.mark.ray

TASK = "Which is bigger, Paris or Rome, and by how much?"
PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}))


def test_a_typed_output_on_ray_is_validated_and_repaired(ray_session, tmp_path):
    # Scores: a pydantic model the actors import by its path (planning.models:Scores); the first answer misses a
    # field and is repaired with the validation error.
    llm = ScriptedLLM({"router": [wire.route(), wire.route()], "planner": [PLAN, PLAN],
                       "reflector": [wire.reflection(answer='{"completeness": 5, "correctness": 4}'),
                                     wire.reflection(answer='{"completeness": 5, "correctness": 4, "format": 3}'),
                                     wire.reflection(answer='["Rome", "Paris"]')]})
    orch = Orchestrator(llm=llm, tools=T.ALL, config=RuntimeConfig(store_path=tmp_path / "t.db"))
    try:
        typed = orch.run(TASK, timeout=60, output_type=Scores)
        listed = orch.run(TASK, timeout=60, output_type=list[str])
        class Local(pydantic.BaseModel):
            bigger: str

        with pytest.raises(OutputTypeError, match="cannot be imported by its path"):
            orch.submit(TASK, output_type=Local)
    finally:
        orch.shutdown()
    assert typed.status == "accepted", typed.error
    assert typed.output == Scores(completeness=5, correctness=4, format=3)
    assert typed.output_type == "planning.models:Scores"
    assert listed.output == ["Rome", "Paris"]
