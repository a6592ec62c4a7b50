"""The reviewer's evidence is built from the plan and the step views (``agents.roles.render.evidence_of``): what
each step looked up, the steps it used and the figures it typed, so code sees what the planner wrote."""

from __future__ import annotations

from agents.checks.facts import Severity
from agents.checks.numeric import check_results
from agents.checks.review import evidence_of, review_context
from agents.roles.messages import StepView
from planning.models import Plan, Reflection, Scores

TASK = "What is the ratio of Paris's population to Rome's (city proper)?"
PLAN = Plan.model_validate({"steps": [
    {"step_id": 1, "description": "population of Paris", "tool_name": "doc_search",
     "tool_input": {"query": "population of Paris", "k": 1}},
    {"step_id": 2, "description": "population of Rome", "tool_name": "doc_search",
     "tool_input": {"query": "population of Rome", "k": 1}},
    {"step_id": 3, "description": "ratio", "tool_name": "calculator", "tool_input": {"expression": "2.10 / 2750000"},
     "depends_on": [1, 2]}]})
VIEWS = [StepView(1, "population of Paris", "doc_search", "completed",
                  [{"title": "Paris", "text": "Paris had a population of about 2.10 million in 2023."}]),
         StepView(2, "population of Rome", "doc_search", "completed",
                  [{"title": "Rome", "text": "Rome had a population of about 2.75 million in 2023."}]),
         StepView(3, "ratio", "calculator", "completed", 7.636363636363636e-07)]


def test_the_typed_expression_reaches_the_checks():
    evidence = evidence_of(VIEWS, PLAN)
    assert evidence[2].arguments == "2.10 / 2750000" and evidence[2].depends_on == (1, 2)
    assert evidence[0].arguments == "population of Paris"
    facts = [f for f in check_results(TASK, evidence) if f.severity is Severity.CONTRADICTION]
    assert len(facts) == 1 and "mixes scales" in facts[0].text


def test_an_accept_of_the_scaled_ratio_is_contradicted():
    accept = Reflection(scores=Scores(completeness=5, correctness=4, format=5), overall_pass=True, action="accept",
                        answer="The ratio of Paris's population to Rome's is approximately 7.636e-07.")
    found = review_context(accept, TASK, VIEWS, PLAN, checks=("sound", "numeric")).contradictions
    assert any("mixes scales" in text for text in found)
