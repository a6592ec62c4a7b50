"""Pydantic models for what each role's LLM must return (the fixed wire formats of DESIGN.md).

These are the only shapes that cross the LLM boundary. Parsing (tolerant of fences, prose and
trailing commas) lives in ``planning.parse``; meaning (ids, dependencies, tools) is checked in
``planning.validate``.

Example:
    >>> Plan.model_validate({"steps": [{"step_id": 1, "description": "add", "tool_name": "calculator",
    ...                                  "tool_input": {"expression": "1+1"}, "depends_on": []}]}).steps[0].step_id
    1
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from planning.text_limits import cap_text

__all__ = [
    "Plan",
    "PlanStep",
    "POINTING_KINDS",
    "WordKind",
    "ClassifiedWord",
    "Reflection",
    "ReflectionAction",
    "RetryDetails",
    "Route",
    "RouterDecision",
    "Scores",
]

Route = Literal["plan", "direct", "clarify", "refuse"]
ReflectionAction = Literal["accept", "retry_step", "replan", "escalate"]


ModelText = Annotated[str, AfterValidator(cap_text)]
"""Free text a model writes that is kept and shown (answers, feedback, reasons): cut to ``MAX_TEXT_CHARS`` with a
marker, so no reply can make every later prompt count megabytes (``planning.text_limits``)."""


class _Wire(BaseModel):
    # Models add keys we never asked for; ignoring them is safer than failing a whole plan on them.
    model_config = ConfigDict(extra="ignore", frozen=True)


class RouterDecision(_Wire):
    """The router's verdict on a task."""

    route: Route
    confidence: float = Field(ge=0.0, le=1.0)
    reason: ModelText = ""
    answer: ModelText | None = None
    """The direct answer (route "direct") or the clarifying question (route "clarify")."""


WordKind = Literal["pronoun", "demonstrative", "noun", "name", "id", "verb", "adjective", "number"]
POINTING_KINDS: frozenset[str] = frozenset({"pronoun", "demonstrative"})
"""The kinds of word that can point at something a task never names; nouns, names, ids and the rest name it."""


class ClassifiedWord(_Wire):
    """The reply to ``clarify_check`` (``Strategy.CLARIFY_CHECK``): the word it found and its kind, a closed set
    the server constrains the reply to. Only a pronoun or a demonstrative points at something."""

    word: str | None = None
    kind: WordKind | None = None


class PlanStep(_Wire):
    """One node of the plan DAG: a tool call, or a reasoning step when ``tool_name`` is None."""

    step_id: int = Field(ge=1)
    description: str = ""
    tool_name: str | None = None
    tool_input: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[int] = Field(default_factory=list)


class Plan(_Wire):
    """A whole plan as the planner emits it."""

    steps: list[PlanStep]
    answer: SkipJsonSchema[ModelText | None] = Field(default=None, exclude=True)
    """The answer's shape the planner wrote after its steps (the terse form's ``answer:`` line), with step
    references code fills from the results (``agents.roles.reflector.drafted_answer``); the reviewer is shown
    it filled and confirms or replaces it. Not part of the wire dump or of the plan's JSON schema (a JSON plan
    cannot carry one): it is the planner's proposal to the reviewer, kept in the task's checkpoint
    (``TaskState.drafted_answer``)."""

    def step(self, step_id: int) -> PlanStep:
        for s in self.steps:
            if s.step_id == step_id:
                return s
        raise KeyError(step_id)


class Scores(_Wire):
    completeness: int = Field(ge=1, le=5)
    correctness: int = Field(ge=1, le=5)
    format: int = Field(ge=1, le=5)

    def minimum(self) -> int:
        return min(self.completeness, self.correctness, self.format)


class RetryDetails(_Wire):
    step_id: int
    modification: ModelText = ""


class Reflection(_Wire):
    """The reflector's judgement of an executed plan. The policy (``planning.policy``) decides."""

    scores: Scores
    overall_pass: bool
    action: ReflectionAction
    retry_details: RetryDetails | None = None
    feedback: ModelText = ""
    answer: ModelText | None = None
