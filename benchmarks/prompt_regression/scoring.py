"""Scoring one case: what a role returned, against what the case expects (pure: no model, no clock)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from agents.checks.review import DEFAULT_CHECKS, review_context
from agents.llm.base import Usage
from agents.roles.messages import PlanCompleted, PlanFailed, PlanItem, PlanRestarted, StepEmitted
from benchmarks.prompt_regression.case_files import PlannerCase, ReflectorCase, RouterCase
from planning.errors import PlanningError
from planning.models import Plan, Reflection, RouterDecision
from planning.parse import parse_router_decision
from planning.policy import Decision, PolicyLimits, decide, decision_kind
from planning.settled_route import STOPPED_REASON

__all__ = ["CaseResult", "reflector_decision", "score_planner", "score_reflector", "score_router"]


@dataclass(slots=True)
class CaseResult:
    role: str
    case_id: str
    passed: bool
    expected: str
    got: str
    reason: str = ""
    """Why the case failed (empty when it passed)."""
    latency_s: float = 0.0
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    repaired: bool = False
    """The role needed its one repair round (a second LLM call after unusable output)."""
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _usage_fields(usage: Usage | None) -> dict[str, int]:
    u = usage or Usage()
    return {"llm_calls": u.llm_calls, "input_tokens": u.input_tokens, "output_tokens": u.output_tokens}


def _needed_repair(records: Iterable[Mapping[str, Any]]) -> bool:
    """A repair-round request carries the bad answer back as an assistant message (``repair_messages``)."""
    return any(any(m.get("role") == "assistant" for m in rec.get("messages", ())) for rec in records)


def _last_reply(records: Sequence[Mapping[str, Any]]) -> str:
    return str(records[-1].get("reply_text", "")) if records else ""


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def score_router(case: RouterCase, decision: RouterDecision | None, *, records: Sequence[Mapping[str, Any]] = (),
                 usage: Usage | None = None, error: str | None = None, latency_s: float = 0.0) -> CaseResult:
    """``decision`` is what ``Router.route`` returned (the route production acts on); ``records`` its LLM-call
    records, from which the model's raw route is read. ``decision=None`` with ``error``: no usable reply."""
    repaired = _needed_repair(records)
    base = dict(role="router", case_id=case.id, expected=case.expected, latency_s=latency_s, repaired=repaired,
                **_usage_fields(usage))
    if decision is None:
        return CaseResult(passed=False, got="invalid", reason=f"no usable router decision: {_short(error or '')}",
                          details={"raw_reply": _short(_last_reply(records), 400)}, **base)
    raw_route: str | None = None
    try:
        raw_route = parse_router_decision(_last_reply(records)).route if records else decision.route
    except PlanningError:
        # A reply stopped once it had chosen to plan (``planning.settled_route``) is that route, unfinished.
        raw_route = decision.route if decision.reason == STOPPED_REASON else None
    details = {"raw_route": raw_route, "confidence": decision.confidence, "model_reason": _short(decision.reason),
               "answer": _short(decision.answer or "")}
    passed = decision.route == case.expected
    reason = ""
    if not passed:
        reason = f"routed {decision.route!r}, expected {case.expected!r}"
        if raw_route and raw_route != decision.route:
            why = "code planned it" if decision.reason.startswith("planned by code") else \
                f"with confidence {decision.confidence:.2f}, below the threshold"
            reason += f" (the model said {raw_route!r}; {why})"
        if decision.reason:
            reason += f"; model's reason: {_short(decision.reason, 120)}"
    return CaseResult(passed=passed, got=decision.route, reason=reason, details=details, **base)


def _structure_problems(case: PlannerCase, plan: Plan) -> list[str]:
    problems = []
    used = {s.tool_name for s in plan.steps if s.tool_name}
    missing = [t for t in case.expect_tools if t not in used]
    if missing:
        problems.append(f"does not use {', '.join(missing)}")
    if len(plan.steps) < case.min_steps:
        problems.append(f"{len(plan.steps)} step(s), expected at least {case.min_steps}")
    if case.parallel and sum(1 for s in plan.steps if not s.depends_on) < 2:
        problems.append("no two steps can start at once (expected independent look-ups)")
    return problems


def _render_plan_compact(plan: Plan) -> list[str]:
    return [f"{s.step_id}. {s.tool_name or 'reasoning'}({json.dumps(s.tool_input, ensure_ascii=False)})"
            + (f" after {s.depends_on}" if s.depends_on else "") for s in plan.steps]


def score_planner(case: PlannerCase, items: Sequence[PlanItem], *, error: str | None = None,
                  latency_s: float = 0.0, first_step_s: float | None = None) -> CaseResult:
    """``items`` is everything ``Planner.plan`` yielded. Valid = it ended with ``PlanCompleted``."""
    final = items[-1] if items else None
    restarts = [i.error for i in items if isinstance(i, PlanRestarted)]
    emitted = sum(1 for i in items if isinstance(i, StepEmitted))
    base = {"role": "planner", "case_id": case.id, "expected": "valid plan", "latency_s": latency_s}
    if isinstance(final, PlanCompleted):
        repaired = _needed_repair(final.spend.calls)
        problems = _structure_problems(case, final.plan)
        details = {"steps": len(final.plan.steps), "tools": sorted({s.tool_name or "reasoning" for s in final.plan.steps}),
                   "structure_ok": not problems, "structure_problems": problems, "restarts": restarts,
                   "first_step_s": first_step_s, "steps_emitted": emitted, "plan": _render_plan_compact(final.plan)}
        if repaired:
            details["first_round_error"] = _short(restarts[0] if restarts else _first_round_error(final.spend.calls), 300)
        got = "valid (repaired)" if repaired else "valid"
        return CaseResult(passed=True, got=got, repaired=repaired, details=details, **base, **_usage_fields(final.spend.usage))
    if isinstance(final, PlanFailed):
        reason = f"{final.reason}: {_short(final.error, 300)}"
        details = {"failure": final.reason, "restarts": restarts, "first_step_s": first_step_s,
                   "steps_emitted": emitted, "last_reply": _short(_last_reply(final.spend.calls), 600)}
        return CaseResult(passed=False, got=final.reason, reason=reason, repaired=_needed_repair(final.spend.calls),
                          details=details, **base, **_usage_fields(final.spend.usage))
    reason = f"the planner did not finish: {_short(error or 'no PlanCompleted/PlanFailed was yielded')}"
    return CaseResult(passed=False, got="error", reason=reason, details={"restarts": restarts}, **base)


def _first_round_error(records: Sequence[Mapping[str, Any]]) -> str:
    """The repair request's last user message states the error of the first round."""
    for rec in records:
        msgs = list(rec.get("messages", ()))
        if any(m.get("role") == "assistant" for m in msgs):
            return str(msgs[-1].get("content", ""))
    return ""


def _norm(text: str) -> str:
    """Lower case, digit-group commas and spaces removed: '8,950,000' and '8 950 000' both read '8950000'."""
    out = text.lower().replace("\u202f", " ").replace("\u00a0", " ")
    chars = list(out)
    keep = []
    for i, c in enumerate(chars):
        if c in ", " and 0 < i < len(chars) - 1 and chars[i - 1].isdigit() and chars[i + 1].isdigit():
            continue
        keep.append(c)
    return "".join(keep)


def _mentions(answer: str, mentions: Sequence[Sequence[str]]) -> list[str]:
    """The expected figures the answer does not state (each entry: any one of its spellings)."""
    text = _norm(answer)
    return [alts[0] for alts in mentions if not any(_norm(a) in text for a in alts)]


def reflector_decision(case: ReflectorCase, reflection: Reflection, limits: PolicyLimits | None = None, *,
                       reviewed_again: bool = False, checks: Sequence[str] = DEFAULT_CHECKS) -> Decision:
    """The policy's decision on ``reflection`` as the task runner takes it (``agents/engine/task_runner.py``): with
    the same context (``agents.checks.review.review_context``, with the built-in check sets ``checks``);
    ``reviewed_again``: this is the second review of the same results."""
    return decide(review_context(reflection, case.task, case.results, case.plan, limits=limits, checks=checks,
                                 reviewed_again=reviewed_again))


def score_reflector(case: ReflectorCase, reflection: Reflection | None, *, limits: PolicyLimits | None = None,
                    records: Sequence[Mapping[str, Any]] = (), usage: Usage | None = None, error: str | None = None,
                    latency_s: float = 0.0, first: Reflection | None = None,
                    checks: Sequence[str] = DEFAULT_CHECKS) -> CaseResult:
    """Agreement of the policy's decision with the case: accept exactly when ``case.expected == 'accept'``. The
    policy decides as in production (``reflector_decision``). ``first``: the verdict the policy sent back for a
    second review (``planning.policy.ReviewAgain``), when ``reflection`` is that second review's: the case is
    scored on the second, as production ends on it; a review-again decision scored here is no accept."""
    repaired = _needed_repair(records)
    base = dict(role="reflector", case_id=case.id, expected=case.expected, latency_s=latency_s, repaired=repaired,
                **_usage_fields(usage))
    if reflection is None:
        return CaseResult(passed=False, got="invalid", reason=f"no usable reflection: {_short(error or '')}",
                          details={"raw_reply": _short(_last_reply(records), 400)}, **base)
    context = review_context(reflection, case.task, case.results, case.plan, limits=limits, checks=checks,
                             reviewed_again=first is not None)
    refused = context.contradictions
    kind = decision_kind(decide(context))
    want_accept = case.expected == "accept"
    passed = (kind == "accept") == want_accept
    raw_agrees = (reflection.action == "accept") == want_accept
    s = reflection.scores
    details: dict[str, Any] = {
        "decision": kind, "raw_action": reflection.action, "raw_agrees": raw_agrees,
        "scores": {"completeness": s.completeness, "correctness": s.correctness, "format": s.format},
        "overall_pass": reflection.overall_pass, "feedback": _short(reflection.feedback),
        "answer": _short(reflection.answer or ""),
        "refused_by_code": list(refused),
        "action_fits": (reflection.action in case.expected_actions) if case.expected_actions else None,
        "missing_mentions": None,
    }
    if first is not None:
        f = first.scores
        details["first_review"] = {"action": first.action, "scores": [f.completeness, f.correctness, f.format],
                                   "answer": _short(first.answer or "")}
    if want_accept and kind == "accept" and case.answer_mentions:
        details["missing_mentions"] = _mentions(reflection.answer or "", case.answer_mentions)
    reason = ""
    if not passed:
        scores = f"scores {s.completeness}/{s.correctness}/{s.format}, overall_pass={reflection.overall_pass}"
        if want_accept:
            via = (f"the model proposed {reflection.action!r}" if reflection.action != "accept"
                   else "the policy overruled the model's accept")
            reason = f"correct results not accepted: {via} ({scores}); feedback: {_short(reflection.feedback, 150)}"
        else:
            reason = (f"accepted results that are wrong/incomplete ({case.why}); {scores}; "
                      f"answer: {_short(reflection.answer or '', 150)}")
    return CaseResult(passed=passed, got=kind, reason=reason, details=details, **base)
