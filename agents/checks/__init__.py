"""Answer checks: the user's own rules, run before a reviewer's accept counts.

    from agents.checks import Reject, AnswerReview

    def names_rome(review: AnswerReview) -> None:
        if "Rome" not in (review.answer or ""):
            raise Reject("the answer must name Rome")

    orch = Orchestrator(llm=..., tools=[...], checks=[names_rome])

A check is sync or async; it passes by returning and refuses by raising ``Reject``. Anything else it raises fails
the task with a message naming the check. Which built-in rules run is ``RuntimeConfig.builtin_checks``
(docs/checks.md).
"""

from __future__ import annotations

from agents.checks.api import AnswerReview, Check, CheckedReflection, CheckFinding, Reject, ReviewedStep

__all__ = ["Reject", "AnswerReview", "ReviewedStep", "Check", "CheckFinding", "CheckedReflection"]
