"""A shared opening: templates that declare ``# opening: opening/vN`` start their system message with the same
text, so a model server that keeps the last prompt's state (llama.cpp) prefills it once for every role."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.llm import HOSTED, SMALL_LOCAL
from prompts import load_prompt
from prompts.errors import PromptFormatError
from prompts.registry import PromptRegistry

CATALOG = "- lookup(city: str): the population of a city"


def _write(root: Path, name: str, version: str, text: str) -> None:
    (root / name).mkdir(parents=True, exist_ok=True)
    (root / name / f"{version}.txt").write_text(text)


OPENING = "# name: opening\n# version: 1\n# variables: tools\n=== system\nShared part.\nTools:\n{{tools}}\n=== user\n"


def test_roles_with_the_same_opening_share_the_system_prefix(tmp_path):
    _write(tmp_path, "opening", "v1", OPENING)
    for role in ("router", "planner"):
        _write(tmp_path, role, "v1", f"# name: {role}\n# version: 1\n# variables: tools, task\n# opening: opening/v1\n"
                                     f"=== system\nYou are the {role}.\n=== user\nTask: {{{{task}}}}\n")
    reg = PromptRegistry(tmp_path)
    router, planner = (reg.load(r, "v1").render(tools=CATALOG, task="t").messages[0]["content"]
                       for r in ("router", "planner"))
    shared = f"Shared part.\nTools:\n{CATALOG}\n\n"
    assert router.startswith(shared) and planner.startswith(shared)
    assert router.endswith("You are the router.") and planner.endswith("You are the planner.")


def test_the_fingerprint_covers_the_opening(tmp_path):
    _write(tmp_path, "opening", "v1", OPENING)
    _write(tmp_path, "router", "v1", "# name: router\n# version: 1\n# variables: tools, task\n# opening: opening/v1\n"
                                     "=== system\nRoute.\n=== user\n{{task}}\n")
    before = PromptRegistry(tmp_path).load("router", "v1").fingerprint
    _write(tmp_path, "opening", "v1", OPENING.replace("Shared part.", "Another shared part."))
    assert PromptRegistry(tmp_path).load("router", "v1").fingerprint != before


def test_a_template_must_declare_the_openings_variables(tmp_path):
    _write(tmp_path, "opening", "v1", OPENING)
    _write(tmp_path, "router", "v1", "# name: router\n# version: 1\n# variables: task\n# opening: opening/v1\n"
                                     "=== system\nRoute.\n=== user\n{{task}}\n")
    with pytest.raises(PromptFormatError, match="opening"):
        PromptRegistry(tmp_path).load("router", "v1")


def test_an_opening_must_be_named_as_one(tmp_path):
    _write(tmp_path, "router", "v1", "# name: router\n# version: 1\n# variables: task\n# opening: planner/v1\n"
                                     "=== system\nRoute.\n=== user\n{{task}}\n")
    with pytest.raises(PromptFormatError, match="must name an opening"):
        PromptRegistry(tmp_path).load("router", "v1")


def test_the_shipped_embedded_router_opens_with_the_shared_text():
    opening = load_prompt("opening", "v1").render(tools=CATALOG).messages[0]["content"]
    router = load_prompt("router", SMALL_LOCAL.prompt("router")).render(tools=CATALOG, task="t", history="")
    assert router.messages[0]["content"].startswith(opening)
    # the hosted router sees tool purposes, not the shared catalog: no opening to share with a llama.cpp slot
    assert load_prompt("router", HOSTED.prompt("router")).opening is None


def test_every_embedded_role_opens_alike_and_the_reviewer_sees_the_facts():
    """The embedded model's forms (``SMALL_LOCAL.prompts``): one opening, so llama.cpp prefills the tool list once
    for a task's router, planner, executors and reviewer."""
    import asyncio

    from agents.config import RuntimeConfig
    from agents.llm import FunctionLLM
    from agents.roles.messages import StepView
    from agents.roles.reflector import Reflector
    from planning.models import Plan, PlanStep

    opening = load_prompt("opening", "v1").render(tools=CATALOG).messages[0]["content"]
    assert {"router", "planner", "reflector", "executor"} <= set(SMALL_LOCAL.prompts)
    assert all(load_prompt(role, version).opening == "opening/v1" for role, version in SMALL_LOCAL.prompts.items())
    seen: list[list[dict]] = []

    def model(request):
        seen.append(request.messages)
        return '{"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": true, ' \
               '"action": "accept", "retry_details": null, "feedback": "", "answer": "x"}'

    # the negative difference below is a fact of the numeric set (the demo's), asked for explicitly
    options = RuntimeConfig(builtin_checks=("sound", "numeric")).prompt_options()
    reflector = Reflector(FunctionLLM(model, profile=SMALL_LOCAL), options, CATALOG)
    plan = Plan(steps=[PlanStep(step_id=1, description="difference", tool_name="lookup", tool_input={})])
    views = [StepView(step_id=1, description="difference", tool_name="lookup", status="completed", output=-650000.0)]
    asyncio.run(reflector.reflect("t", "How many more people live in the larger city?", plan, views))
    system, user = (m["content"] for m in seen[0])
    assert system.startswith(opening)
    assert "Checked by code:\n- CONTRADICTION: " in user and "-650,000" in user
