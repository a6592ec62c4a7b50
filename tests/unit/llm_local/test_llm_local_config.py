"""``RuntimeConfig(local_model=...)`` picks the model that ``Orchestrator(llm=None)`` serves."""

from __future__ import annotations

import pydantic
import pytest

from agents import Orchestrator, RuntimeConfig
from agents.llm.local import SMOKE_MODEL


def test_unknown_local_model_is_refused_with_the_known_names():
    with pytest.raises(pydantic.ValidationError, match="smollm2-135m"):
        RuntimeConfig(local_model="no-such-model")


@pytest.mark.parametrize("name", [None, SMOKE_MODEL])
def test_llm_none_starts_the_configured_model(monkeypatch, name):
    started = []

    def fake_start(model_name=None, **kw):
        started.append(model_name)
        return "llm", "server"

    monkeypatch.setattr("agents.llm.local.start_local_llm", fake_start)
    orch = Orchestrator.__new__(Orchestrator)
    orch.config = RuntimeConfig(local_model=name)
    assert orch._start_embedded_llm() == "llm" and orch._local_server == "server"
    assert started == [name]  # None: start_local_llm's default (DEFAULT_MODEL)
