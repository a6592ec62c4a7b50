"""What differs by model: which prompt each role uses and in which reply form, whether calls may run at once,
grammar-constrained replies, and the coping strategies a small model needs. It lives on the model
(``llm.profile``), never in ``RuntimeConfig`` and never in a prompt file.

The hosted default (``HOSTED``) runs only general mechanisms: the DAG, the reflection policy, the sound vetoes and
the user's checks. Each ``Strategy`` is a mechanism that made a small model's plans or answers right on measured
tasks and has a cost or a precondition a capable model does not need; a profile turns it on. Their preconditions
and measured effects: docs/architecture.md, "Model profiles".

Example:
    >>> from agents.llm import FunctionLLM, ModelProfile, Strategy
    >>> llm = FunctionLLM(lambda r: "ok", profile=ModelProfile(strategies={Strategy.LOOP_CUT}))
    >>> llm.profile.uses(Strategy.LOOP_CUT), HOSTED.uses(Strategy.LOOP_CUT)
    (True, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prompts.registry import DEFAULT_VERSIONS, ReplyForm

__all__ = ["HOSTED", "PROMPT_NAMES", "SMALL_LOCAL", "ModelProfile", "ReplyForm", "Strategy", "profile_of"]

PROMPT_NAMES = tuple(DEFAULT_VERSIONS)
"""The prompts a profile names a version of (``prompts/<name>/v<N>.txt``)."""


class Strategy(StrEnum):
    """A coping mechanism for small models. Off in ``HOSTED``; ``SMALL_LOCAL`` turns on all of them."""

    CLARIFY_CHECK = "clarify_check"
    """Router: a question back stands only when one narrow follow-up call (``prompts/clarify_check``) names a word
    of the task that points at something never named; otherwise the task is planned. Costs a call per question."""
    LOOP_CUT = "loop_cut"
    """Planner: a reply that writes the same read call a third time is cut there (``planning.loops``)."""
    REJECTED_CALLS = "rejected_calls"
    """Planner: a replanned read call its tool already rejected in the task is refused into the repair round
    (``planning.rejected``)."""
    BLIND_CALLS = "blind_calls"
    """Planner: a call whose result cannot depend on the task (a tool's documented example copied, figures nobody
    looked up) sends the first plan to the repair round (``planning.blind_calls``). An extra planner call."""
    FIGURE_FIT = "figure_fit"
    """Executor: on an argument error where a tool wants numbers and got passages, read each passage's figure by
    code, else with one narrow model call (``agents.roles.figure_fit``)."""
    READ_THROUGH = "read_through"
    """Executor: a figure read through a reasoning step that names a thing comes from the passage of that thing
    (``agents.engine.hops.read_through``)."""
    REPAIR_SCOPE = "repair_scope"
    """Executor: an argument repair that swaps the value for another one the tool knows is refused
    (``agents.roles.repair_scope``)."""
    REVIEW_NOTES = "review_notes"
    """Reviewer: the sound set's notes (facts code found about the results) are shown in the reviewer's prompt."""
    FINAL_FIGURE_LOOK = "final_figure_look"
    """Policy: an accept whose answer leaves out the figure the plan computed last is reviewed once more
    (``agents.checks.sound.omitted_final``). An extra reviewer call when it fires."""
    ANSWER_AGAIN = "answer_again"
    """Reviewer: that second look writes only the answer, with the ``answer`` prompt, the server holding it to the
    figure (``planning.written_answer``). Needs ``FINAL_FIGURE_LOOK`` and a grammar or JSON-schema server."""


class ModelProfile(BaseModel):
    """What differs by model (pydantic-ai's ``ModelProfile``, the Agents SDK's ``ModelSettings``).

    Every LLM has one as ``.profile``; ``OpenAIChat(..., profile=...)`` and ``FunctionLLM(..., profile=...)``
    override the default. Roles read it from the LLM they call, so it crosses Ray with the model.

        >>> HOSTED.prompt("planner"), HOSTED.reply_form("planner")
        ('v14', 'terse')
        >>> HOSTED.with_prompts(planner="v10").prompt("planner")
        'v10'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "hosted"
    prompts: Mapping[str, str] = Field(default_factory=dict)
    """Template version per prompt name (``PROMPT_NAMES``); a name not given uses ``HOSTED``'s
    (``prompts.DEFAULT_VERSIONS``)."""
    reply_forms: Mapping[str, ReplyForm] = Field(default_factory=dict)
    """The reply form per role whose template asks for one; a role not given: ``HOSTED``'s."""
    concurrent_calls: bool = True
    """The server answers several requests at once. False (one llama.cpp slot): the planner starts after the
    router, not beside it, and a reasoning step waits until the plan has streamed (its call would only queue)."""
    stop_at_plan: bool = False
    """Stop reading the router's JSON reply once it settled on a plan route with a trusted confidence
    (``planning.settled_route``): worth it where decoding the reason costs seconds."""
    grammar: bool = False
    """Send GBNF grammars (``LLMRequest.grammar``) in the request body: llama.cpp servers constrain decoding with
    them; OpenAI's API rejects fields it does not know."""
    strategies: frozenset[Strategy] = frozenset()
    local_ray_system_config: Mapping[str, Any] = Field(default_factory=dict)
    """Ray ``_system_config`` for a private local Ray started beside this model's server on the same cores."""

    @field_validator("prompts")
    @classmethod
    def _known_prompts(cls, prompts: Mapping[str, str]) -> Mapping[str, str]:
        unknown = sorted(set(prompts) - set(PROMPT_NAMES))
        if unknown:
            raise ValueError(f"prompts: unknown prompt name(s) {', '.join(unknown)}; a profile names versions of "
                             f"{', '.join(PROMPT_NAMES)}")
        bad = {k: v for k, v in prompts.items() if not (v.startswith("v") and v[1:].isdigit())}
        if bad:
            raise ValueError(f"prompts: a version is written 'v<N>', e.g. 'v4'; got {bad}")
        return dict(prompts)

    @model_validator(mode="after")
    def _answer_needs_look(self) -> ModelProfile:
        if Strategy.ANSWER_AGAIN in self.strategies and Strategy.FINAL_FIGURE_LOOK not in self.strategies:
            raise ValueError("strategy answer_again writes the answer of the final_figure_look: turn that on too")
        return self

    def prompt(self, name: str) -> str:
        """The version of prompt ``name`` this model uses."""
        return self.prompts.get(name) or DEFAULT_VERSIONS[name]

    def reply_form(self, role: str) -> ReplyForm:
        return self.reply_forms.get(role) or _HOSTED_FORMS.get(role, "json")

    def uses(self, strategy: Strategy) -> bool:
        return strategy in self.strategies

    def with_prompts(self, **versions: str) -> ModelProfile:
        """This profile with other template versions (their reply forms are the profile's for the role),
        validated as a new profile is (``model_copy`` would not be: a misspelt pin would fail only when a role
        loads it)."""
        return self.model_validate({**self.model_dump(), "prompts": {**self.prompts, **versions}})


_HOSTED_FORMS: dict[str, ReplyForm] = {"router": "terse", "planner": "terse", "reflector": "terse"}

HOSTED = ModelProfile(name="hosted", reply_forms=_HOSTED_FORMS)
"""The default of ``OpenAIChat`` and the test fakes: the lean terse prompts (the router sees tool purposes, the
reviewer one line a step), calls at once, and no coping strategy."""

QUIET_LOCAL_RAY: dict[str, Any] = {
    "raylet_report_resources_period_milliseconds": 1000,
    "raylet_check_gc_period_milliseconds": 1000,
    "memory_monitor_refresh_ms": 1000,
    "task_events_report_interval_ms": 5000,
    "event_stats": False,
}
"""Ray's periodic work, done less often beside the embedded model (defaults: 100, 100, 250 and 1000 ms, and event
loop statistics on). llama.cpp decodes with one thread per core that meet at every layer, so each wake-up of a
Ray process on a 2-core machine stalls both; idle Ray with six actors took ~17% of a core, ~10% with these
(docs/architecture.md, "The embedded model"). Each is a reporting or housekeeping period of one node's own
processes: resource reports to the GCS, garbage-collection checks, the memory monitor (OOM kills come up to 0.75 s
later) and the task-event feed of the dashboard."""

SMALL_LOCAL = ModelProfile(
    name="small-local",
    prompts={"router": "v7", "planner": "v10", "reflector": "v10", "executor": "v3"},
    reply_forms={"router": "json", "planner": "json", "reflector": "json"},
    concurrent_calls=False, stop_at_plan=True, grammar=True, strategies=frozenset(Strategy),
    local_ray_system_config=QUIET_LOCAL_RAY)
"""The embedded 1.5B-class CPU model behind one llama.cpp slot: the JSON forms (its server holds a reply to the
schema; the small models wrote the terse forms unreliably without a grammar for every role), prompts that open
alike so the server reuses one prefill, one request at a time, and every coping strategy. It is at its floor on
compositional tasks; no new rule or prompt is added for it (docs/architecture.md)."""


def profile_of(llm: object) -> ModelProfile:
    """``llm.profile``, or ``HOSTED`` for a user's LLM class that has none."""
    profile = getattr(llm, "profile", None)
    return profile if isinstance(profile, ModelProfile) else HOSTED
