"""``ModelProfile``: what differs by model lives on the model (``llm.profile``). A profile is validated when made,
the two shipped ones say what the issue decided (the hosted default runs no coping strategy, the embedded one all
of them), a user's LLM class without a profile is hosted, and the profile crosses pickling with its model (Ray
ships the LLM to the role actors). ``OpenAIChat`` sends a grammar only for a profile that asks for one."""

from __future__ import annotations

import asyncio
import pickle

import pydantic
import pytest

from agents.config import RuntimeConfig
from agents.llm import (
    HOSTED,
    LLM,
    SMALL_LOCAL,
    FunctionLLM,
    LLMReply,
    LLMRequest,
    ModelProfile,
    OpenAIChat,
    RecordingLLM,
    Strategy,
    profile_of,
)
from agents.llm.fake_server import FakeOpenAIServer
from agents.llm.profile import PROMPT_NAMES, QUIET_LOCAL_RAY
from agents.roles.planner import Planner
from prompts import load_prompt
from prompts.registry import DEFAULT_VERSIONS, available_prompts

# --- validation -------------------------------------------------------------------------------------------------


def test_an_unknown_prompt_name_is_refused_with_the_known_ones():
    with pytest.raises(pydantic.ValidationError, match="unknown prompt name\\(s\\) plannr; a profile names versions "
                                                       "of router, planner"):
        ModelProfile(prompts={"plannr": "v4"})


@pytest.mark.parametrize("version", ["4", "version4", "v", "v4a", "V4"])
def test_a_version_not_written_v_n_is_refused(version):
    with pytest.raises(pydantic.ValidationError, match="a version is written 'v<N>', e.g. 'v4'"):
        ModelProfile(prompts={"planner": version})


def test_answer_again_without_the_final_figure_look_is_refused():
    with pytest.raises(pydantic.ValidationError, match="answer_again writes the answer of the final_figure_look"):
        ModelProfile(strategies=frozenset({Strategy.ANSWER_AGAIN}))
    both = ModelProfile(strategies=frozenset({Strategy.ANSWER_AGAIN, Strategy.FINAL_FIGURE_LOOK}))
    assert both.uses(Strategy.ANSWER_AGAIN) and both.uses(Strategy.FINAL_FIGURE_LOOK)


def test_a_field_the_profile_does_not_have_is_refused_and_a_profile_is_frozen():
    with pytest.raises(pydantic.ValidationError, match="serial_llm"):
        ModelProfile(serial_llm=True)  # type: ignore[call-arg]
    with pytest.raises(pydantic.ValidationError):
        HOSTED.grammar = True  # type: ignore[misc]


# --- the shipped profiles ---------------------------------------------------------------------------------------


def test_the_hosted_default_runs_no_strategy_and_uses_the_lean_terse_prompts():
    assert HOSTED.strategies == frozenset() and not any(HOSTED.uses(s) for s in Strategy)
    assert HOSTED.concurrent_calls and not HOSTED.stop_at_plan and not HOSTED.grammar
    assert HOSTED.local_ray_system_config == {}
    assert {name: HOSTED.prompt(name) for name in PROMPT_NAMES} == DEFAULT_VERSIONS
    versions = (HOSTED.prompt("router"), HOSTED.prompt("planner"), HOSTED.prompt("reflector"))
    assert versions == ("v5", "v14", "v11")
    assert [HOSTED.reply_form(r) for r in ("router", "planner", "reflector")] == ["terse"] * 3
    # the defaults of every model that is not given another profile
    assert ModelProfile().strategies == frozenset() and FunctionLLM(lambda r: "").profile == HOSTED


def test_the_small_local_profile_uses_every_strategy_and_the_json_forms():
    assert SMALL_LOCAL.strategies == frozenset(Strategy)
    assert {n: SMALL_LOCAL.prompt(n) for n in ("router", "planner", "reflector", "executor")} == \
        {"router": "v7", "planner": "v10", "reflector": "v10", "executor": "v3"}
    assert [SMALL_LOCAL.reply_form(r) for r in ("router", "planner", "reflector")] == ["json"] * 3
    assert not SMALL_LOCAL.concurrent_calls and SMALL_LOCAL.stop_at_plan and SMALL_LOCAL.grammar
    assert SMALL_LOCAL.local_ray_system_config == QUIET_LOCAL_RAY


def test_exactly_the_versions_a_profile_uses_ship():
    shipped = available_prompts()
    for name in PROMPT_NAMES:
        used = {HOSTED.prompt(name), SMALL_LOCAL.prompt(name)}
        assert set(shipped[name]) == used, name
        for version in used:
            assert load_prompt(name, version).template_id == f"{name}/{version}"


def test_with_prompts_is_a_new_profile_with_the_same_forms():
    json_planner = HOSTED.with_prompts(planner="v10").model_copy(
        update={"reply_forms": {**HOSTED.reply_forms, "planner": "json"}})
    assert json_planner.prompt("planner") == "v10" and json_planner.reply_form("planner") == "json"
    assert json_planner.prompt("router") == "v5" and json_planner.reply_form("router") == "terse"
    assert HOSTED.prompt("planner") == "v14" and HOSTED.reply_form("planner") == "terse"  # unchanged
    # validated like a new profile: a pin from the command line (benchmarks/prompt_regression) fails here, by name
    with pytest.raises(pydantic.ValidationError, match="unknown prompt name"):
        HOSTED.with_prompts(plannr="v10")
    with pytest.raises(pydantic.ValidationError, match="a version is written 'v<N>'"):
        SMALL_LOCAL.with_prompts(planner="10")


# --- an LLM without a profile -----------------------------------------------------------------------------------


class UsersLLM:
    """A user's own LLM class: the protocol's two methods and no ``profile``."""

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    async def complete(self, request: LLMRequest) -> LLMReply:
        self.requests.append(request)
        return LLMReply(text='{"steps": [{"step_id": 1, "description": "x", "tool_name": null}]}')

    async def stream(self, request: LLMRequest):  # type: ignore[no-untyped-def]
        yield await self.complete(request)


def test_a_users_llm_class_without_a_profile_is_hosted():
    llm = UsersLLM()
    assert isinstance(llm, LLM) and profile_of(llm) is HOSTED
    odd = UsersLLM()
    odd.profile = "small"  # type: ignore[attr-defined]  # not a ModelProfile: ignored
    assert profile_of(odd) is HOSTED
    assert profile_of(FunctionLLM(lambda r: "", profile=SMALL_LOCAL)) is SMALL_LOCAL
    # a wrapper keeps the model's profile, so roles built on it ask for the same prompts
    assert RecordingLLM(FunctionLLM(lambda r: "", profile=SMALL_LOCAL), lambda record: None).profile == SMALL_LOCAL


def test_roles_on_a_users_llm_use_the_hosted_prompts():
    llm = UsersLLM()
    planner = Planner(llm, {}, "", RuntimeConfig(stream_plan=False).planner_options())  # type: ignore[arg-type]

    async def plan() -> None:
        async for _ in planner.plan("t", "Say hello."):
            pass

    asyncio.run(plan())
    system = llm.requests[0].messages[0]["content"]
    hosted = load_prompt("planner", HOSTED.prompt("planner")).sections[0][1]
    assert system.startswith(hosted.split("{{")[0]) and llm.requests[0].json_schema is None  # terse: no schema


# --- pickling -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL, ModelProfile(name="mine", strategies={Strategy.LOOP_CUT},
                                                                       prompts={"planner": "v10"})],
                         ids=lambda p: p.name)
def test_a_profile_pickles_intact(profile):
    clone = pickle.loads(pickle.dumps(profile))
    assert clone == profile and clone.strategies == profile.strategies and type(clone) is ModelProfile


def test_a_profile_crosses_cloudpickle_with_a_function_llm():
    from ray import cloudpickle  # as Ray ships an LLM to the role actors; only this test imports ray

    mine = ModelProfile(name="mine", strategies=frozenset({Strategy.FIGURE_FIT}), concurrent_calls=False)
    suffix = "!"
    clone = cloudpickle.loads(cloudpickle.dumps(FunctionLLM(lambda r: r.role + suffix, profile=mine)))
    assert clone.profile == mine and profile_of(clone).uses(Strategy.FIGURE_FIT)
    assert not profile_of(clone).concurrent_calls
    assert asyncio.run(clone.complete(LLMRequest(role="router", messages=[]))).text == "router!"


# --- OpenAIChat's grammar -----------------------------------------------------------------------------------------


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def test_open_ai_chat_sends_a_grammar_only_when_its_profile_says_so(server):
    grammar = 'root ::= "1. noop()\\n"'
    request = LLMRequest(role="router", messages=[{"role": "user", "content": "hello"}], grammar=grammar)
    default = OpenAIChat("fake-model", base_url=server.base_url, api_key="k", timeout_s=5.0, max_retries=0)
    assert default.profile is HOSTED
    for profile in (SMALL_LOCAL, ModelProfile(grammar=True), HOSTED):
        llm = OpenAIChat("fake-model", base_url=server.base_url, api_key="k", timeout_s=5.0, max_retries=0,
                         profile=profile)
        asyncio.run(llm.complete(request))
    asyncio.run(default.complete(request))  # OpenAI proper would reject the field
    small, grammar_only, hosted, plain = server.requests
    assert small["grammar"] == grammar_only["grammar"] == grammar and "response_format" not in small
    assert "grammar" not in hosted and "grammar" not in plain
