"""Runtime configuration: every limit, cap and knob in one validated, immutable object.

Example:
    >>> cfg = RuntimeConfig(max_replans=1, step_timeout_s=30)
    >>> cfg.max_step_retries
    3
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_serializer, model_validator

from planning.policy import DEFAULT_LIMITS, PolicyLimits
from planning.text_limits import MAX_TEXT_CHARS

__all__ = ["BUILTIN_CHECK_SETS", "MAX_TEXT_CHARS", "NUMERIC_QA_CHECKS", "BuiltinCheckSet", "DispatchOptions",
           "ExecutorOptions", "PlannerOptions",
           "PromptOptions", "RouterOptions", "RuntimeConfig", "ToolOptions", "default_store_path", "masked_url"]

BuiltinCheckSet = Literal["sound", "numeric"]
"""A built-in check set (docs/checks.md): "sound" vetoes an answer only where the rule is sound for any task and
shows the rest to the reviewer as notes; "numeric" adds the rules for look-up-and-compute questions over passages
(vetoes that may refuse right answers on other tasks, plan rewrites, figures read by code)."""
BUILTIN_CHECK_SETS: tuple[BuiltinCheckSet, ...] = get_args(BuiltinCheckSet)
NUMERIC_QA_CHECKS: tuple[BuiltinCheckSet, ...] = ("sound", "numeric")
"""The sets for look-up-and-compute questions over passages: what ``make demo`` and the bundled corpus benchmark
run (docs/checks.md says why, with the measurements); ``Orchestrator(llm=None)`` itself keeps the default."""


# Typed views: each consumer gets the slice of RuntimeConfig it reads (a role actor is built from its own
# options, not from all of the config), so what a component depends on is visible in its signature.
@dataclass(frozen=True, slots=True)
class PromptOptions:
    context_token_budget: int = 6000
    checks: tuple[str, ...] = ("sound",)
    """The built-in check sets (``RuntimeConfig.builtin_checks``): which facts the reviewer's prompt shows, and
    whether the roles may read figures or routes by the numeric set's heuristics."""


@dataclass(frozen=True, slots=True)
class RouterOptions:
    prompts: PromptOptions
    min_confidence: float


@dataclass(frozen=True, slots=True)
class PlannerOptions:
    prompts: PromptOptions
    max_steps: int
    stream_plan: bool


@dataclass(frozen=True, slots=True)
class ToolOptions:
    max_attempts: int
    backoff_s: float
    backoff_max_s: float
    max_output_tokens: int


@dataclass(frozen=True, slots=True)
class ExecutorOptions:
    prompts: PromptOptions
    tools: ToolOptions
    documents_path: str | None = None
    """The store file whose user documents (``orch.add_documents``) ``doc_search`` searches beside its corpus."""


@dataclass(frozen=True, slots=True)
class DispatchOptions:
    """What the engine needs to dispatch steps of one plan."""

    step_timeout_s: float
    confirm_replanned_writes: bool
    serial_llm: bool = False
    """The model server answers one request at a time (``ModelProfile.concurrent_calls`` is False)."""
    checks: tuple[str, ...] = ("sound",)
    """The built-in check sets (``RuntimeConfig.builtin_checks``): with "numeric", code may answer a name hop."""
    read_through: bool = False
    """A figure is read through a reasoning step that names a thing (``Strategy.READ_THROUGH`` of the model)."""


def default_store_path() -> Path:
    return Path.home() / ".tetrarch" / "tetrarch.db"


def missing_store(path: Path) -> str | None:
    """Why a read command (tasks, resume, respond, trace, cache) cannot open ``path``, or None. Opening a
    mistyped path would create an empty database there and report nothing, as if the store were empty."""
    if path.is_file():
        return None
    return f"no store at {path}; check the --store path (run, which creates a store, has not used this one yet)"


def masked_url(url: str) -> str:
    """``url`` with its password replaced by ``***``: what a repr, a log or a recorded config may show."""
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    return urlunsplit(parts._replace(netloc=f"{userinfo.split(':', 1)[0]}:***@{host}"))


class RuntimeConfig(BaseModel):
    """Limits and deployment options of an ``Orchestrator``. All fields have safe defaults."""

    # allow_inf_nan=False: step_timeout_s=inf passed as "positive" and disabled the timeout it names.
    # hide_input_in_errors: pydantic's errors echo the whole input, a store_url's password with it.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, hide_input_in_errors=True)

    # --- storage -------------------------------------------------------------------------------
    store_path: Path = Field(default_factory=default_store_path)
    """SQLite file holding checkpoints and the event log (WAL mode). Large outputs go beside it. With
    ``store_url`` the tasks live on the server instead; the user's documents stay in this file."""
    store_url: str | None = None
    """A PostgreSQL server for the task store (``"postgresql://user@host:5432/db"``; a cluster's store, reachable
    from every node): tasks, events, checkpoints, leases, the idempotency journal. None: the SQLite file.
    ``repr`` and the JSON dump (recorded with every task) show it without its password; the store gets it whole."""
    store_pool_size: int = Field(8, ge=1)
    """Connections each process keeps to ``store_url``."""

    # --- routing and reflection policy (docs/architecture.md, "The pure core") -----------------
    router_min_confidence: float = Field(0.6, ge=0.0, le=1.0)
    speculative_planning: bool = True
    """Start the planner together with the router (off the critical path); nothing is dispatched before the
    route is ``plan``, and on any other route the plan is cancelled and its tokens are charged to the planner.
    False: the planner starts after the router (saves the cancelled plan's tokens on direct/clarify/refuse)."""
    max_replans: int = Field(DEFAULT_LIMITS.max_replans, ge=0)
    max_step_retries: int = Field(DEFAULT_LIMITS.max_step_retries, ge=0)
    accept_min_score: int = Field(DEFAULT_LIMITS.accept_min_score, ge=1, le=5)
    accept_min_correctness: int = Field(DEFAULT_LIMITS.accept_min_correctness, ge=1, le=5)
    """Correctness must be at least this (the default 3: "correctness > 2")."""

    # --- termination -----------------------------------------------------------------------------
    max_steps: int = Field(50, ge=1)
    step_timeout_s: float = Field(60.0, gt=0)
    task_timeout_s: float = Field(900.0, gt=0)
    check_timeout_s: float = Field(30.0, gt=0)
    """How long one of the user's answer checks (``Orchestrator(checks=...)``) may run; past it the task fails
    naming the check."""
    token_budget: int | None = Field(500_000, ge=1)
    """Input + output tokens over every LLM call of a task; None disables the cap."""
    max_llm_calls: int | None = Field(60, ge=1)
    max_consecutive_errors: int = Field(6, ge=1)
    loop_window: int = Field(3, ge=2)
    """The same step with the same arguments failing this many times in a row is a loop."""

    # --- tools -----------------------------------------------------------------------------------
    max_tool_output_tokens: int = Field(2000, ge=16)
    tool_max_attempts: int = Field(3, ge=1)
    """Attempts per step for transient tool errors (timeouts, connection errors, 429/5xx)."""
    tool_backoff_s: float = Field(0.2, ge=0)
    tool_backoff_max_s: float = Field(5.0, ge=0)
    confirm_replanned_writes: bool = True
    """Tool output is untrusted: a write/admin tool call planned after the planner has seen tool output (any
    replan) escalates for a human's confirmation, as ``requires_confirmation`` tools always do. The first plan
    is made from the task alone. False: only what each tool declares (for fully trusted tools and data)."""
    workspace_dir: Path | None = None
    """Root of the workspace file tools; None: a directory beside the store."""

    context_token_budget: int = Field(6000, ge=256)
    """Token budget of one assembled prompt; the context layer is trimmed first."""
    stream_plan: bool = True
    builtin_checks: tuple[BuiltinCheckSet, ...] = ("sound",)
    """Which built-in check sets run (docs/checks.md). ("sound",), the default: code vetoes a reviewer's accept
    only where the rule is sound for any task, and shows other findings as notes the reviewer may reject; it
    never rewrites a plan. Add "numeric" for look-up-and-compute question answering over passages: its rules
    read English wordings and pick figures out of passages, veto on them and may rewrite a computing step. ()
    turns the built-in checks off (the user's own ``checks=[...]`` still run)."""

    # --- memory (docs/memory.md) -------------------------------------------------------------------
    session_history_tokens: int = Field(1500, ge=0)
    """Token budget of a session's earlier turns in the router's and planner's prompts (recent turns verbatim,
    older ones summarised, the rest counted); 0: turns do not see each other."""
    plan_cache: bool = False
    """Reuse the plan templates of accepted tasks: a new task of the same shape whose values fill the template
    unambiguously gets its plan by code, without a planner call (``tetrarch cache list|clear``)."""

    # --- deployment ------------------------------------------------------------------------------
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
    roles_in_supervisors: bool = False
    """Run the router, planner and reviewer inside each Supervisor shard's process, not as actors of their own:
    a role call is then a function call, not an actor call (with a fast model the actor calls are most of a
    task's CPU: benchmarks/results/throughput.md). Their model calls still wait on the model, not the shard;
    executors stay actors. ``role_replicas``, ``role_resources`` for the roles and their placement are unused."""
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
    supervisors: int = Field(1, ge=1)
    """Supervisor shards: a task belongs to the shard its id hashes to (``agents.cluster.shards``), any driver
    finds it there. With ``store_url`` the shards spread over the nodes (each reads the same server); with the
    SQLite file they all stay on the driver's node, where the file is."""
    ship_code: bool | None = None
    """Ship the project packages, the tools' modules and the LLM's module to the cluster in the job's
    runtime_env (``py_modules``). None: when ``address`` is given (a cluster); False: the nodes have
    everything installed already. See agents/cluster/deploy.py."""
    runtime_env: dict[str, object] = Field(default_factory=dict)
    """More runtime_env for the job (``pip``, ``env_vars``, extra ``py_modules``…), merged with the shipped code."""
    ray_init_kwargs: dict[str, object] = Field(default_factory=dict)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    """Level of the driver's ``tetrarch`` logger and of Ray's own logging when the Orchestrator starts Ray."""

    # --- OpenTelemetry (docs/observability.md) ------------------------------------------------
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

    @field_serializer("store_url", when_used="json")
    def _store_url_shown(self, url: str | None) -> str | None:
        return None if url is None else masked_url(url)

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, (masked_url(value) if name == "store_url" and isinstance(value, str) else value)

    # ------------------------------------------------------------------------------ typed views
    def store_location(self) -> Path | str:
        """What ``agents.store.Store`` opens: the PostgreSQL URL when given, else the SQLite file."""
        return self.store_url if self.store_url is not None else self.store_path

    def prompt_options(self) -> PromptOptions:
        return PromptOptions(self.context_token_budget, tuple(self.builtin_checks))

    def router_options(self) -> RouterOptions:
        return RouterOptions(self.prompt_options(), self.router_min_confidence)

    def planner_options(self) -> PlannerOptions:
        return PlannerOptions(self.prompt_options(), self.max_steps, self.stream_plan)

    def executor_options(self) -> ExecutorOptions:
        return ExecutorOptions(self.prompt_options(), ToolOptions(
            self.tool_max_attempts, self.tool_backoff_s, self.tool_backoff_max_s, self.max_tool_output_tokens),
            str(self.store_path))

    def dispatch_options(self, *, concurrent_calls: bool = True, read_through: bool = False) -> DispatchOptions:
        """The model's ``concurrent_calls`` and ``read_through`` (``agents.llm.profile.ModelProfile``)."""
        return DispatchOptions(self.step_timeout_s, self.confirm_replanned_writes, not concurrent_calls,
                               tuple(self.builtin_checks), read_through)

    def policy_limits(self, extra_replans: int = 0) -> PolicyLimits:
        """The reflection policy's caps; ``extra_replans`` were granted by a human's answer to an escalation."""
        return PolicyLimits(max_step_retries=self.max_step_retries, max_replans=self.max_replans + extra_replans,
                            accept_min_score=self.accept_min_score,
                            accept_min_correctness=self.accept_min_correctness)

    @model_validator(mode="before")
    @classmethod
    def _known_check_sets(cls, data: object) -> object:
        # pydantic's own message for a Literal names the position, not what to write instead.
        sets = data.get("builtin_checks") if isinstance(data, Mapping) else None
        if sets is not None:
            if isinstance(sets, str):
                raise ValueError(f"builtin_checks={sets!r}: give a tuple of set names, e.g. ({sets!r},)")
            unknown = [s for s in sets if s not in BUILTIN_CHECK_SETS]
            if unknown:
                raise ValueError(f"builtin_checks: unknown check set(s) {', '.join(map(repr, unknown))}; the "
                                 f"built-in sets are {', '.join(map(repr, BUILTIN_CHECK_SETS))} (docs/checks.md)")
            return {**data, "builtin_checks": tuple(dict.fromkeys(sets))}
        return data

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

    @model_validator(mode="after")
    def _check(self) -> RuntimeConfig:
        if not self.store_path.name or self.store_path.is_dir():
            raise ValueError(f"store_path={str(self.store_path)!r} is a directory; give the SQLite file's path, "
                             f"e.g. {str(self.store_path / 'tetrarch.db')!r}")
        if self.store_url is not None and not self.store_url.startswith(("postgresql://", "postgres://")):
            raise ValueError(f"store_url={masked_url(self.store_url)!r} is not a PostgreSQL URL; give "
                             "'postgresql://user@host:5432/db', or leave store_url None and set store_path")
        if self.tool_backoff_max_s < self.tool_backoff_s:
            raise ValueError("tool_backoff_max_s must be >= tool_backoff_s")
        if self.otel:
            import importlib.util

            if importlib.util.find_spec("opentelemetry") is None:
                raise ValueError("otel=True needs OpenTelemetry: pip install 'tetrarch[otel]'")
        if self.otel_setup is not None and ":" not in self.otel_setup:
            raise ValueError(f"otel_setup={self.otel_setup!r}: give 'module:function', e.g. 'myapp.tracing:setup'")
        return self


