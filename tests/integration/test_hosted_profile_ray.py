"""The hosted-profile flows of tests/unit/llm/test_hosted_profile_flows.py on Ray: the roles run in actors, so every
Ray worker process records its calls into strategy code (``support.strategy_trace.worker_hook``, a
``worker_process_setup_hook``), and a private Ray is started with that hook."""

from __future__ import annotations

import pytest
from support import hosted_flows as flows
from support.strategy_trace import recorded, worker_hook
from support.tools import lookup, subtract

from agents import Deployment, Orchestrator, RuntimeConfig
from agents.llm import HOSTED, OpenAIChat
from agents.llm.fake_server import FakeOpenAIServer

pytestmark = pytest.mark.ray

@pytest.fixture(scope="module")
def private_ray():
    import ray

    if ray.is_initialized():  # a shared test Ray has no hook: this module starts its own
        ray.shutdown()
    yield
    if ray.is_initialized():
        ray.shutdown()


def test_hosted_tasks_on_ray_run_no_small_model_strategy(private_ray, tmp_path) -> None:
    import ray
    from ray import cloudpickle

    import support

    cloudpickle.register_pickle_by_value(support)  # the tools and flows: Ray workers need not import the tests
    traces = tmp_path / "traces"
    traces.mkdir()
    names = ("right plan", "argument error", "repeated read call", "answer without the final figure", "replan")
    models = {f.name: flows.Model(f) for f in flows.FLOWS if f.name in names}
    current: list[flows.Model] = []

    with FakeOpenAIServer(responder=lambda body: current[-1](body), stream_chunk_chars=32) as server:
        llm = OpenAIChat("hosted-model", base_url=server.base_url, api_key="sk-fake", max_retries=0)
        assert llm.profile is HOSTED
        deployment = Deployment(runtime_env={"worker_process_setup_hook": worker_hook(traces)},
                                ray_init_kwargs={"num_cpus": 2, "include_dashboard": False})
        config = RuntimeConfig(store_path=tmp_path / "t.db", task_timeout_s=120, deployment=deployment)
        orch = Orchestrator(llm=llm, tools=[lookup, subtract], config=config, runtime="ray")
        try:
            for name, model in models.items():
                current.append(model)
                result = orch.run(flows.TASK, timeout=120)
                assert result.status == model.flow.status, (name, result.status, result.error)
                assert dict(model.calls) == model.flow.calls, name
        finally:
            orch.shutdown()
            ray.shutdown()
    workers = list(traces.glob("*.started"))
    # The Supervisor (the roles run inside it by default: Deployment.roles_in_shards) and the executors each traced.
    assert len(workers) >= 3, workers
    assert recorded(traces) == [], "strategy code ran in a Ray worker"
