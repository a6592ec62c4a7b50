"""``build_llm(spec)``: an LLM from a command-line spec (``tetrarch run --llm …``, ``tetrarch bench --llm …``).

Example:
    >>> build_llm(None) is None     # the Orchestrator starts the embedded default model itself
    True
    >>> build_llm("gpt-4")          # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    agents.errors.ConfigError: --llm 'gpt-4': use 'openai:MODEL' (with --base-url), 'local' or 'local:NAME'
"""

from __future__ import annotations

import atexit
import os
from typing import Any

from agents.errors import ConfigError
from agents.llm.base import LLM

__all__ = ["build_llm"]


def build_llm(spec: str | None, base_url: str | None = None, *, api_key_env: str = "OPENAI_API_KEY",
              start_local: bool = False) -> LLM | None:
    """``None`` / ``"local"`` → the embedded default model: ``None`` (the Orchestrator starts it) unless
    ``start_local`` asks for a running client now (the benchmarks drive ReAct with it too);
    ``"local:NAME"`` → that embedded model, started now; ``"openai:MODEL"`` → ``OpenAIChat`` against
    ``base_url`` (any OpenAI-compatible server). Anything else is a ``ConfigError``: a typo must not silently
    fall back to another model."""
    if spec is None or spec == "local":
        return _start_local(None) if start_local else None
    kind, _, name = spec.partition(":")
    if kind == "openai" and name:
        from agents.llm.openai_chat import OpenAIChat

        return OpenAIChat(model=name, base_url=base_url, api_key=os.environ.get(api_key_env))
    if kind == "local" and name:
        return _start_local(name)
    raise ConfigError(f"--llm {spec!r}: use 'openai:MODEL' (with --base-url), 'local' or 'local:NAME'")


def _start_local(name: str | None) -> Any:
    from agents.llm.local import start_local_llm

    llm, server = start_local_llm(name)
    # The server is a child process: stop it when the command ends, however it ends.
    atexit.register(server.stop)
    return llm
