"""The groups of ``RuntimeConfig``: where the roles run (``Deployment``), what a running task shows outside its
event log (``Observability``) and how tool calls are retried (``ToolPolicy``); and the flat spellings they had
before (``RuntimeConfig(num_executors=4)``), still taken with a ``DeprecationWarning``.

Example:
    >>> Deployment(num_executors=4).num_executors
    4
    >>> FLAT_SPELLINGS["tool_max_attempts"]
    ('tools', 'max_attempts')
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agents.errors import short_repr

__all__ = ["FLAT_SPELLINGS", "GROUP_ONLY", "Deployment", "Observability", "Strict", "ToolPolicy", "moved_to_groups"]


class Strict(BaseModel):
    """What every part of the config shares: immutable, no unknown names, no value that passes as valid by
    accident."""

    # allow_inf_nan=False: step_timeout_s=inf passed as "positive" and disabled the timeout it names.
    # hide_input_in_errors: pydantic's errors echo the whole input, a store_url's password with it.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, hide_input_in_errors=True)

    @model_validator(mode="before")
    @classmethod
    def _no_bools_as_numbers(cls, data: object) -> object:
        # bool is an int to pydantic's lax mode: max_steps=True meant a cap of 1 step.
        if isinstance(data, Mapping):
            for name, value in data.items():
                f = cls.model_fields.get(str(name))
                if isinstance(value, bool) and f is not None and f.annotation is not bool \
                        and bool not in get_args(f.annotation):
                    raise ValueError(f"{name}={value!r}: a bool is not a number; give {name} a number")
        return data


def _hashable(value: object) -> object:
    """``value`` with its dicts and lists made hashable, so that equal values (``==``) hash alike."""
    if isinstance(value, Mapping):
        return frozenset((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(_hashable(v) for v in value)
    return value


class Deployment(Strict):
    """Where and how the roles run: Ray's namespace, the executor pool, replicas and placement, the code shipped to
    a cluster, and the connections each process keeps to the store. None of it changes what a task answers."""

    namespace: str = "tetrarch"
    num_executors: int = Field(2, ge=1)
    """Size of the executor pool when ``executors_per_node`` is None."""
    executors_per_node: int | None = Field(None, ge=1)
    """If set, this many executors on every worker node that fits ``role_resources["executor"]`` (fewer if
    its resources hold fewer), and the pool grows when nodes join (``watch_nodes``); ``num_executors`` is
    then only used when no node fits yet."""
    executor_max_concurrency: int = Field(64, ge=1)
    role_replicas: int = Field(1, ge=1)
    """Replicas of the router, the planner and the reflector; calls go to the least busy one."""
    roles_in_supervisors: bool | None = None
    """Run the router, planner and reviewer inside each Supervisor shard's process, not as actors of their own:
    a role call is then a function call, not an actor call (with a fast model the actor calls are most of a
    task's CPU: benchmarks/results/throughput.md). Their model calls still wait on the model, not the shard;
    executors stay actors. ``role_replicas``, ``role_resources`` for the roles and their placement are unused.
    None (the default): inside the shards, unless ``role_replicas`` > 1 or ``role_resources`` names the router,
    planner or reflector — what only actors of their own can honour (``roles_in_shards``)."""
    role_resources: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Custom Ray resources per role, e.g. {"planner": {"llm": 1}, "executor": {"worker": 1}}."""
    placement: Literal["spread", "ray"] = "spread"
    """"spread": role replicas and executors go round-robin over the worker nodes that fit their resources
    (soft node affinity: a replica whose node dies restarts elsewhere), keeping the Supervisor's node for the
    Supervisor; "ray": Ray's default scheduler decides (it packs actors onto few nodes)."""
    watch_nodes: bool = True
    """With ``executors_per_node``: start executors on nodes that join while the Orchestrator runs."""
    node_watch_interval_s: float = Field(2.0, gt=0)
    actor_max_restarts: int = Field(-1, ge=-1)
    ship_code: bool | None = None
    """Ship the project packages, the tools' modules and the LLM's module to the cluster in the job's
    runtime_env (``py_modules``). None: when ``address`` is given (a cluster); False: the nodes have
    everything installed already. See agents/cluster/deploy.py."""
    runtime_env: dict[str, object] = Field(default_factory=dict)
    """More runtime_env for the job (``pip``, ``env_vars``, extra ``py_modules``…), merged with the shipped code."""
    ray_init_kwargs: dict[str, object] = Field(default_factory=dict)
    store_pool_size: int = Field(8, ge=1)
    """Connections each process keeps to ``RuntimeConfig.store_url``."""

    @property
    def roles_in_shards(self) -> bool:
        """Where the router, planner and reviewer run: ``roles_in_supervisors`` as given, or by its None rule."""
        if self.roles_in_supervisors is not None:
            return self.roles_in_supervisors
        return self.role_replicas == 1 and not {"router", "planner", "reflector"} & set(self.role_resources)

    def __hash__(self) -> int:
        # pydantic's frozen hash fails on the dict fields; a config is hashed as a cache key.
        return hash(tuple(_hashable(getattr(self, name)) for name in type(self).model_fields))


class Observability(Strict):
    """What a running task shows outside its event log: OpenTelemetry spans (docs/observability.md) and the
    driver's log level."""

    otel: bool = False
    """Emit OpenTelemetry spans while each task runs, in the GenAI agent conventions (``invoke_agent``, ``plan``,
    ``execute_tool``, ``chat``), through the global TracerProvider of the process running the task (needs the
    ``otel`` extra). In-process that is the caller's provider; on Ray, the Supervisor actor's: see ``otel_setup``."""
    otel_content: bool = False
    """Also put tool arguments and results on the spans (``gen_ai.tool.call.arguments`` / ``.result``): they may
    hold personal or secret data, so they are off unless asked for."""
    otel_setup: str | None = None
    """``"module:function"`` called once in the process that runs the tasks, before its first span, to install a
    TracerProvider and exporter there (on Ray the Supervisor actor; the module must be importable on its node)."""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    """Level of the driver's ``tetrarch`` logger and of Ray's own logging when the Orchestrator starts Ray."""

    @model_validator(mode="after")
    def _check(self) -> Observability:
        if self.otel:
            import importlib.util

            if importlib.util.find_spec("opentelemetry") is None:
                raise ValueError("otel=True needs OpenTelemetry: pip install 'tetrarch[otel]'")
        if self.otel_setup is not None and ":" not in self.otel_setup:
            raise ValueError(f"otel_setup={self.otel_setup!r}: give 'module:function', e.g. 'myapp.tracing:setup'")
        return self


class ToolPolicy(Strict):
    """How a step's tool call is retried and how much of its output a prompt gets."""

    max_attempts: int = Field(3, ge=1)
    """Attempts per step for transient tool errors (timeouts, connection errors, 429/5xx)."""
    backoff_s: float = Field(0.2, ge=0)
    backoff_max_s: float = Field(5.0, ge=0)
    max_output_tokens: int = Field(2000, ge=16)
    speculate_reads: bool = True
    """With the plan cache: start a cached plan's read-only, idempotent calls whose arguments the task fixes at
    submit, beside the router, and give a step of the new plan the result when it is the same call (tool and
    arguments); any other is discarded. Never a write, never a model call (``agents.engine.speculation``)."""

    @model_validator(mode="after")
    def _check(self) -> ToolPolicy:
        if self.backoff_max_s < self.backoff_s:
            raise ValueError(f"backoff_max_s={self.backoff_max_s} must be >= backoff_s={self.backoff_s}")
        return self


_GROUPS: dict[str, type[Strict]] = {"deployment": Deployment, "observability": Observability, "tools": ToolPolicy}
_TOOL_NAMES = {"tool_max_attempts": "max_attempts", "tool_backoff_s": "backoff_s",
               "tool_backoff_max_s": "backoff_max_s", "max_tool_output_tokens": "max_output_tokens"}
FLAT_SPELLINGS: dict[str, tuple[str, str]] = {
    **{name: ("deployment", name) for name in Deployment.model_fields},
    **{name: ("observability", name) for name in Observability.model_fields},
    **{old: ("tools", new) for old, new in _TOOL_NAMES.items()}}
"""A field's flat name before the groups (``RuntimeConfig(num_executors=4)``) → (its group, its name there)."""
GROUP_ONLY: frozenset[tuple[str, str]] = frozenset({("tools", "speculate_reads")})
"""Grouped fields added after the groups: they never had a flat spelling."""


def _shown(value: object) -> str:
    # A dict (runtime_env's env_vars, ray_init_kwargs) may hold a secret: a warning goes to logs.
    return "{...}" if isinstance(value, Mapping) else short_repr(value, limit=40)


def _grouped_spelling(data: Mapping[Any, Any], flat: list[str]) -> dict[str, dict[str, object]]:
    """The groups' fields given by their ``flat`` names in ``data``, or a ValueError if a group is given too."""
    groups: dict[str, dict[str, object]] = {}
    for old in flat:
        group, new = FLAT_SPELLINGS[old]
        if group in data:
            raise ValueError(f"RuntimeConfig got both {old}= and {group}=; {old} is now {group}.{new}: give it "
                             f"inside {group}={_GROUPS[group].__name__}({new}=...) and drop {old}=")
        groups.setdefault(group, {})[new] = data[old]
    return groups


def moved_to_groups(data: object, stacklevel: int) -> object:
    """``RuntimeConfig``'s input with the flat spellings of grouped fields moved into their groups, warning once
    with the new spelling; a group given beside a flat name of its own is a ValueError (which one was meant?)."""
    flat = [str(k) for k in data if k in FLAT_SPELLINGS] if isinstance(data, Mapping) else []
    if not flat:
        return data
    assert isinstance(data, Mapping)
    groups = _grouped_spelling(data, flat)
    old = ", ".join(f"{k}={_shown(data[k])}" for k in flat)
    new = ", ".join(f"{g}={_GROUPS[g].__name__}({', '.join(f'{n}={_shown(v)}' for n, v in fields.items())})"
                    for g, fields in groups.items())
    names = ", ".join(_GROUPS[g].__name__ for g in groups)
    warnings.warn(f"RuntimeConfig({old}) is deprecated; write RuntimeConfig({new}) (from agents import {names})",
                  DeprecationWarning, stacklevel=stacklevel + 1)
    return {**{k: v for k, v in data.items() if k not in FLAT_SPELLINGS}, **groups}
