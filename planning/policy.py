"""The reflection policy: the reflector proposes, this pure function decides (DESIGN.md: code has the
last word). It enforces the acceptance bar and the retry/replan caps, so no model output can accept a
poor answer or loop forever.

    >>> from planning.models import Reflection, Scores
    >>> r = Reflection(scores=Scores(completeness=5, correctness=2, format=5), overall_pass=True, action="accept")
    >>> decide(ReflectionContext(reflection=r, step_retries={}, replans=0, limits=PolicyLimits(),
    ...                          step_ids=frozenset({1})))
    Replan(feedback='The answer did not pass review (correctness 2/5, needs ≥ 4). Fix what is wrong.')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, assert_never

from dag import StepState
from planning.models import Reflection, Route, RouterDecision

__all__ = [
    "DEFAULT_LIMITS",
    "Accept",
    "Decision",
    "DecisionKind",
    "Escalate",
    "EscalationCause",
    "PolicyLimits",
    "ReflectionContext",
    "Replan",
    "RetryStep",
    "ReviewAgain",
    "ReviewAgainReason",
    "decide",
    "decision_kind",
    "decision_reason",
    "effective_route",
]

EscalationCause = Literal["reflector", "max_replans", "max_step_retries"]
ReviewAgainReason = Literal["wrong_answer", "unstated_figure", "low_scores"]
"""Why the reviewer looks again: code found its answer wrong (shown as a contradiction); the answer leaves out the
figure the plan computed last (a template may then ask only for the answer again: ``Reflector``); only its scores
were below the bar although code found the answer sound (shown as a note)."""


@dataclass(frozen=True, slots=True)
class Accept:
    answer: str | None


@dataclass(frozen=True, slots=True)
class RetryStep:
    step_id: int
    modification: str


@dataclass(frozen=True, slots=True)
class Replan:
    feedback: str


@dataclass(frozen=True, slots=True)
class ReviewAgain:
    """Ask the reviewer once more, told what code found wrong with its answer: the results hold, the answer text
    does not (it named the smaller as the larger, left out the computed difference, or stated a figure no
    result supports). A replan would rerun a plan that worked and let a small planner change it."""

    feedback: str
    reason: ReviewAgainReason = "wrong_answer"

    @property
    def answer_fault(self) -> bool:
        """Code found the answer wrong; otherwise it found nothing wrong with it (an omission, or low scores)."""
        return self.reason == "wrong_answer"


@dataclass(frozen=True, slots=True)
class Escalate:
    reason: str
    question: str
    cause: EscalationCause = "reflector"


Decision = Accept | RetryStep | Replan | ReviewAgain | Escalate


@dataclass(frozen=True, slots=True)
class PolicyLimits:
    max_step_retries: int = 3
    max_replans: int = 2
    accept_min_score: int = 4
    accept_min_correctness: int = 3


DEFAULT_LIMITS = PolicyLimits()
"""The defaults DESIGN.md names; ``agents.config.RuntimeConfig`` takes its own defaults from here."""


@dataclass(frozen=True, slots=True)
class ReflectionContext:
    reflection: Reflection
    step_retries: Mapping[int, int]
    replans: int
    limits: PolicyLimits = field(default_factory=PolicyLimits)
    step_ids: frozenset[int] = frozenset()
    contradictions: tuple[str, ...] = ()
    """What code found wrong with the proposed answer (``agents.checks.review``: the built-in check sets, and the
    user's checks): an accept with any is not an accept, whatever the scores say."""
    answer_only: bool = False
    """Every contradiction is the answer's (``agents.checks.review.answer_facts``), none the results': the plan's
    results are sound, so the reviewer is asked again before anything is replanned."""
    reviewed_again: bool = False
    """This plan's results were already reviewed again once: a second wrong answer replans as before."""
    states_computed: bool = False
    """The answer states the figure the plan's last step computed, and code finds nothing wrong with the results
    or the answer (``agents.checks.numeric.states_computed``, the numeric set only): a low score is then asked
    about once more before the same plan is replanned (the 1.5B reviewer scored "about 127.3%" over a computed
    127.28 completeness 1)."""

    omits_final: str = ""
    """Why a contradiction-free accept is asked about once more, or "": its answer writes figures but not the one
    the plan's final result holds (``agents.checks.sound.omitted_final``). A hint, not a veto: the second verdict
    counts whatever it says."""

    step_states: Mapping[int, StepState] = field(default_factory=dict)
    """Each step's state when the reviewer read the results. A retry is a transition of the step graph, and only
    some are legal (``dag.Scheduler.retry``): with the states known, ``decide`` maps every retry the reviewer can
    write to a legal one or to a replan. Empty: not known, a retry of a plan step is taken as asked."""
    step_deps: Mapping[int, frozenset[int]] = field(default_factory=dict)
    """Each step's dependencies, as the scheduler holds them (with ``step_states``)."""

    @property
    def checked(self) -> bool:
        """Code found the proposed answer consistent with results that hold: no contradiction, and it states the
        figure the plan computed. Whatever the scores, an escalation may propose it (never accept it)."""
        return self.states_computed and self.answer_only


def decide(ctx: ReflectionContext) -> Decision:
    """What happens next, from the reflector's proposal and the counters."""
    r = ctx.reflection
    match r.action:
        case "accept":
            if ctx.contradictions:
                if ctx.answer_only and not ctx.reviewed_again:
                    return ReviewAgain(" ".join(ctx.contradictions))
                return _replan(ctx, "Checked by code, the answer cannot be accepted: " + " ".join(ctx.contradictions))
            shortfall = _shortfall(ctx)
            if shortfall is None:
                if ctx.omits_final and ctx.answer_only and not ctx.reviewed_again:
                    return ReviewAgain(ctx.omits_final, "unstated_figure")
                return Accept(r.answer)
            if ctx.states_computed and ctx.answer_only and not ctx.reviewed_again:
                # A replan would rerun a plan whose figure checks out; the bar still holds for the second verdict.
                return ReviewAgain(f"It was scored too low to accept ({shortfall}), though code found nothing wrong "
                                   "with it: it states the figure the plan computed, and the results agree with "
                                   "the task. Accept it only if it answers everything the task asks; else say "
                                   "what is missing.", "low_scores")
            return _replan(ctx, f"The answer did not pass review ({shortfall}). "
                                f"{r.feedback.strip() or 'Fix what is wrong.'}")
        case "retry_step":
            details = r.retry_details
            if details is None or details.step_id not in ctx.step_ids:
                return _replan(ctx, _unknown_retry(ctx, None if details is None else details.step_id))
            return _retry(ctx, details.step_id, details.modification.strip() or r.feedback.strip())
        case "replan":
            return _replan(ctx, r.feedback.strip() or "The results do not answer the task; make a better plan.")
        case "escalate":
            return Escalate(reason=f"the reflector escalated: {r.feedback.strip() or 'no reason given'}",
                            question=_question(r, "The reviewer needs a human decision."), cause="reflector")
        case _ as unreachable:
            assert_never(unreachable)


_DEAD = frozenset({StepState.FAILED, StepState.SKIPPED, StepState.CANCELLED})
"""States of a step that will never give an output: its dependents cannot run until it is retried."""


def _retry(ctx: ReflectionContext, asked: int, modification: str) -> Decision:
    """The reviewer's retry of step ``asked`` as a legal transition: the step itself when it may run again; the
    dead step it waits on (failed or cancelled, itself runnable) when it is blocked; else a replan."""
    target = _retry_target(ctx, asked)
    if target is None:
        state = ctx.step_states[asked].value
        return _replan(ctx, f"The reviewer asked to retry step {asked}, which is {state} and cannot be retried "
                            f"now; replanning instead. The reviewer's feedback: {modification or 'none given'}")
    if target != asked:
        modification = (f"The reviewer asked to retry step {asked}, which could not run because this step "
                        f"{ctx.step_states[target].value}: {modification}")
    done = ctx.step_retries.get(target, 0)
    if done >= ctx.limits.max_step_retries:
        return Escalate(
            reason=f"step {target} was already retried {done} times (max_step_retries={ctx.limits.max_step_retries})",
            question=_question(ctx.reflection, f"Step {target} keeps failing review after {done} retries."),
            cause="max_step_retries")
    return RetryStep(target, modification)


def _retry_target(ctx: ReflectionContext, asked: int) -> int | None:
    states = ctx.step_states
    if not states:
        return asked
    if states.get(asked) not in (StepState.COMPLETED, *_DEAD):
        return None  # pending or running: nothing to retry yet

    def dead_deps(step_id: int) -> list[int]:
        return sorted(d for d in ctx.step_deps.get(step_id, ()) if states.get(d) in _DEAD)

    # Up the chain of dead dependencies to the first one that is blocked by nothing: retrying it resets every step
    # downstream, the asked one included (``dag.Scheduler.retry``).
    seen: set[int] = set()
    frontier = [asked]
    while frontier:
        step_id = frontier.pop(0)
        if step_id in seen:
            continue
        seen.add(step_id)
        blockers = dead_deps(step_id)
        if not blockers:
            return step_id
        frontier.extend(blockers)
    return None


def _shortfall(ctx: ReflectionContext) -> str | None:
    r, lim = ctx.reflection, ctx.limits
    s = r.scores
    low = [f"{name} {value}/5" for name, value in (("completeness", s.completeness), ("correctness", s.correctness),
                                                   ("format", s.format)) if value < lim.accept_min_score]
    if s.correctness < lim.accept_min_correctness and not any(x.startswith("correctness") for x in low):
        low.append(f"correctness {s.correctness}/5")
    if low:
        return ", ".join(low) + f", needs ≥ {lim.accept_min_score}"
    if not r.overall_pass:
        return "overall_pass was false"
    return None


def _unknown_retry(ctx: ReflectionContext, step_id: int | None) -> str:
    steps = ", ".join(str(s) for s in sorted(ctx.step_ids)) or "none"
    asked = "did not say which step" if step_id is None else f"named step {step_id}, which the plan does not have"
    said = f" The reviewer's feedback: {ctx.reflection.feedback.strip()}" if ctx.reflection.feedback.strip() else ""
    return f"The reviewer asked to retry a step but {asked} (its steps: {steps}); replanning instead.{said}"


def _replan(ctx: ReflectionContext, feedback: str) -> Decision:
    if ctx.replans >= ctx.limits.max_replans:
        # The question states what happened (the reviewer's own words may be a bare "retry" with no context).
        return Escalate(reason=f"the plan was already replanned {ctx.replans} times (max_replans="
                               f"{ctx.limits.max_replans}); last feedback: {feedback}",
                        question=f"After {ctx.replans} replans the answer still does not pass review. {feedback} "
                                 "How should I proceed?",
                        cause="max_replans")
    return Replan(feedback)


def _question(r: Reflection, fallback: str) -> str:
    base = r.feedback.strip() or fallback
    return base if base.endswith("?") else f"{base} How should I proceed?"


def effective_route(decision: RouterDecision, min_confidence: float) -> Route:
    """The route taken: below ``min_confidence`` the router's guess is not trusted and the user is asked.

        >>> effective_route(RouterDecision(route="plan", confidence=0.4), 0.6)
        'clarify'
        >>> effective_route(RouterDecision(route="clarify", confidence=0.9), 0.6)
        'clarify'
    """
    if decision.route != "clarify" and decision.confidence < min_confidence:
        return "clarify"
    return decision.route


def decision_reason(decision: Decision) -> str:
    """Why the policy decided so, for the reflected event: an escalation's reason, a replan's feedback (which says
    what code found when it overruled an accept)."""
    match decision:
        case Escalate(reason=reason):
            return reason
        case Replan(feedback=feedback):
            return feedback
        case ReviewAgain(feedback=feedback):
            return "The results hold; the reviewer is asked again about its answer: " + feedback
        case Accept() | RetryStep():
            return ""
        case _:
            assert_never(decision)


DecisionKind = Literal["accept", "retry_step", "replan", "review_again", "escalate"]


def decision_kind(decision: Decision) -> DecisionKind:
    """The decision's name in the reflected event."""
    match decision:
        case Accept():
            return "accept"
        case RetryStep():
            return "retry_step"
        case Replan():
            return "replan"
        case ReviewAgain():
            return "review_again"
        case Escalate():
            return "escalate"
        case _:
            assert_never(decision)
