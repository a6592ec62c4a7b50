"""Public names are forever: this pins them, and every fixed import of DESIGN.md."""

import importlib
import subprocess
import sys

import agents
import agents.llm

FIXED_IMPORTS = """
from agents import Orchestrator, RuntimeConfig, tool
from agents.llm import OpenAIChat, FunctionLLM, SimulatedLLM, LLMRequest, LLMReply, ToolCall
from agents.llm import ModelProfile
from agents.llm.local import start_local_llm
from agents.react import ReActAgent
from prompts import count_tokens
import sys
assert "ray" not in sys.modules, "importing the public API must not import Ray"
"""


def test_agents_exports_are_pinned():
    assert agents.__all__ == ["Orchestrator", "TaskHandle", "TaskResult", "RuntimeConfig", "Deployment",
                              "Observability", "ToolPolicy", "tool"]
    assert agents._WHERE == {"Orchestrator": "agents.api", "TaskHandle": "agents.api",
                             "TaskResult": "agents.results", "RuntimeConfig": "agents.config",
                             "Deployment": "agents.config", "Observability": "agents.config",
                             "ToolPolicy": "agents.config", "tool": "agents.tools"}
    for name in agents.__all__:
        assert getattr(agents, name) is getattr(importlib.import_module(agents._WHERE[name]), name)


def test_llm_exports_are_pinned_and_resolve():
    assert sorted(agents.llm.__all__) == sorted([
        "LLM", "LLMRequest", "LLMReply", "Usage", "Role", "OpenAIChat", "FunctionLLM", "ScriptedLLM", "RecordingLLM",
        "ReplayLLM", "LLMCallRecord", "SimulatedLLM", "LatencyModel", "GoldTask", "LLMError", "LLMTimeoutError",
        "LLMRateLimitError", "LLMConnectionError", "LLMServerError", "LLMResponseError", "LLMStreamTruncated",
        "LLMScriptExhausted", "LLMReplayMismatch", "ToolCall", "LLMToolCallError", "LLMToolsUnsupported",
        "ModelProfile", "Strategy", "HOSTED", "SMALL_LOCAL", "profile_of"])
    for name in agents.llm.__all__:
        assert getattr(agents.llm, name) is not None


def test_every_fixed_import_works_in_a_fresh_interpreter():
    done = subprocess.run([sys.executable, "-c", FIXED_IMPORTS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_every_project_module_declares_all():
    from tests.support.import_graph import _module_name, _source_files

    missing = [_module_name(p) for p in _source_files()
               if _module_name(p).startswith(("agents", "planning", "dag", "prompts"))
               and "__all__" not in p.read_text(encoding="utf-8") and not p.name == "__main__.py"]
    assert missing == []
