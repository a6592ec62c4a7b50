"""On a one-request model server (a profile without ``concurrent_calls``, the embedded model's): reasoning steps wait
for the plan stream instead of queueing behind it, and a name hop that only feeds arithmetic is answered by code
(``agents.checks.numeric.name_hops``). The figures behind the names reach the arithmetic by the embedded model's
``Strategy.READ_THROUGH`` and ``Strategy.FIGURE_FIT``. In-process with scripted roles (no Ray)."""

from __future__ import annotations

import asyncio

from support import wire
from support.local import run_task

from agents import tool
from agents.config import RuntimeConfig
from agents.engine.step_run import BY_CODE
from agents.llm import HOSTED, FunctionLLM, ModelProfile, Strategy
from agents.tools.builtins import calculator

TASK = "How many more people live in Rome than in Paris?"


@tool
def search(query: str) -> list[dict]:
    """Search the reference passages.

    Args:
        query: what to look up.

    Returns:
        passages (text with figures, best first)
    """
    city = "Rome" if "Rome" in query else "Paris" if "Paris" in query else "Italy"
    text = {"Paris": "Paris: Population: about 2.10 million in 2023.",
            "Rome": "Rome: Population: about 2.75 million in 2023.",
            "Italy": "Italy: its capital is Rome."}[city]
    return [{"doc_id": city.lower(), "title": city, "text": text}]


# make demo's plan: each named city searched, then a "name of" step over each search, both fed to arithmetic.
NAME_HOPS = wire.plan(
    wire.step(1, "search", {"query": "population of Paris"}),
    wire.step(2, "search", {"query": "population of Rome"}),
    wire.step(3, None, deps=[1], description="the name of the city-proper population of Paris"),
    wire.step(4, None, deps=[2], description="the name of the city-proper population of Rome"),
    wire.step(5, "calculator", {"expression": "max({$step_3_result}, {$step_4_result}) - "
                                              "min({$step_3_result}, {$step_4_result})"}, deps=[3, 4]))


# Code answers a name hop, and reads a passage's figure, only with the opt-in numeric check set (docs/checks.md).
NUMERIC = ("sound", "numeric")
FIGURES = frozenset({Strategy.READ_THROUGH, Strategy.FIGURE_FIT})
SERIAL = ModelProfile(concurrent_calls=False, strategies=FIGURES)
"""One request at a time, and a name hop's figure read from its search's passage by code."""
CONCURRENT = ModelProfile(strategies=FIGURES)


def run(llm, task=TASK, **kw):
    kw.setdefault("config", RuntimeConfig(builtin_checks=NUMERIC))
    return asyncio.run(run_task(llm, task, tools=[search, calculator], **kw))


def _seq(sink):
    return {(e.type, getattr(e.payload, "step_id", None) or getattr(getattr(e.payload, "step", None), "step_id", None)):
            e.seq for e in sink.events}


def test_a_name_hop_for_arithmetic_is_answered_by_code():
    def model(request):
        match request.role:
            case "router":
                return wire.route()
            case "planner":
                return NAME_HOPS
            case "executor":
                raise AssertionError("a name hop for arithmetic needs no model call")
            case _:
                return wire.reflection(answer="Rome, by 650,000")

    result, sink = run(FunctionLLM(model, stream_chunk_size=16, profile=SERIAL))
    assert result.status == "accepted"
    assert [s.output for s in result.steps][2:] == ["Paris", "Rome", 650000]
    assert result.usage.total.llm_calls == 3  # router, planner, reflector
    finished = {e.payload.step_id: e.payload for e in sink.events if e.type == "step_finished"}
    assert finished[3].executor == finished[4].executor == BY_CODE
    assert finished[1].executor != BY_CODE
    seq = _seq(sink)
    # A reasoning step starts only once the plan has streamed: its call would queue behind the planner's.
    assert seq[("step_started", 3)] > seq[("plan_step", 5)]
    assert seq[("step_started", 1)] < seq[("plan_step", 5)]  # tool steps still run while it streams


def test_a_hop_whose_name_feeds_a_search_still_asks_the_model():
    asked = []

    def model(request):
        match request.role:
            case "router":
                return wire.route()
            case "planner":
                return wire.plan(wire.step(1, "search", {"query": "capital of Italy"}),
                                 wire.step(2, None, deps=[1], description="the name of the capital of Italy"),
                                 wire.step(3, "search", {"query": "population of {$step_2_result}"}, deps=[2]))
            case "executor":
                asked.append(request.metadata["step_id"])
                return "Rome"
            case _:
                return wire.reflection(answer="Rome has about 2.75 million people")

    result, _ = run(FunctionLLM(model, profile=SERIAL), task="How many people live in the capital of Italy?")
    assert result.status == "accepted" and asked == ["2"]
    assert result.steps[2].output[0]["title"] == "Rome"


def _hop_model(asked: list[str], review=lambda asked: wire.reflection(answer="Rome, by 650,000"),
               figures: str | None = None):
    """make demo's plan, with the executor's answers recorded in ``asked``; ``review`` writes the reviewer's;
    ``figures``: the executor's answer when asked for the figures step 5 computes with."""
    def model(request):
        match request.role:
            case "router":
                return wire.route()
            case "planner":
                return NAME_HOPS
            case "executor":
                asked.append(request.metadata["step_id"])
                return {"3": "Paris", "4": "Rome", "5": figures}[request.metadata["step_id"]]
            case _:
                return review(asked)

    return model


def test_a_hop_the_reviewer_changed_is_answered_by_the_model():
    # The reviewer's instruction for the step is the model's to follow; code would ignore it.
    asked: list[str] = []

    def review(asked):
        if "3" not in asked:
            return wire.reflection("retry_step", (3, 3, 3), answer=None, retry_step=3,
                                   modification="answer the city only")
        return wire.reflection(answer="Rome, by 650,000")

    result, _ = run(FunctionLLM(_hop_model(asked, review), profile=SERIAL))
    assert result.status == "accepted" and asked == ["3"]


def test_without_a_serial_server_the_model_answers_each_hop():
    asked: list[str] = []
    result, _ = run(FunctionLLM(_hop_model(asked), profile=CONCURRENT))
    assert result.status == "accepted" and sorted(asked) == ["3", "4"]
    assert [s.output for s in result.steps][2:] == ["Paris", "Rome", 650000]


def test_by_default_the_model_answers_each_hop_and_reads_the_figures():
    # The default (sound) set: no step is answered by code, and which number a passage means is the model's.
    asked: list[str] = []
    result, sink = run(FunctionLLM(_hop_model(asked, figures='{"3": 2100000, "4": 2750000}'), profile=SERIAL), config=RuntimeConfig())
    assert result.status == "accepted" and sorted(asked) == ["3", "4", "5"]
    assert [s.output for s in result.steps][2:] == ["Paris", "Rome", 650000]
    assert not [e for e in sink.events if e.type == "step_finished" and e.payload.executor == BY_CODE]


def test_the_hosted_profile_asks_the_model_for_each_hop_and_to_repair_the_arithmetic():
    # Calls at once, no read-through, no figure fitting, even with the numeric set: nothing is answered by code,
    # and the calculator rejecting the names is the executor's ordinary argument repair.
    asked: list[tuple[str, str]] = []
    fixed = '{"expression": "max(2100000, 2750000) - min(2100000, 2750000)"}'

    def model(request):
        match request.role:
            case "router":
                return wire.route()
            case "planner":
                return NAME_HOPS
            case "executor":
                asked.append((request.metadata["step_id"], request.messages[0]["content"]))
                return {"3": "Paris", "4": "Rome", "5": fixed}[request.metadata["step_id"]]
            case _:
                return wire.reflection(answer="Rome, by 650,000")

    result, sink = run(FunctionLLM(model, profile=HOSTED))
    assert result.status == "accepted" and sorted(step for step, _ in asked) == ["3", "4", "5"]
    assert [s.output for s in result.steps][2:] == ["Paris", "Rome", 650000]
    assert not [e for e in sink.events if e.type == "step_finished" and e.payload.executor == BY_CODE]
    [repair] = [system for step, system in asked if step == "5"]
    assert "A tool call was rejected" in repair and "A calculation needs numbers" not in repair
