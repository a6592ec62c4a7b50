"""Sessions and the plan cache through the public API, in process (``runtime="inprocess"``: the same Supervisor
core, roles and store as on Ray; nothing here is about Ray itself)."""

from __future__ import annotations

import re

import pytest
from support import tools as T
from support import wire

from agents import Orchestrator, RuntimeConfig
from agents.llm import FunctionLLM
from agents.memory import SessionNotFoundError

def two_cities(request) -> str:
    """Turn 1 looks up Paris; the follow-up subtracts Paris from Rome using the number its prompt holds."""
    text = request.messages[-1]["content"]
    if request.role == "router":
        return wire.route()
    if request.role == "reflector":
        # Each answer states only what its own results show (code refuses an accept whose figure no result holds).
        if "By how much" in text:
            return wire.reflection(answer="Rome is bigger, by 0.7 million.")
        if "Rome" in text:
            return wire.reflection(answer="Rome has 2.8 million people.")
        return wire.reflection(answer="Paris has 2.1 million people." if "Paris" in text else "Looked it up.")
    city = re.findall(r"population of (\w+)", text)[-1] if "population of" in text else "Rome"
    if "Task: And Rome?" not in text:
        return wire.plan(wire.step(1, "lookup", {"city": city}, description=f"population of {city}"))
    earlier = re.search(r"lookup \(population of Paris\): ([\d.]+)", text)
    return wire.plan(wire.step(1, "lookup", {"city": "Rome"}, description="population of Rome"),
                     wire.step(2, "subtract", {"a": "$step_1_result", "b": float(earlier.group(1)) if earlier else 0},
                               deps=[1], description="Rome minus Paris"))


def test_a_session_continues_in_a_new_orchestrator_and_the_cache_skips_the_planner(tmp_path):
    store = tmp_path / "t.db"
    first = Orchestrator(llm=FunctionLLM(two_cities), tools=T.ALL, config=RuntimeConfig(store_path=store),
                         runtime="inprocess")
    try:
        s = first.session()
        r1 = s.run("What is the population of Paris?", timeout=120)
        assert r1.status == "accepted" and r1.steps[0].output == 2.1
        with pytest.raises(SessionNotFoundError):
            first.session("no-such-session")
    finally:
        first.shutdown()

    config = RuntimeConfig(store_path=store, plan_cache=True)
    second = Orchestrator(llm=FunctionLLM(two_cities), tools=T.ALL, config=config, runtime="inprocess")
    try:
        again = second.session(s.id)
        r2 = again.run("And Rome? By how much is it bigger?", timeout=120)
        assert r2.status == "accepted" and [st.output for st in r2.steps] == [2.8, 0.7]
        assert [(t.turn_no, t.answer) for t in again.turns()] == [(1, "Paris has 2.1 million people."),
                                                                   (2, "Rome is bigger, by 0.7 million.")]

        seed = second.run("What is the population of Berlin?", timeout=120)
        assert seed.usage.by_role["planner"].llm_calls == 1
        handle = second.submit("What is the population of Rome?")
        routed = next(e for e in handle.events() if e.type == "routed")
        reuse = handle.result(timeout=120)
        assert routed.payload.plan_cache is not None and routed.payload.plan_cache["mode"] == "filled"
        planner = reuse.usage.by_role.get("planner")
        assert (planner is None or planner.llm_calls == 0) and reuse.usage.total.llm_calls == 2
        assert reuse.status == "accepted" and reuse.steps[0].output == 2.8
    finally:
        second.shutdown()


def lowercase_notes(request) -> str:
    """Paris's plan notes its step in lower case (code cannot rewrite it: Paris's template is not fillable); a plan
    written from a plan-cache hint says so in its note, so the driver can see what the planner actor was shown."""
    text = request.messages[-1]["content"]
    if request.role == "router":
        return wire.route()
    city = re.findall(r"Task: What is the population of (\w+)", text)[-1]
    if request.role == "reflector":
        return wire.reflection(answer=f"{city}: see the result.")
    hinted = "<plan-hint>" in text and "<<name_1>> = 'Madrid'" in text
    note = "look up paris" if city == "Paris" else f"population of {city}" + (" (adapted)" if hinted else "")
    return wire.plan(wire.step(1, "lookup", {"city": city}, description=note))


def test_an_unfillable_template_reaches_the_planner_as_a_hint(tmp_path):
    config = RuntimeConfig(store_path=tmp_path / "t.db", plan_cache=True)
    orch = Orchestrator(llm=FunctionLLM(lowercase_notes), tools=T.ALL, config=config, runtime="inprocess")
    try:
        seed = orch.run("What is the population of Paris?", timeout=120)
        assert seed.status == "accepted"
        handle = orch.submit("What is the population of Madrid?")
        routed = next(e for e in handle.events() if e.type == "routed")
        adapted = handle.result(timeout=120)
    finally:
        orch.shutdown()
    assert routed.payload.plan_cache is not None and routed.payload.plan_cache["mode"] == "adapt"
    assert adapted.status == "accepted" and adapted.usage.by_role["planner"].llm_calls == 1
    assert [(s.description, s.output) for s in adapted.steps] == [("population of Madrid (adapted)", 3.3)]
