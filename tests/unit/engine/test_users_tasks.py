"""The issue's two illustrations, run through the task runner as a new user would: a scripted model that plans
right and answers right is accepted at once (router, planner, reviewer: 3 LLM calls), with the default set and
with the numeric set (the one number reader reads no version and no day of a month as a figure)."""

from __future__ import annotations

import asyncio

import pytest
from support import wire
from support.local import run_task

from agents.config import NUMERIC_QA_CHECKS, RuntimeConfig
from agents.llm import ScriptedLLM
from agents.tools import tool
from agents.tools.builtins import calculator

RELEASES = {"httpx": "httpx 0.28.1 was released on 2024-12-06.", "requests": "requests 2.32.3 was released on 2024-05-29."}
FOUNDED = {"Google": "Google was founded on September 4, 1998 by Larry Page and Sergey Brin.",
           "Facebook": "Facebook was founded on February 4, 2004 by Mark Zuckerberg."}


@tool
def latest_release(package: str) -> str:
    """The latest release of a Python package.

    Args:
        package: the package's name on PyPI.
    """
    return RELEASES[package]


@tool
def founding(company: str) -> str:
    """When and by whom a company was founded.

    Args:
        company: the company's name.
    """
    return FOUNDED[company]


CASES = [
    ("Which package had the more recent latest release, httpx or requests?",
     wire.plan(wire.step(1, "latest_release", {"package": "httpx"}),
               wire.step(2, "latest_release", {"package": "requests"})),
     "httpx (0.28.1, released on 2024-12-06; requests 2.32.3 on 2024-05-29)."),
    ("How many years after Google was Facebook founded?",
     wire.plan(wire.step(1, "founding", {"company": "Google"}), wire.step(2, "founding", {"company": "Facebook"}),
               wire.step(3, "calculator", {"expression": "2004 - 1998"}, deps=[1, 2])),
     "6 years (Google in 1998, Facebook in 2004)."),
]


@pytest.mark.parametrize("checks", [("sound",), NUMERIC_QA_CHECKS])
@pytest.mark.parametrize(("task", "plan", "answer"), CASES)
def test_a_right_plan_and_answer_is_accepted_at_once(task, plan, answer, checks):
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan], "reflector": [wire.reflection(answer=answer)]})
    result, sink = asyncio.run(run_task(llm, task, tools=[latest_release, founding, calculator],
                                        config=RuntimeConfig(builtin_checks=checks)))
    assert result.status == "accepted" and result.answer == answer
    assert [e.payload.decision for e in sink.events if e.type == "reflected"] == ["accept"]
    assert not [e for e in sink.events if e.type == "replanned"]
    assert result.usage.total.llm_calls == 3 and llm.remaining() == {}
