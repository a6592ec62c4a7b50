"""Every decision a reviewer can write maps to a legal transition of the step graph (issue 60 item 13).

Over random plans, random step outcomes (completed, failed, skipped behind a failed dependency) and random
reviewer verdicts (any action, any step id: unknown, skipped, failed, completed), ``decide`` ends in accept,
retry, replan, review-again or escalate — never in an internal error: a retry it decides is one
``dag.Scheduler.retry`` makes, and a replan or escalation says why in words a user can act on.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dag import Scheduler
from planning.models import Reflection, RetryDetails, Scores
from planning.policy import (Accept, Escalate, PolicyLimits, ReflectionContext, Replan, RetryStep, ReviewAgain,
                             decide, decision_kind)


@st.composite
def graphs(draw) -> tuple[Scheduler, dict[int, frozenset[int]]]:
    """A random plan run to its end: each step that could start completed or failed; the rest are skipped."""
    n = draw(st.integers(1, 7))
    deps = {i: frozenset(draw(st.sets(st.integers(1, i - 1), max_size=3)) if i > 1 else set()) for i in range(1, n + 1)}
    sched = Scheduler()
    for i in range(1, n + 1):
        sched.add_step(i, deps[i])
    sched.seal()
    while ready := sched.ready():
        for sid in ready:
            sched.start(sid)
            if draw(st.booleans()):
                sched.complete(sid, f"out{sid}")
            else:
                sched.fail(sid, "it broke")
    return sched, deps


reflections = st.builds(
    Reflection,
    scores=st.builds(Scores, completeness=st.integers(1, 5), correctness=st.integers(1, 5), format=st.integers(1, 5)),
    overall_pass=st.booleans(),
    action=st.sampled_from(["accept", "retry_step", "replan", "escalate"]),
    retry_details=st.none() | st.builds(RetryDetails, step_id=st.integers(-1, 9), modification=st.text(max_size=8)),
    feedback=st.text(max_size=12),
    answer=st.none() | st.text(max_size=8))


@given(graph=graphs(), reflection=reflections, retries=st.dictionaries(st.integers(1, 7), st.integers(0, 4)),
       replans=st.integers(0, 3),
       contradictions=st.lists(st.sampled_from(["3 < 5 is false.", "Check c: no."]), max_size=2),
       flags=st.tuples(st.booleans(), st.booleans(), st.booleans()), knows_graph=st.booleans())
def test_every_verdict_maps_to_a_legal_transition(graph, reflection, retries, replans, contradictions, flags,
                                                  knows_graph):
    sched, deps = graph
    answer_only, reviewed_again, states_computed = flags
    ids = sched.step_ids()
    ctx = ReflectionContext(
        reflection=reflection, step_retries=retries, replans=replans, limits=PolicyLimits(),
        step_ids=frozenset(ids), contradictions=tuple(contradictions), answer_only=answer_only,
        reviewed_again=reviewed_again, states_computed=states_computed,
        step_states={sid: sched.state(sid) for sid in ids} if knows_graph else {},
        step_deps={sid: sched.dependencies(sid) for sid in ids} if knows_graph else {})
    decision = decide(ctx)
    assert decision_kind(decision) in ("accept", "retry_step", "replan", "review_again", "escalate")
    match decision:
        case RetryStep(step_id=step_id):
            assert step_id in ids and retries.get(step_id, 0) < PolicyLimits().max_step_retries
            if knows_graph:
                sched.retry(step_id)  # raises InvalidTransitionError if the policy chose an illegal retry
                if reflection.retry_details is not None:
                    assert sched.state(reflection.retry_details.step_id).value in ("pending", "skipped")
        case Replan(feedback=feedback):
            assert feedback.strip()
        case Escalate(reason=reason, question=question):
            assert reason.strip() and question.strip().endswith("?")
        case ReviewAgain(feedback=feedback):
            assert feedback.strip()
        case Accept():
            assert reflection.action == "accept" and not contradictions


def _chain_with_a_failure() -> Scheduler:
    """1 failed, 2 skipped behind it, 3 completed on its own."""
    sched = Scheduler()
    sched.add_step(1)
    sched.add_step(2, [1])
    sched.add_step(3)
    sched.seal()
    sched.start(1)
    sched.fail(1, "it broke")
    sched.start(3)
    sched.complete(3, "x")
    return sched


def _context(sched: Scheduler, step_id: int, retries: dict[int, int] | None = None) -> ReflectionContext:
    reflection = Reflection(scores=Scores(completeness=2, correctness=2, format=4), overall_pass=False,
                            action="retry_step", retry_details=RetryDetails(step_id=step_id, modification="use km"))
    ids = sched.step_ids()
    return ReflectionContext(reflection=reflection, step_retries=retries or {}, replans=0,
                             step_ids=frozenset(ids), step_states={s: sched.state(s) for s in ids},
                             step_deps={s: sched.dependencies(s) for s in ids})


def test_a_retry_of_a_skipped_step_retries_the_failed_step_it_waits_on():
    decision = decide(_context(_chain_with_a_failure(), 2))
    assert isinstance(decision, RetryStep) and decision.step_id == 1
    assert "asked to retry step 2" in decision.modification and decision.modification.endswith("use km")


def test_the_retry_cap_counts_the_step_actually_retried():
    decision = decide(_context(_chain_with_a_failure(), 2, retries={1: 3}))
    assert isinstance(decision, Escalate) and decision.cause == "max_step_retries" and "step 1" in decision.reason


def test_a_retry_of_a_failed_or_completed_step_is_taken_as_asked():
    assert decide(_context(_chain_with_a_failure(), 1)) == RetryStep(1, "use km")
    assert decide(_context(_chain_with_a_failure(), 3)) == RetryStep(3, "use km")


def test_a_retry_of_a_step_that_has_not_run_replans_saying_so():
    sched = Scheduler()
    sched.add_step(1)
    sched.seal()
    decision = decide(_context(sched, 1))
    assert isinstance(decision, Replan) and "step 1, which is pending" in decision.feedback
