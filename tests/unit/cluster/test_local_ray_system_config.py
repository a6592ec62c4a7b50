"""``RuntimeConfig.local_ray_system_config`` reaches ``ray.init`` only for a private local Ray: a cluster joined by
address refuses ``_system_config``, and the caller's own ``_system_config`` entries win."""

from __future__ import annotations

from typing import Any

import pytest

import agents.api as api
from agents.config import QUIET_LOCAL_RAY, RuntimeConfig, for_embedded_model


class FakeRay:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs: Any) -> None:
        self.calls.append(kwargs)


def _init_kwargs(monkeypatch: pytest.MonkeyPatch, config: RuntimeConfig, address: str | None) -> dict[str, Any]:
    fake = FakeRay()
    monkeypatch.setattr(api, "_ray", lambda: fake)
    monkeypatch.setattr(api, "_started_ray", False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    orch = api.Orchestrator.__new__(api.Orchestrator)
    orch.config = config.model_copy(update={"ship_code": False})
    orch._connect(address)
    (kwargs,) = fake.calls
    return kwargs


def test_a_private_local_ray_gets_the_quiet_periods_and_the_callers_entries_win(
        monkeypatch: pytest.MonkeyPatch) -> None:
    config = for_embedded_model(RuntimeConfig(ray_init_kwargs={"num_cpus": 2,
                                                               "_system_config": {"event_stats": True}}))
    kwargs = _init_kwargs(monkeypatch, config, None)
    assert kwargs["address"] == "local" and kwargs["num_cpus"] == 2
    assert kwargs["_system_config"] == {**QUIET_LOCAL_RAY, "event_stats": True}


def test_a_cluster_joined_by_address_gets_none(monkeypatch: pytest.MonkeyPatch) -> None:
    kwargs = _init_kwargs(monkeypatch, for_embedded_model(RuntimeConfig()), "ray://head:10001")
    assert "_system_config" not in kwargs


def test_only_the_embedded_model_sets_it() -> None:
    assert RuntimeConfig().local_ray_system_config == {}
    assert for_embedded_model(RuntimeConfig()).local_ray_system_config == QUIET_LOCAL_RAY
    assert for_embedded_model(RuntimeConfig(local_ray_system_config={})).local_ray_system_config == {}
