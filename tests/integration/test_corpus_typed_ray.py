"""The corpus benchmark's typed mode end to end on Ray (issue 62): the simulated model writes each held-out task's
gold value under the output schema its reviewer is shown, in the terse form (hosted) and the JSON form (the
embedded model's profile); every task comes back accepted with ``result.output`` graded right, and the run says it
was typed. The embedded model's run is the lead's: ``tetrarch bench --suite corpus --split heldout --llm local
--system tetrarch --typed``."""

from __future__ import annotations

import pytest

from agents.llm.profile import HOSTED, SMALL_LOCAL
from agents.llm.simulated import LatencyModel
from benchmarks.runner import run_suite, to_jsonable
from benchmarks.suite import expected_output, load_suite
from benchmarks.typed_sim import TypedSimulatedLLM

pytestmark = pytest.mark.ray

FAST = LatencyModel(0.01, 100_000, 1_000_000)


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=["terse", "json"])
def test_a_typed_corpus_run_grades_the_validated_outputs(ray_session, profile):
    tasks = load_suite("corpus", limit=4, split="heldout")  # one task of every kind
    llm = TypedSimulatedLLM(tasks, FAST, model="simulated-typed", profile=profile)
    run = run_suite("corpus", llm=llm, limit=4, split="heldout", systems=("tetrarch",), typed=True,
                    progress=lambda _: None)
    doc = to_jsonable(run)
    assert doc["answers"] == "typed"
    outputs = {r["task_id"]: r["output"] for r in doc["runs"]}
    assert outputs == {t.id: expected_output(t) for t in tasks}
    assert [(r["status"], r["correct"]) for r in doc["runs"]] == [("accepted", True)] * 4
    assert doc["systems"]["tetrarch"]["accuracy"] == 1.0
