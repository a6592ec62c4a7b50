"""Sessions and the plan cache wired into the engine: the real Supervisor core, roles and SQLite store,
in-process with scripted models (no Ray)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import wire
from support.local import run_in_turn

from agents.config import RuntimeConfig
from agents.llm.base import LLMRequest
from agents.memory import PlanCacheStore, SessionNotFoundError, SessionStore
from prompts import count_tokens


def _user(request: LLMRequest) -> str:
    return request.messages[-1]["content"]


# ---------------------------------------------------------------------------------------------- sessions
class TwoCities:
    """Turn 1 looks up Paris; the follow-up can only subtract Paris from Rome if the prompt holds turn 1."""

    def __init__(self) -> None:
        self.prompts: dict[str, list[str]] = {"router": [], "planner": [], "reflector": []}

    def __call__(self, request: LLMRequest) -> str:
        text = _user(request)
        self.prompts[request.role].append(text)
        if request.role == "router":
            return wire.route()
        if request.role == "reflector":
            return wire.reflection(answer="Paris has 2.1 million people." if "Rome" not in text else
                                   "Rome is bigger, by 0.7 million.")
        if "Task: What is the population of Paris?" in text:
            return wire.plan(wire.step(1, "lookup", {"city": "Paris"}, description="population of Paris"))
        earlier = re.search(r"lookup \(population of Paris\): ([\d.]+)", text)
        paris = float(earlier.group(1)) if earlier else 0.0
        return wire.plan(wire.step(1, "lookup", {"city": "Rome"}, description="population of Rome"),
                         wire.step(2, "subtract", {"a": "$step_1_result", "b": paris}, deps=[1],
                                   description="Rome minus Paris"))


def test_a_follow_up_sees_the_previous_answer_and_its_step_outputs(tmp_path: Path) -> None:
    config = RuntimeConfig(store_path=tmp_path / "t.db")
    sid = SessionStore(config.store_path).create().session_id
    llm = TwoCities()
    (first, _), (second, _) = run_in_turn(config, llm, ["What is the population of Paris?",
                                                    "And Rome? By how much is it bigger?"], sid)
    assert first.status == second.status == "accepted"
    assert [s.output for s in second.steps] == [2.8, 0.7]  # used turn 1's 2.1 from the prompt
    follow_router, follow_planner = llm.prompts["router"][1], llm.prompts["planner"][1]
    for prompt in (follow_router, follow_planner):
        assert "Question: What is the population of Paris?" in prompt and "Paris has 2.1 million" in prompt
        assert "<untrusted-data" in prompt  # the earlier answer and tool output are fenced as data
    assert "Earlier turns" not in llm.prompts["router"][0]  # the first turn has no history
    turns = SessionStore(config.store_path).turns(sid)
    assert [(t.turn_no, t.status, t.task_id) for t in turns] == [(1, "accepted", first.task_id),
                                                                 (2, "accepted", second.task_id)]
    assert turns[1].answer == "Rome is bigger, by 0.7 million." and [e.output for e in turns[1].evidence] == ["2.8", "0.7"]


def test_history_stays_within_its_token_budget_over_fifty_turns(tmp_path: Path) -> None:
    budget = 300
    config = RuntimeConfig(store_path=tmp_path / "t.db", session_history_tokens=budget, speculative_planning=False)
    sid = SessionStore(config.store_path).create().session_id
    routers: list[str] = []

    def fn(request: LLMRequest) -> str:
        routers.append(_user(request))
        n = len(routers)
        return wire.route("direct", answer=f"Answer {n}. " + "More detail about it. " * 20)

    results = run_in_turn(config, fn, [f"Question number {n}?" for n in range(1, 51)], sid)
    assert all(r.status == "accepted" for r, _ in results)
    histories = [p.rsplit("\n\nTask: ", 1)[0] if "\n\nTask: " in p else "" for p in routers]
    sizes = [count_tokens(h) for h in histories]
    assert max(sizes) <= budget and min(sizes[1:]) > 0
    last = histories[-1]
    assert "Question: Question number 49?" in last  # the newest turn verbatim
    assert "earlier turns not shown" in last  # the oldest ones counted, not shown
    assert "Question number 1?" not in last


def test_a_session_continued_by_a_new_supervisor_sees_its_earlier_turns(tmp_path: Path) -> None:
    config = RuntimeConfig(store_path=tmp_path / "t.db")
    sid = SessionStore(config.store_path).create().session_id
    run_in_turn(config, TwoCities(), ["What is the population of Paris?"], sid)
    later = TwoCities()  # a new Supervisor, roles and model: only the store file is shared
    ((result, _),) = run_in_turn(config, later, ["And Rome? By how much is it bigger?"], sid)
    assert [s.output for s in result.steps] == [2.8, 0.7]
    assert "Question: What is the population of Paris?" in later.prompts["planner"][0]
    assert SessionStore(config.store_path).get(sid).turns == 2


def test_an_unknown_session_is_a_typed_error_that_says_so(tmp_path: Path) -> None:
    config = RuntimeConfig(store_path=tmp_path / "t.db")
    with pytest.raises(SessionNotFoundError, match="nope"):
        run_in_turn(config, TwoCities(), ["What is the population of Paris?"], "nope")


# ---------------------------------------------------------------------------------------------- plan cache
class CityPopulation:
    """The planner writes one lookup for the city named in the task; ``reject`` cities get a replan."""

    def __init__(self, reject: frozenset[str] = frozenset(), verdict: str = "replan") -> None:
        self.calls = {"router": 0, "planner": 0, "reflector": 0}
        self.reject, self.verdict = reject, verdict
        self.rejected: set[str] = set()

    def __call__(self, request: LLMRequest) -> str:
        self.calls[request.role] += 1
        text = _user(request)
        if request.role == "router":
            return wire.route()
        city = re.findall(r"population of (\w+)", text)[-1]
        if request.role == "planner":
            steps = [wire.step(1, "lookup", {"city": city}, description=f"population of {city}")]
            if "Feedback" in text:  # the replan: a different (two-step) plan
                steps.append(wire.step(2, "subtract", {"a": "$step_1_result", "b": 0}, deps=[1]))
            return wire.plan(*steps)
        if city in self.reject and city not in self.rejected:
            self.rejected.add(city)
            return wire.reflection(self.verdict, scores=(2, 2, 5), answer=None, feedback="wrong plan")
        return wire.reflection(answer=f"{city}: done")


def _cache_hit(events: list[dict]) -> dict | None:
    return next(e["payload"].get("plan_cache") for e in events if e["type"] == "routed")


def test_a_cache_hit_fills_the_plan_by_code_and_skips_the_planner(tmp_path: Path) -> None:
    config = RuntimeConfig(store_path=tmp_path / "t.db", plan_cache=True)
    llm = CityPopulation()
    (seed, seed_events), (reuse, reuse_events) = run_in_turn(
        config, llm, ["What is the population of Paris?", "What is the population of Rome?"])
    assert seed.status == reuse.status == "accepted"
    assert _cache_hit(seed_events) is None and seed.usage.by_role["planner"].llm_calls == 1
    hit = _cache_hit(reuse_events)
    assert hit is not None and hit["mode"] == "filled"
    planner = reuse.usage.by_role.get("planner")
    assert planner is None or planner.llm_calls == 0
    assert llm.calls["planner"] == 1 and reuse.usage.total.llm_calls == 2  # router + reflector only
    assert [(s.tool_input, s.output) for s in reuse.steps] == [({"city": "Rome"}, 2.8)]
    (cached,) = PlanCacheStore(config.store_path).list()
    assert (cached.template_id, cached.hits, cached.successes, cached.failures) == (hit["template_id"], 1, 1, 0)


def test_the_cache_is_off_by_default(tmp_path: Path) -> None:
    config = RuntimeConfig(store_path=tmp_path / "t.db")
    llm = CityPopulation()
    results = run_in_turn(config, llm, ["What is the population of Paris?", "What is the population of Rome?"])
    assert llm.calls["planner"] == 2 and all(_cache_hit(ev) is None for _, ev in results)
    assert PlanCacheStore(config.store_path).list() == []


def test_wrong_reuses_are_recorded_and_the_template_evicted(tmp_path: Path) -> None:
    config = RuntimeConfig(store_path=tmp_path / "t.db", plan_cache=True)
    llm = CityPopulation(reject=frozenset({"Rome", "Berlin"}), verdict="escalate")
    cache = PlanCacheStore(config.store_path)
    run_in_turn(config, llm, ["What is the population of Paris?"])
    (template,) = cache.list()
    ((first, events),) = run_in_turn(config, llm, ["What is the population of Rome?"])
    assert _cache_hit(events)["template_id"] == template.template_id and first.status == "escalated"
    assert cache.get(template.template_id).failures == 1  # one wrong reuse: kept (it worked for Paris)
    ((second, events),) = run_in_turn(config, llm, ["What is the population of Berlin?"])
    assert _cache_hit(events)["template_id"] == template.template_id and second.status == "escalated"
    assert cache.list() == []  # evicted after 2 wrong reuses
    ((third, events),) = run_in_turn(config, llm, ["What is the population of Oslo?"])
    assert _cache_hit(events) is None and third.usage.by_role["planner"].llm_calls == 1


def test_a_replanned_reuse_counts_as_wrong_and_its_accepted_plan_is_learned(tmp_path: Path) -> None:
    config = RuntimeConfig(store_path=tmp_path / "t.db", plan_cache=True)
    llm = CityPopulation(reject=frozenset({"Rome"}))
    cache = PlanCacheStore(config.store_path)
    run_in_turn(config, llm, ["What is the population of Paris?"])
    (template,) = cache.list()
    ((reuse, _),) = run_in_turn(config, llm, ["What is the population of Rome?"])
    assert reuse.status == "accepted" and reuse.replans == 1  # the reflector caught it; the replan fixed it
    assert cache.get(template.template_id).failures == 1
    learned = [t for t in cache.list() if t.template_id != template.template_id]
    assert [len(t.template.steps) for t in learned] == [2]


def test_a_session_follow_up_neither_uses_nor_feeds_the_cache(tmp_path: Path) -> None:
    config = RuntimeConfig(store_path=tmp_path / "t.db", plan_cache=True)
    sid = SessionStore(config.store_path).create().session_id
    llm = CityPopulation()
    results = run_in_turn(config, llm, ["What is the population of Paris?", "What is the population of Rome?"], sid)
    assert llm.calls["planner"] == 2 and _cache_hit(results[1][1]) is None
    assert len(PlanCacheStore(config.store_path).list()) == 1  # the first turn (no history) was learned
