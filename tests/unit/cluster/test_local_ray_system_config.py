"""``RuntimeConfig.local_ray_system_config`` reaches ``ray.init`` only for a private local Ray: a cluster joined by
address refuses ``_system_config``, and the caller's own ``_system_config`` entries win."""

from __future__ import annotations

from typing import Any

from agents.cluster.driver import _init_kwargs
from agents.config import QUIET_LOCAL_RAY, RuntimeConfig, for_embedded_model


def _kwargs(config: RuntimeConfig, address: str | None) -> dict[str, Any]:
    return {"address": address or "local", **_init_kwargs(config, address, False, [], None)}  # type: ignore[arg-type]


def test_a_private_local_ray_gets_the_quiet_periods_and_the_callers_entries_win() -> None:
    config = for_embedded_model(RuntimeConfig(deployment={"ray_init_kwargs": {
        "num_cpus": 2, "_system_config": {"event_stats": True}}}))
    kwargs = _kwargs(config, None)
    assert kwargs["address"] == "local" and kwargs["num_cpus"] == 2
    assert kwargs["_system_config"] == {**QUIET_LOCAL_RAY, "event_stats": True}


def test_a_cluster_joined_by_address_gets_none() -> None:
    kwargs = _kwargs(for_embedded_model(RuntimeConfig()), "ray://head:10001")
    assert "_system_config" not in kwargs


def test_only_the_embedded_model_sets_it() -> None:
    assert RuntimeConfig().local_ray_system_config == {}
    assert for_embedded_model(RuntimeConfig()).local_ray_system_config == QUIET_LOCAL_RAY
    assert for_embedded_model(RuntimeConfig(local_ray_system_config={})).local_ray_system_config == {}
