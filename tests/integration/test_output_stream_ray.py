"""A typed task's answer, streamed, on Ray: the reviewer actor streams the answer's JSON text, and the driver's
handle, which holds the type the caller submitted, turns it into validated partial values; the last one is the
result's output."""

from __future__ import annotations

import pytest
from support import tools as T
from support import wire

from agents import Orchestrator, RuntimeConfig
from agents.llm import ScriptedLLM
from agents.output_stream import OutputReset
from planning.models import Scores

pytestmark = pytest.mark.ray

TASK = "Which is bigger, Paris or Rome, and by how much?"
PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}))
_HEAD = '{"scores":{"completeness":5,"correctness":5,"format":5},"overall_pass":true,"action":"accept",' \
        '"retry_details":null,"feedback":"","answer":'


def test_stream_output_on_ray_yields_validated_values_ending_in_the_output(ray_session, tmp_path):
    llm = ScriptedLLM({"router": [wire.route(), wire.route()], "planner": [PLAN, PLAN],
                       "reflector": [_HEAD + '["Rome","Paris","Milan"]}',
                                     _HEAD + '{"completeness":5,"correctness":4,"format":3}}']},
                      stream_chunk_size=4, chunk_delay_s=0.005)
    orch = Orchestrator(llm=llm, tools=T.ALL, config=RuntimeConfig(store_path=tmp_path / "t.db"))
    try:
        listed = orch.submit(TASK, output_type=list[str])
        values = list(listed.stream_output())
        listed_result = listed.result(timeout=60)
        scored = orch.submit(TASK, output_type=Scores)
        pieces = list(scored.stream_answer())
        scored_values = list(scored.stream_output())  # read again from the store after the task ended
        scored_result = scored.result(timeout=60)
    finally:
        orch.shutdown()
    assert listed_result.status == "accepted", listed_result.error
    assert values == [[], ["Rome"], ["Rome", "Paris"], ["Rome", "Paris", "Milan"]]
    assert values[-1] == listed_result.output
    assert scored_result.status == "accepted", scored_result.error
    assert len(pieces) > 3 and "".join(pieces) == scored_result.answer  # type: ignore[arg-type]
    assert not any(isinstance(v, OutputReset) for v in scored_values)
    assert scored_values == [Scores(completeness=5, correctness=4, format=3)] == [scored_result.output]
