"""What the built-in check sets find in one review, and the policy's input built from it: the task runner and the
prompt regression set (benchmarks/prompt_regression) both call ``review_context``, so they decide alike.

``checks`` names the sets that run (``RuntimeConfig.builtin_checks``): "sound", the default, vetoes only where a
rule is sound for any task and otherwise shows notes (``agents.checks.sound``); "numeric" adds the opt-in rules
for look-up-and-compute questions (``agents.checks.numeric``), vetoes and the notes that name figures included.

    >>> from planning.models import Plan, PlanStep, Reflection, Scores
    >>> plan = Plan(steps=[PlanStep(step_id=1, description="versions", tool_name="pypi", tool_input={"q": "httpx"})])
    >>> views = [StepFacts(1, "versions", "pypi", "completed", "httpx 0.28.1 was released on 2024-12-06.")]
    >>> accept = Reflection(scores=Scores(completeness=5, correctness=5, format=5), overall_pass=True,
    ...                     action="accept", answer="httpx, released on 2024-12-06.")
    >>> review_context(accept, "Which had the more recent release?", views, plan).contradictions
    ()
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agents.checks import numeric, sound
from agents.checks.facts import Fact, Result, Severity
from planning.models import Plan, Reflection
from planning.policy import PolicyLimits, ReflectionContext

__all__ = ["DEFAULT_CHECKS", "StepFacts", "StepLike", "answer_facts", "evidence_of", "result_facts",
           "review_context"]

DEFAULT_CHECKS: tuple[str, ...] = ("sound",)
"""``RuntimeConfig.builtin_checks``' default: only sound vetoes."""


class StepLike(Protocol):
    """What the checks read of a step as the engine shows it (``agents.roles.messages.StepView``)."""

    @property
    def step_id(self) -> int: ...
    @property
    def description(self) -> str: ...
    @property
    def tool_name(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def output(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class StepFacts:
    """A plain ``StepLike`` (examples, tests and callers without a ``StepView``)."""

    step_id: int
    description: str
    tool_name: str | None
    status: str
    output: Any = None


def evidence_of(views: Iterable[StepLike], plan: Plan | None = None) -> list[Result]:
    """The steps as the checks read them: outputs of completed steps, the rest as not completed, and what each
    looked up (its description and, from ``plan``, its text arguments)."""
    inputs = {s.step_id: s.tool_input for s in plan.steps} if plan is not None else {}
    deps = {s.step_id: tuple(s.depends_on) for s in plan.steps} if plan is not None else {}
    out = []
    for v in views:
        texts = [x for x in inputs.get(v.step_id, {}).values() if isinstance(x, str)]
        out.append(Result(v.step_id, v.tool_name, v.description, v.output if v.status == "completed" else None,
                          failed=v.status != "completed", about=" ".join([v.description, *texts]),
                          depends_on=deps.get(v.step_id, ()), arguments=" ".join(texts),
                          inputs=inputs.get(v.step_id)))
    return out


def result_facts(task: str, results: Sequence[Result], checks: Sequence[str] = DEFAULT_CHECKS) -> tuple[Fact, ...]:
    """What the sets find in the results alone, shown to the reviewer before it decides. The numeric set's facts
    include the sound set's notes (in the order its prompts were measured with), so they are not said twice."""
    if "numeric" in checks:
        return numeric.check_results(task, results)
    if "sound" in checks:
        return tuple(sound.result_notes(task, results))
    return ()


def answer_facts(answer: str | None, results: Sequence[Result], task: str,
                 checks: Sequence[str] = DEFAULT_CHECKS) -> tuple[Fact, ...]:
    """The contradictions of a proposed answer that are the answer's own (a second review may put them right)."""
    facts: tuple[Fact, ...] = ()
    if "sound" in checks or "numeric" in checks:
        facts += sound.answer_faults(answer, results, task=task)
    if "numeric" in checks:
        facts += numeric.answer_faults(answer, results, task=task)
    return facts


def review_context(reflection: Reflection, task: str, views: Sequence[StepLike], plan: Plan, *,
                   checks: Sequence[str] = DEFAULT_CHECKS, step_retries: Mapping[int, int] | None = None,
                   replans: int = 0, limits: PolicyLimits | None = None,
                   reviewed_again: bool = False, final_figure_look: bool = False) -> ReflectionContext:
    """The policy's input for one review, with what the sets find: what is wrong with an accepted answer (an
    accept it contradicts is not one), whether the results themselves hold (then what is wrong is the answer's
    own, and the reviewer is asked again before anything is replanned), whether a contradiction-free accept leaves
    out the figure the plan's final result holds (``sound.omitted_final``, with ``final_figure_look``, a model
    profile's ``Strategy.FINAL_FIGURE_LOOK``: it is asked about once more), and, with
    the numeric set only, whether it states the figure the plan computed (a low score is then asked about once
    more)."""
    results = evidence_of(views, plan)
    accepted = reflection.action == "accept"
    # Only the numeric set finds contradictions in the results alone; the sound set's are notes for the reviewer.
    of_results = [f for f in result_facts(task, results, checks) if f.severity is Severity.CONTRADICTION] \
        if "numeric" in checks else []
    contradictions: tuple[str, ...] = ()
    if accepted and reflection.answer:
        contradictions = tuple(f.text for f in (*of_results, *answer_facts(reflection.answer, results, task, checks)))
    computed = "numeric" in checks and numeric.states_computed(reflection.answer, results)
    built_in = "sound" in checks or "numeric" in checks
    look = final_figure_look and accepted and not contradictions and built_in
    omitted = sound.omitted_final(reflection.answer, results) if look else None
    return ReflectionContext(
        reflection=reflection, step_retries=dict(step_retries or {}), replans=replans, limits=limits or PolicyLimits(),
        step_ids=frozenset(s.step_id for s in plan.steps), contradictions=contradictions,
        answer_only=not of_results, states_computed=accepted and not contradictions and computed,
        reviewed_again=reviewed_again, omits_final=omitted or "")
