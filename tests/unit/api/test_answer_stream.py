"""The answer, streamed (issue 62): ``handle.stream_answer()`` yields the reviewer's answer as it writes it, once its
reply has accepted, on the hosted (terse) and the embedded (JSON) reply forms, in-process."""

from __future__ import annotations

import asyncio
import statistics
import threading
import time

import pytest
from support import wire
from support.tools import lookup, subtract

from agents import Orchestrator, RuntimeConfig
from agents.answer_stream import AnswerReset
from agents.results import TaskResult
from agents.checks import AnswerReview, Reject
from agents.llm import HOSTED, SMALL_LOCAL, FunctionLLM, ModelProfile

TASK = "Which is bigger, Paris or Rome, and by how much?"
PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                 wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]))
ANSWER = "Rome is bigger than Paris, by 0.7 million people."


def terse(answer: str = ANSWER, verdict: str = "accept 5 5 5") -> str:
    return f"{verdict}\nanswer: {answer}"


def json_review(answer: str | None = ANSWER, action: str = "accept") -> str:
    return wire.reflection(action, answer=answer, scores=(5, 5, 5) if action == "accept" else (3, 2, 3),
                           feedback="" if action == "accept" else "look Paris up again")


def _orch(tmp_path, reviews: list[str], profile: ModelProfile, checks=(), delay: float = 0.002) -> Orchestrator:
    replies = iter(reviews)
    calls = {"reflector": 0}

    def model(request) -> str:
        if request.role == "reflector":
            calls["reflector"] += 1
            return next(replies)
        return {"router": wire.route(), "planner": PLAN}[request.role]

    llm = FunctionLLM(model, stream_chunk_size=4, chunk_delay_s=delay, profile=profile)
    return Orchestrator(llm=llm, tools=[lookup, subtract], runtime="inprocess", checks=list(checks),
                        config=RuntimeConfig(store_path=tmp_path / "t.db", task_timeout_s=30))


def _collect(orch: Orchestrator) -> tuple[list[str | AnswerReset], TaskResult]:
    handle = orch.submit(TASK)
    pieces = list(handle.stream_answer())
    return pieces, handle.result(timeout=30)


@pytest.mark.parametrize("profile, review", [(HOSTED, terse()), (SMALL_LOCAL, json_review())],
                         ids=["hosted-terse", "embedded-json"])
def test_the_answer_streams_in_pieces_that_add_up_to_the_result(tmp_path, profile, review) -> None:
    orch = _orch(tmp_path, [review], profile)
    try:
        pieces, result = _collect(orch)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    assert all(isinstance(p, str) for p in pieces) and len(pieces) > 3
    assert "".join(pieces) == result.answer == ANSWER  # type: ignore[arg-type]


class _GatedReviewLLM(FunctionLLM):
    """Holds the reviewer's stream after the answer's first words until the test's reader has seen them: if pieces
    only reached the caller at the task's end, the gate would time out instead of being opened by the reader."""

    def __init__(self, *args, gate: threading.Event, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.gate, self.opened_by_reader = gate, None

    async def stream(self, request):
        written = ""
        async for item in super().stream(request):
            yield item
            if request.role != "reflector" or not isinstance(item, str) or self.opened_by_reader is not None:
                continue
            written += item
            if len(written.partition("answer: ")[2]) >= 4:
                self.opened_by_reader = await asyncio.to_thread(self.gate.wait, 20)


def test_the_first_piece_reaches_the_caller_while_the_reviewer_still_writes(tmp_path) -> None:
    """The lead, shown by order rather than by timing: the reviewer waits after the answer's first words until the
    caller has read them, so the rest is written only after the start arrived."""
    gate = threading.Event()
    model = {"router": wire.route(), "planner": PLAN, "reflector": terse()}
    llm = _GatedReviewLLM(lambda r: model[r.role], stream_chunk_size=4, gate=gate, profile=HOSTED)
    orch = Orchestrator(llm=llm, tools=[lookup, subtract], runtime="inprocess",
                        config=RuntimeConfig(store_path=tmp_path / "t.db", task_timeout_s=60))
    try:
        handle = orch.submit(TASK)
        arrivals: list[tuple[float, float]] = []
        for event in handle.events():
            if event.type == "answer_delta":
                arrivals.append((event.ts, time.time()))
                gate.set()
        result = handle.result(timeout=30)
    finally:
        orch.shutdown()
    assert result.status == "accepted" and result.answer == ANSWER
    assert llm.opened_by_reader is True, "the answer's first piece reached the caller only after the review ended"
    latency = [got - made for made, got in arrivals]
    print(f"\nanswer delta latency (emitted -> caller): median {statistics.median(latency) * 1000:.1f} ms, "
          f"max {max(latency) * 1000:.1f} ms over {len(latency)} pieces")


def test_a_non_accept_review_streams_nothing(tmp_path) -> None:
    orch = _orch(tmp_path, [json_review(action="escalate", answer="Rome, maybe")], SMALL_LOCAL)
    try:
        pieces, result = _collect(orch)
    finally:
        orch.shutdown()
    assert result.status == "escalated"
    assert pieces == []


def names_the_gap(review: AnswerReview) -> None:
    if "0.7" not in (review.answer or ""):
        raise Reject("the answer must say by how much")


@pytest.mark.parametrize("profile, first, second", [
    (HOSTED, terse("Rome is bigger."), terse()),
    (SMALL_LOCAL, json_review("Rome is bigger."), json_review()),
], ids=["hosted-terse", "embedded-json"])
def test_a_vetoed_accept_resets_the_stream_and_a_new_one_follows(tmp_path, profile, first, second) -> None:
    orch = _orch(tmp_path, [first, second, second], profile, checks=[names_the_gap])
    try:
        pieces, result = _collect(orch)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    resets = [i for i, p in enumerate(pieces) if isinstance(p, AnswerReset)]
    assert len(resets) == 1, pieces
    assert "".join(pieces[:resets[0]]) == "Rome is bigger."
    assert pieces[resets[0]].reason
    assert "".join(pieces[resets[0] + 1:]) == result.answer == ANSWER  # type: ignore[arg-type]


def test_astream_answer_yields_the_same(tmp_path) -> None:
    orch = _orch(tmp_path, [terse()], HOSTED)

    async def main() -> list[object]:
        handle = orch.submit(TASK)
        return [piece async for piece in handle.astream_answer()]

    try:
        pieces = asyncio.run(main())
    finally:
        orch.shutdown()
    assert "".join(pieces) == ANSWER  # type: ignore[arg-type]
