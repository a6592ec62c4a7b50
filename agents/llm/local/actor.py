"""A Ray actor that owns the embedded llama.cpp server on one node and reports where it listens.

The server binds 127.0.0.1 only (this project never opens a port to the network), so its URL is
reachable from processes on the **same node**. On a single machine — a laptop, CI, or a local
``ray.cluster_utils.Cluster`` — that is every actor. On a multi-host cluster, pin the actors that call
the model (router, planner, executors, reflector) to the node holding the ``llm`` resource, or point
``OpenAIChat`` at a real endpoint (vLLM, Ollama, a hosted API) instead.

The actor is a plain class; ``spawn_llama_server_actor`` is the one place that applies ``ray.remote``.
It starts the server in ``__init__``, so an actor restarted by Ray (``max_restarts``) serves again.
The server process watches its parent and exits if the actor's worker is killed.

Example:
    >>> handle, url = spawn_llama_server_actor("smollm2-135m", resources={})   # doctest: +SKIP
    >>> url.startswith("http://127.0.0.1:")                                     # doctest: +SKIP
    True
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents.llm.local.catalog import get_model
from agents.llm.local.errors import LocalModelError
from agents.llm.local.provision import model_path
from agents.llm.local.server import LlamaServer

__all__ = ["LLM_RESOURCE", "LlamaServerActor", "MissingResourceError", "spawn_llama_server_actor"]

LLM_RESOURCE = "llm"
"""Custom resource marking the node that hosts the model (``ray start --resources '{"llm": 1}'``)."""


class MissingResourceError(LocalModelError):
    def __init__(self, resources: Mapping[str, float]) -> None:
        self._ctor_args = (dict(resources),)
        super().__init__(
            f"no node of this Ray cluster offers {dict(resources)}; start the model node with "
            f"`ray start --resources '{{\"{LLM_RESOURCE}\": 1}}'` (or ray.init(resources=...)), "
            "or pass resources={} to place the server anywhere")
        self.resources = dict(resources)


class LlamaServerActor:
    """Owns one ``LlamaServer`` for the lifetime of the actor."""

    def __init__(self, name: str | None = None, cache_dir: str | None = None,
                 server_kw: Mapping[str, Any] | None = None) -> None:
        model = get_model(name)
        kwargs = {"n_ctx": model.n_ctx, **dict(server_kw or {})}
        self._model = model.name
        self._server = LlamaServer(model_path(model.name, cache_dir), **kwargs).start()

    def base_url(self) -> str:
        return self._server.base_url

    def info(self) -> dict[str, Any]:
        """Where the server runs: enough for a caller to check it is on the same node."""
        return {"model": self._model, "base_url": self._server.base_url, "pid": self._server.pid,
                "hostname": socket.gethostname(), "actor_pid": os.getpid(), "node_id": _node_id()}

    def stop(self) -> None:
        self._server.stop()


def _node_id() -> str:
    try:
        import ray

        return ray.get_runtime_context().get_node_id()
    except Exception:  # noqa: BLE001 - outside a Ray worker
        return socket.gethostname()


def spawn_llama_server_actor(name: str | None = None, *, cache_dir: Path | str | None = None,
                             resources: Mapping[str, float] | None = None, actor_name: str | None = None,
                             max_restarts: int = 1, ready_timeout_s: float = 180.0,
                             **server_kw: Any) -> tuple[Any, str]:
    """Create a ``LlamaServerActor`` and wait until its server answers; returns ``(handle, base_url)``.

    ``resources`` defaults to ``{"llm": 1}``; pass ``{}`` on a cluster without that resource. The actor
    reserves no CPU (``num_cpus=0``): the server's threads share the node with the executors, and
    reserving 2 CPUs would starve a 2-core machine of executor slots.

    Raises:
        MissingResourceError: no node offers ``resources`` (fails fast instead of hanging unscheduled).
        ModelNotInstalledError: the model is not pulled on this machine.
    """
    import ray

    wanted = {LLM_RESOURCE: 1.0} if resources is None else dict(resources)
    available = ray.cluster_resources()
    if any(available.get(key, 0.0) < amount for key, amount in wanted.items()):
        raise MissingResourceError(wanted)
    model = get_model(name)
    options: dict[str, Any] = {"num_cpus": 0, "resources": wanted, "max_restarts": max_restarts}
    if actor_name:
        options["name"] = actor_name
    remote_cls = ray.remote(LlamaServerActor).options(**options)
    handle = remote_cls.remote(model.name, None if cache_dir is None else str(cache_dir), server_kw)
    return handle, ray.get(handle.base_url.remote(), timeout=ready_timeout_s)
