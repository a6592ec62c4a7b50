"""RuntimeConfig.builtin_checks: the default is the sound set, an unknown name is a clear error, and every
component that reads the sets gets them from the config, whatever the model's profile."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agents.config import BUILTIN_CHECK_SETS, NUMERIC_QA_CHECKS, RuntimeConfig
from agents.llm.profile import SMALL_LOCAL, ModelProfile


def test_the_default_is_the_sound_set_and_no_model_profile_picks_the_sets():
    assert RuntimeConfig().builtin_checks == ("sound",)
    assert BUILTIN_CHECK_SETS == ("sound", "numeric")
    # The embedded model's knobs live on its profile; the sets stay the user's (llm=None changes no config).
    assert not [name for name in ModelProfile.model_fields if "check" in name]
    small = {"concurrent_calls": SMALL_LOCAL.concurrent_calls, "read_through": True}
    assert RuntimeConfig().dispatch_options(**small).checks == ("sound",)
    assert RuntimeConfig(builtin_checks=NUMERIC_QA_CHECKS).dispatch_options(**small).checks == NUMERIC_QA_CHECKS


@pytest.mark.parametrize(("given", "message"), [
    (("general",), "unknown check set(s) 'general'; the built-in sets are 'sound', 'numeric'"),
    (("sound", "Numeric"), "unknown check set(s) 'Numeric'"),
    ("sound", "give a tuple of set names, e.g. ('sound',)"),
])
def test_an_unknown_set_is_a_clear_configuration_error(given, message):
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        RuntimeConfig(builtin_checks=given)


def test_sets_are_kept_once_in_order_and_none_at_all_is_allowed():
    assert RuntimeConfig(builtin_checks=["numeric", "sound", "numeric"]).builtin_checks == ("numeric", "sound")
    assert RuntimeConfig(builtin_checks=()).builtin_checks == ()


def test_each_role_and_the_engine_read_the_sets_from_the_config():
    config = RuntimeConfig(builtin_checks=NUMERIC_QA_CHECKS)
    assert config.prompt_options().checks == NUMERIC_QA_CHECKS  # reviewer's facts, executor, router
    assert config.router_options().prompts.checks == NUMERIC_QA_CHECKS
    assert config.executor_options().prompts.checks == NUMERIC_QA_CHECKS
    assert config.dispatch_options().checks == NUMERIC_QA_CHECKS  # name hops answered by code
    assert RuntimeConfig().dispatch_options().checks == ("sound",)
