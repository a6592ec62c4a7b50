"""Sharded Supervisors (``RuntimeConfig(supervisors=N)``): each task runs on the shard its id hashes to, every API
call of the driver finds it there, and a shard that dies is restarted by Ray and takes its own tasks over from
the store (their leases), while the other shards' tasks keep running where they are."""

from __future__ import annotations

import pytest
from support import tools as T
from support import wire

from agents import Deployment, Orchestrator, RuntimeConfig
from agents.cluster.shards import shard_of
from agents.llm import FunctionLLM

pytestmark = pytest.mark.ray


def _llm(plan: str) -> FunctionLLM:
    return FunctionLLM(lambda r: {"router": wire.route(), "planner": plan,
                                  "reflector": wire.reflection(answer="ok")}[r.role])


@pytest.fixture(params=["sqlite", "postgresql"])
def store_config(request, tmp_path) -> dict:
    if request.param == "sqlite":
        return {"store_path": tmp_path / "shards.db"}
    return {"store_url": request.getfixturevalue("postgres_url")}


def test_tasks_spread_over_the_shards_and_each_is_found_by_its_id(ray_session, store_config):
    import ray

    plan = wire.plan(wire.step(1, "lookup", {"city": "Rome"}))
    with Orchestrator(llm=_llm(plan), tools=T.ALL, config=RuntimeConfig(**store_config, supervisors=3)) as orch:
        handles = [orch.submit(f"population of Rome #{i}") for i in range(9)]
        results = [h.result(timeout=120) for h in handles]
        assert [r.status for r in results] == ["accepted"] * 9
        owners = {shard_of(h.task_id, 3) for h in handles}
        assert len(owners) >= 2, "nine random ids all hashed to one shard"
        # every shard ran exactly its own tasks: the others do not know them in memory
        for handle in handles:
            shard = orch._actors.supervisors[shard_of(handle.task_id, 3)]
            assert ray.get(shard.current_run.remote(handle.task_id)) == 1
            assert [e.type for e in orch.handle(handle.task_id).events()][-1] == "task_finished"
        pids = ray.get([s.pid.remote() for s in orch._actors.supervisors])
        assert len(set(pids)) == 3


def test_a_killed_shard_restarts_and_takes_its_own_tasks_over(ray_session, store_config):
    import ray

    note = f"shard-{id(store_config)}"
    T.reset(f"note-{note}")
    plan = wire.plan(wire.step(1, "append_note", {"note": note}),
                     wire.step(2, "sleepy", {"seconds": 3.0, "label": "slow"}, deps=[1]),
                     wire.step(3, "lookup", {"city": "Rome"}, deps=[2]))
    with Orchestrator(llm=_llm(plan), tools=T.ALL, config=RuntimeConfig(**store_config, supervisors=2)) as orch:
        handle = orch.submit("write a note, wait, look up Rome")
        for event in handle.events():
            if event.type == "step_finished" and event.payload.step_id == 1:
                break
        victim = orch._actors.supervisors[shard_of(handle.task_id, 2)]
        ray.kill(victim, no_restart=False)
        result = orch.handle(handle.task_id).result(timeout=180)
        assert result.status == "accepted", result.error
        assert [s.status for s in result.steps] == ["completed"] * 3
        assert T.count(f"note-{note}") == 1, "the write that completed before the kill ran again"


def test_roles_in_the_supervisors_run_tasks_without_role_actors(ray_session, tmp_path):
    """``roles_in_supervisors``: no router, planner or reviewer actor exists; each shard calls its own copies,
    and a task's steps still run on the executor actors, with events and results as usual."""
    plan = wire.plan(wire.step(1, "lookup", {"city": "Rome"}), wire.step(2, "lookup", {"city": "Paris"}),
                     wire.step(3, "lookup", {"city": "Berlin"}, deps=[1, 2]))
    config = RuntimeConfig(store_path=tmp_path / "colocated.db", supervisors=2,
                           deployment=Deployment(roles_in_supervisors=True))
    with Orchestrator(llm=_llm(plan), tools=T.ALL, config=config) as orch:
        assert orch._actors.routers == orch._actors.planners == orch._actors.reflectors == []
        handles = [orch.submit(f"three populations #{i}") for i in range(4)]
        results = [h.result(timeout=120) for h in handles]
        assert [r.status for r in results] == ["accepted"] * 4
        assert [(r.answer, [s.status for s in r.steps]) for r in results] == [("ok", ["completed"] * 3)] * 4
        types = [e.type for e in handles[0].events()]
        assert types[0] == "task_submitted" and types[-1] == "task_finished" and "routed" in types


def test_roles_in_the_supervisors_fail_a_task_with_the_roles_own_error(ray_session, tmp_path):
    """A planner that never writes a valid plan fails its task with the planner's message, as with role actors."""
    config = RuntimeConfig(store_path=tmp_path / "colocated-bad.db", deployment=Deployment(roles_in_supervisors=True))
    with Orchestrator(llm=_llm("this is not a plan"), tools=T.ALL, config=config) as orch:
        result = orch.submit("population of Rome").result(timeout=120)
        assert result.status == "failed"
        assert result.error and "plan" in result.error.lower() and "Traceback" not in result.error
