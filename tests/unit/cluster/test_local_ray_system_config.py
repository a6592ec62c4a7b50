"""The model profile's ``local_ray_system_config`` reaches ``ray.init`` only for a private local Ray: a cluster
joined by address refuses ``_system_config``, and the caller's own ``_system_config`` entries win."""

from __future__ import annotations

from typing import Any

from agents.cluster.driver import _init_kwargs
from agents.config import RuntimeConfig
from agents.llm import HOSTED, SMALL_LOCAL, FunctionLLM, ModelProfile
from agents.llm.profile import QUIET_LOCAL_RAY


def _kwargs(config: RuntimeConfig, address: str | None, profile: ModelProfile = SMALL_LOCAL) -> dict[str, Any]:
    llm = FunctionLLM(lambda request: "", profile=profile)
    return {"address": address or "local", **_init_kwargs(config, address, False, [], llm)}


def test_a_private_local_ray_gets_the_quiet_periods_and_the_callers_entries_win() -> None:
    config = RuntimeConfig(deployment={"ray_init_kwargs": {"num_cpus": 2, "_system_config": {"event_stats": True}}})
    kwargs = _kwargs(config, None)
    assert kwargs["address"] == "local" and kwargs["num_cpus"] == 2
    assert kwargs["_system_config"] == {**QUIET_LOCAL_RAY, "event_stats": True}


def test_a_cluster_joined_by_address_gets_none() -> None:
    kwargs = _kwargs(RuntimeConfig(), "ray://head:10001")
    assert "_system_config" not in kwargs


def test_only_the_embedded_model_sets_it() -> None:
    assert HOSTED.local_ray_system_config == {} and SMALL_LOCAL.local_ray_system_config == QUIET_LOCAL_RAY
    assert "_system_config" not in _kwargs(RuntimeConfig(), None, HOSTED)
    assert "_system_config" not in _kwargs(RuntimeConfig(), None, SMALL_LOCAL.model_copy(
        update={"local_ray_system_config": {}}))
    # a user's LLM class without a profile is hosted
    assert "_system_config" not in _init_kwargs(RuntimeConfig(), None, False, [], object())  # type: ignore[arg-type]
