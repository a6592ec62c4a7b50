"""The plan cache's table: lookup by shape, outcomes, eviction, list/clear, persistence."""

from __future__ import annotations

import pickle

import pytest

from agents.memory.cache_store import EvictionPolicy, PlanCacheStore, should_evict
from agents.memory.errors import TemplateNotFoundError
from agents.memory.plan_cache import Adapt, Filled, extract_template, template_from_json, template_to_json
from planning.models import Plan

PLAN = Plan.model_validate({"steps": [
    {"step_id": 1, "description": "population of Paris", "tool_name": "lookup", "tool_input": {"city": "Paris"}},
    {"step_id": 2, "description": "population of Rome", "tool_name": "lookup", "tool_input": {"city": "Rome"}},
    {"step_id": 3, "description": "difference", "tool_name": "calculator",
     "tool_input": {"expression": "{$step_1_result} - {$step_2_result}"}, "depends_on": [1, 2]}]})
TASK = "Which is bigger, Paris or Rome, and by how much?"


@pytest.fixture
def cache(tmp_path):
    store = PlanCacheStore(tmp_path / "store.db", clock=iter(range(1000)).__next__)
    yield store
    store.close()


def test_templates_survive_json_exactly():
    template = extract_template(TASK, PLAN)
    assert template_from_json(template_to_json(template)) == template


def test_lookup_fills_a_new_task_of_the_same_shape_only(cache, tmp_path):
    cached = cache.put(TASK, PLAN)
    assert cached.sources == 1 and cached.hits == 0 and cached.template.tools == {"lookup", "calculator"}
    hit = cache.lookup("Which is bigger, Oslo or Lima, and by how much?")
    assert isinstance(hit.reuse, Filled) and hit.template_id == cached.template_id
    assert [s.tool_input.get("city") for s in hit.reuse.plan.steps] == ["Oslo", "Lima", None]
    assert cache.lookup("How far is Oslo from Lima?") is None
    assert cache.lookup("Which is bigger, Oslo or Lima, and by how much?", available_tools={"lookup"}) is None
    # The same shape and plan from another accepted task is the same template, with one more source.
    again = cache.put("Which is bigger, Oslo or Lima, and by how much?", hit.reuse.plan)
    assert again.template_id == cached.template_id and again.sources == 2
    assert [t.template_id for t in PlanCacheStore(tmp_path / "store.db").list()] == [cached.template_id]


def test_ambiguous_tasks_get_an_adapt_hit(cache):
    cache.put(TASK, PLAN)
    hit = cache.lookup("Which is bigger, Oslo or Oslo, and by how much?")
    assert isinstance(hit.reuse, Filled)  # two slots, both Oslo: unambiguous
    cache.clear()
    doubled = Plan.model_validate({"steps": [
        {"step_id": 1, "description": "Paris", "tool_name": "lookup", "tool_input": {"city": "Paris"}}]})
    cache.put("Compare Paris with Paris", doubled)
    hit = cache.lookup("Compare Oslo with Lima")
    assert isinstance(hit.reuse, Adapt) and "'Compare <<name_1>> with <<name_1>>'" in hit.reuse.guidance
    assert "Paris" not in hit.reuse.guidance  # the earlier task's values are not offered to copy


def test_wrong_reuses_are_recorded_and_bad_templates_evicted(cache):
    tid = cache.put(TASK, PLAN).template_id
    assert cache.record_outcome(tid, accepted=True).successes == 1
    first = cache.record_outcome(tid, accepted=False)
    assert (first.hits, first.failures, first.last_used_at is not None) == (2, 1, True)
    assert cache.record_outcome(tid, accepted=False) is None  # the second failure evicts it
    assert cache.lookup("Which is bigger, Oslo or Lima, and by how much?") is None and cache.list() == []
    with pytest.raises(TemplateNotFoundError, match="PlanCacheStore.list"):
        cache.record_outcome(tid, accepted=True)


def test_failure_rate_evicts_when_failures_outnumber_successes():
    policy = EvictionPolicy(max_failures=10, max_failure_rate=0.5, min_outcomes=2)
    assert not should_evict(1, 0, 1, policy)  # 1 of 2 outcomes failed: 50 %, not more
    assert should_evict(1, 0, 2, policy) and should_evict(1, 1, 3, policy)
    assert not should_evict(1, 3, 3, policy)


def test_list_clear_remove(cache):
    a = cache.put(TASK, PLAN).template_id
    b = cache.put("Population of Paris in 2020", Plan.model_validate({"steps": [
        {"step_id": 1, "description": "p", "tool_name": "lookup", "tool_input": {"city": "Paris"}}]})).template_id
    cache.record_outcome(b, accepted=True)
    assert [t.template_id for t in cache.list()] == [b, a]
    cache.remove(a)
    with pytest.raises(TemplateNotFoundError):
        cache.remove(a)
    assert cache.clear() == 1 and cache.list() == []
    err = pickle.loads(pickle.dumps(TemplateNotFoundError("tpl-1")))
    assert str(err) == str(TemplateNotFoundError("tpl-1")) and err.template_id == "tpl-1"
