"""``Orchestrator(llm=get_model(name))`` picks the embedded model it serves; ``llm=None`` the default one. Which
model is the LLM's to say, not ``RuntimeConfig``'s."""

from __future__ import annotations

import pytest

from agents import Orchestrator, RuntimeConfig
from agents.llm.local import SMOKE_MODEL, get_model
from agents.llm.local.errors import UnknownModelError


def test_unknown_local_model_is_refused_with_the_known_names():
    with pytest.raises(UnknownModelError, match="smollm2-135m"):
        get_model("no-such-model")


@pytest.mark.parametrize("name", [None, SMOKE_MODEL])
def test_llm_none_starts_the_configured_model(monkeypatch, name):
    started = []

    def fake_start(model_name=None, **kw):
        started.append(model_name)
        return "llm", "server"

    monkeypatch.setattr("agents.llm.local.start_local_llm", fake_start)
    orch = Orchestrator.__new__(Orchestrator)
    orch.config = RuntimeConfig()
    model = None if name is None else get_model(name)
    assert orch._start_embedded_llm(model) == "llm" and orch._local_server == "server"
    assert started == [name]  # None: start_local_llm's default (DEFAULT_MODEL)
