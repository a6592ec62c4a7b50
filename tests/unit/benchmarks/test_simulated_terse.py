"""SimulatedLLM answers in the form its prompt asks for (terse with the hosted planner/v14 + reflector/v11,
JSON with the small model's planner/v10),
streams token by token under the latency model, and the terse path plays every suite's gold behaviour through
the real per-task state machine with the same results and 3 LLM calls a task."""

from __future__ import annotations

import asyncio

import pytest
from support.local import run_task

from agents.config import RuntimeConfig
from agents.llm import HOSTED, SMALL_LOCAL
from agents.llm.base import LLMReply, LLMRequest
from agents.llm.simulated import LatencyModel, SimulatedLLM
from benchmarks.suite import SUITES, answer_matches, load_suite
from benchmarks.world import World, make_tools
from planning.delta import as_delta, expand
from planning.models import Plan
from prompts import count_tokens, load_prompt

INSTANT = LatencyModel(ttft_s=0.0, decode_tokens_per_s=1e12, prefill_tokens_per_s=1e12)
TOOLS = make_tools(World.load(), time_scale=0.0)
TERSE = RuntimeConfig(max_steps=64, token_budget=None, max_llm_calls=200)
"""With SimulatedLLM's default profile, ``HOSTED``: its prompts ask for the terse forms."""


def _planner_request(task: str, version: str) -> LLMRequest:
    template = load_prompt("planner", version)
    given = {"task": task, "tools": "lookup, calculator", "max_steps": "20"}
    prompt = template.render(**{v: given.get(v, "") for v in template.variables})
    return LLMRequest(role="planner", messages=prompt.messages, stream=True)


def test_the_plan_comes_in_the_form_the_prompt_asked_for_one_token_at_a_time() -> None:
    gold = load_suite("parallel", 1)[0].gold
    sleeps: list[float] = []
    now = [0.0]

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    llm = SimulatedLLM([gold], LatencyModel(ttft_s=0.35, decode_tokens_per_s=80, prefill_tokens_per_s=5000),
                       sleep=sleep, clock=lambda: now[0])
    assert (HOSTED.prompt("planner"), SMALL_LOCAL.prompt("planner")) == ("v14", "v10")
    terse = llm.answer(_planner_request(gold.task, "v14"))
    assert terse.startswith("1. lookup(") and "{" not in terse
    assert llm.answer(_planner_request(gold.task, "v10")).startswith('{"steps"')

    async def collect() -> list[str | LLMReply]:
        return [piece async for piece in llm.stream(_planner_request(gold.task, "v14"))]

    *pieces, reply = asyncio.run(collect())
    assert isinstance(reply, LLMReply) and "".join(pieces) == terse == reply.text
    assert len(pieces) == count_tokens(terse) == reply.usage.output_tokens
    assert sleeps[0] == pytest.approx(0.35 + reply.usage.input_tokens / 5000)
    assert sleeps[1:] == [pytest.approx(1 / 80)] * len(pieces)


def test_a_streamed_reply_takes_the_latency_models_time_however_late_each_sleep_wakes() -> None:
    """Each token is due at a time fixed from the call's start: a sleep that wakes late (a timer tick, a busy
    loop) delays that token, not every later one, so a streamed reply ends when ``complete``'s would."""
    gold = load_suite("parallel", 1)[0].gold
    latency = LatencyModel(ttft_s=0.35, decode_tokens_per_s=80, prefill_tokens_per_s=5000)
    now = [0.0]

    async def late_sleep(seconds: float) -> None:
        now[0] += seconds + 0.002  # every wake-up 2 ms late

    llm = SimulatedLLM([gold], latency, sleep=late_sleep, clock=lambda: now[0])

    async def collect() -> list[str | LLMReply]:
        return [piece async for piece in llm.stream(_planner_request(gold.task, "v14"))]

    *pieces, reply = asyncio.run(collect())
    assert isinstance(reply, LLMReply) and len(pieces) > 20
    modelled = latency.seconds(reply.usage.input_tokens, reply.usage.output_tokens)
    # One late wake-up at the end, not one per token (which would be len(pieces) * 2 ms later).
    assert reply.latency_s == pytest.approx(modelled + 0.002)


@pytest.mark.parametrize("suite", SUITES)
def test_the_terse_prompts_play_the_gold_behaviour_with_three_calls(suite: str) -> None:
    tasks = load_suite(suite, 8)
    llm = SimulatedLLM([t.gold for t in tasks], INSTANT)

    async def run_all() -> list:
        return [(t, (await run_task(llm, t.text, tools=TOOLS, config=TERSE))[0]) for t in tasks]

    for t, result in asyncio.run(run_all()):
        assert result.status == "accepted", (t.id, result.error)
        # the gold answer, or the plan's draft filled with the computed figure and confirmed by the reviewer
        assert result.answer == t.gold.answer or answer_matches(result.answer or "", t.answer_number), t.id
        final = [s for s in result.steps if s.status == "completed"][-1].output
        assert answer_matches(str(final), t.answer_number), (t.id, final)
        # repair: the executor applies the tool's fix (no replan) unless the typo is ambiguous (a delta replan)
        expected = Plan.model_validate({"steps": t.gold.first_plan or t.gold.plan})
        if result.replans:
            first = expected
            completed = {s.step_id for s in result.steps if s.status == "completed"}
            kept = [s for s in first.steps if s.step_id in completed]
            gold = Plan.model_validate({"steps": t.gold.plan})
            expected = expand(kept, as_delta(kept, gold, start=max(s.step_id for s in first.steps) + 1))
        assert result.usage.total.llm_calls == 3 + 2 * result.replans
        assert [s.model_dump(exclude={"description"}) for s in result.plan.steps] == \
            [s.model_dump(exclude={"description"}) for s in expected.steps]


def test_the_planner_drafts_the_answer_where_its_last_step_computes_it_and_the_reviewer_confirms_it() -> None:
    task = next(t for t in load_suite("parallel", 4) if t.gold.plan[-1]["tool_name"] == "calculator")
    llm = SimulatedLLM([task.gold], INSTANT)
    plan = llm.answer(_planner_request(task.gold.task, "v14"))
    last = plan.splitlines()[-1]
    assert last.startswith("answer: ") and f"${len(task.gold.plan)}" in last
    assert "answer:" not in llm.answer(_planner_request(task.gold.task, "v10"))  # JSON plans carry no draft
    result, _ = asyncio.run(run_task(llm, task.text, tools=TOOLS, config=TERSE))
    review = result.reflections[-1]
    assert result.status == "accepted" and answer_matches(result.answer or "", task.answer_number)
    assert review.answer == result.answer
    assert result.usage.by_role["reflector"].output_tokens <= 8  # the verdict line alone


def test_a_gold_answer_that_rounds_the_computed_figure_is_drafted_and_confirmed() -> None:
    """The mixed suite's answers round the figure ("60.12%" for 60.1246): the draft puts the computed value there,
    and a reviewer shown it confirms it when it rounds to the figure the gold answer writes."""
    task = load_suite("mixed", 1)[0]
    llm = SimulatedLLM([task.gold], INSTANT)
    assert llm.answer(_planner_request(task.gold.task, "v14")).splitlines()[-1].startswith("answer: ")
    result, _ = asyncio.run(run_task(llm, task.text, tools=TOOLS, config=TERSE))
    assert result.status == "accepted" and answer_matches(result.answer or "", task.answer_number)
    assert result.usage.by_role["reflector"].output_tokens <= 8
