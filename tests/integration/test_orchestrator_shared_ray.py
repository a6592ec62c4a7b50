"""Two Orchestrators in one process share its Ray: shutting down the one that started Ray must not break the
other (issue 19, bug 6: "Can't find actor"). Ray is started by the Orchestrator here, not by a fixture."""

from __future__ import annotations

import sys

import pytest
import ray
import support
from ray import cloudpickle
from support import tools as T
from support import wire

from agents import Deployment, Orchestrator, RuntimeConfig
from agents.llm import FunctionLLM

pytestmark = pytest.mark.ray


def _script(request) -> str:
    plan = wire.plan(wire.step(1, "lookup", {"city": "Rome"}))
    return {"router": wire.route(), "planner": plan, "reflector": wire.reflection(answer="2.8")}[request.role]


def test_shutting_down_the_orchestrator_that_started_ray_leaves_the_others_working(tmp_path):
    cloudpickle.register_pickle_by_value(support)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    if ray.is_initialized():
        ray.shutdown()
    config = RuntimeConfig(store_path=tmp_path / "t.db", deployment=Deployment(
        namespace="tetrarch-shared-ray", ray_init_kwargs={"num_cpus": 2, "include_dashboard": False}))
    first = Orchestrator(llm=FunctionLLM(_script), tools=T.ALL, config=config)
    second = Orchestrator(llm=FunctionLLM(_script), tools=T.ALL, config=config)
    try:
        first.shutdown()
        assert ray.is_initialized()
        result = second.run("population of Rome", timeout=120)
        assert result.status == "accepted" and result.steps[0].output == 2.8
    finally:
        second.shutdown()
    assert not ray.is_initialized()  # the last Orchestrator out shuts down the Ray it started
