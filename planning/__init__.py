"""The pure planning core: wire models, tolerant parsing (whole and streamed), plan validation and the
reflection policy. No Ray, no network, no clock.

    >>> from planning import parse_plan
    >>> [s.step_id for s in parse_plan('{"steps": [{"step_id": 1}, {"step_id": 2, "depends_on": [1]}]}').steps]
    [1, 2]
"""

from planning.errors import LLMOutputError, PlanningError, PlanValidationError
from planning.models import Plan, PlanStep, Reflection, RetryDetails, RouterDecision, Scores
from planning.parse import (
    extract_json_object,
    json_schema_for,
    parse_plan,
    parse_reflection,
    parse_router_decision,
)
from planning.policy import (
    Accept,
    Decision,
    Escalate,
    PolicyLimits,
    ReflectionContext,
    Replan,
    RetryStep,
    ReviewAgain,
    decide,
)
from planning.stream import StreamingPlanParser
from planning.terse import TerseEncodingError, TersePlanParser, parse_terse, render_terse
from planning.validate import PlanProblem, ProblemCode, validate_plan, validate_step

__all__ = [
    "Accept",
    "Decision",
    "Escalate",
    "LLMOutputError",
    "Plan",
    "PlanProblem",
    "PlanStep",
    "PlanValidationError",
    "PlanningError",
    "PolicyLimits",
    "ProblemCode",
    "Reflection",
    "ReflectionContext",
    "Replan",
    "RetryDetails",
    "RetryStep",
    "ReviewAgain",
    "RouterDecision",
    "Scores",
    "StreamingPlanParser",
    "TerseEncodingError",
    "TersePlanParser",
    "decide",
    "extract_json_object",
    "json_schema_for",
    "parse_plan",
    "parse_reflection",
    "parse_router_decision",
    "parse_terse",
    "render_terse",
    "validate_plan",
    "validate_step",
]
