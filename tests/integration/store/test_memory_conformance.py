"""Sessions and the plan cache on both backends: the SQLite file and a real PostgreSQL server (a cluster's
memory lives on the task store's server, so every Supervisor shard reads it). The user's documents stay in
SQLite (FTS5's bm25 ranking), so they are not part of this suite."""

from __future__ import annotations

import pytest

from agents.memory.cache_store import PlanCacheStore
from agents.memory.errors import SessionNotFoundError
from agents.memory.plan_cache import Filled
from agents.memory.sessions import SessionStore
from planning.models import Plan

PLAN = Plan.model_validate({"steps": [
    {"step_id": 1, "description": "population of Paris", "tool_name": "lookup", "tool_input": {"city": "Paris"}},
    {"step_id": 2, "description": "population of Rome", "tool_name": "lookup", "tool_input": {"city": "Rome"}},
    {"step_id": 3, "description": "difference", "tool_name": "calculator",
     "tool_input": {"expression": "{$step_1_result} - {$step_2_result}"}, "depends_on": [1, 2]}]})
TASK = "Which is bigger, Paris or Rome, and by how much?"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def where(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "memory.db")
    return request.getfixturevalue("postgres_url")


def test_sessions_keep_their_turns_across_openings(where):
    store = SessionStore(where, new_id=lambda: "s1")
    assert store.create().session_id == "s1" and store.create("s1").turns == 0  # creating it again is a no-op
    turn = store.begin_turn("s1", "Population of Paris?", task_id="t1")
    store.finish_turn("s1", turn.turn_no, answer="2.1 million (50% of it).", status="accepted")
    store.append_turn("s1", "And Rome?", "2.8 million.", "accepted", "t2")
    store.close()
    again = SessionStore(where)  # another process opening the same store sees every finished turn
    assert [t.answer for t in again.turns("s1")] == ["2.1 million (50% of it).", "2.8 million."]
    assert again.get("s1").turns == 2 and again.turn_for_task("t2").turn_no == 2
    again.delete("s1")
    with pytest.raises(SessionNotFoundError):
        again.get("s1")
    again.close()


def test_the_plan_cache_fills_a_task_of_the_same_shape(where):
    cache = PlanCacheStore(where)
    cached = cache.put(TASK, PLAN)
    assert cache.put(TASK, PLAN).sources == 2
    hit = cache.lookup("Which is bigger, Oslo or Lima, and by how much?")
    assert isinstance(hit.reuse, Filled) and hit.template_id == cached.template_id
    assert cache.record_outcome(cached.template_id, accepted=True).successes == 1
    assert [t.template_id for t in PlanCacheStore(where).list()] == [cached.template_id]
    assert cache.clear() == 1 and cache.list() == []
    cache.close()
