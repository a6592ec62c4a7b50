"""Runtime configuration: every limit, cap and knob in one validated, immutable object.

Top-level fields are what a task is held to (per-run limits, policy, storage, memory); where the roles run, what is
traced and how tools are retried are groups of their own (``Deployment``, ``Observability``, ``ToolPolicy``).

Example:
    >>> cfg = RuntimeConfig(max_replans=1, step_timeout_s=30, deployment=Deployment(num_executors=4))
    >>> cfg.max_step_retries, cfg.deployment.num_executors
    (3, 4)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, field_serializer, field_validator, model_validator

from agents.config.groups import FLAT_SPELLINGS, Deployment, Observability, Strict, ToolPolicy, moved_to_groups
from agents.config.price_file import load_prices
from agents.config.prices import PriceTable, price_table
from agents.errors import ConfigError
from planning.policy import DEFAULT_LIMITS, PolicyLimits
from planning.text_limits import MAX_TEXT_CHARS

__all__ = ["BUILTIN_CHECK_SETS", "FLAT_SPELLINGS", "MAX_TEXT_CHARS", "NUMERIC_QA_CHECKS", "BuiltinCheckSet",
           "Deployment", "DispatchOptions", "ExecutorOptions", "Observability", "PlannerOptions",
           "PriceTable", "PromptOptions", "RouterOptions", "RuntimeConfig", "ToolOptions", "ToolPolicy",
           "default_store_path", "masked_url"]

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


class RuntimeConfig(Strict):
    """Limits, policy, storage and memory of an ``Orchestrator``'s tasks, with its deployment, observability and
    tool retries in groups of their own. All fields have safe defaults."""

    # --- storage (where tasks live, and the Supervisor shards that serve them) ------------------
    store_path: Path = Field(default_factory=default_store_path)
    """SQLite file holding checkpoints and the event log (WAL mode). Large outputs go beside it. With
    ``store_url`` the tasks live on the server instead; the user's documents stay in this file."""
    store_url: str | None = None
    """A PostgreSQL server for the task store (``"postgresql://user@host:5432/db"``; a cluster's store, reachable
    from every node): tasks, events, checkpoints, leases, the idempotency journal. None: the SQLite file.
    ``repr`` and the JSON dump (recorded with every task) show it without its password; the store gets it whole."""
    workspace_dir: Path | None = None
    """Root of the workspace file tools; None: a directory beside the store."""
    supervisors: int = Field(1, ge=1)
    """Supervisor shards: a task belongs to the shard its id hashes to (``agents.cluster.shards``), any driver
    finds it there. With ``store_url`` the shards spread over the nodes (each reads the same server); with the
    SQLite file they all stay on the driver's node, where the file is."""

    # --- policy: routing, planning, reflection (docs/architecture.md, "The pure core") -----------
    router_min_confidence: float = Field(0.6, ge=0.0, le=1.0)
    speculative_planning: bool = True
    """Start the planner together with the router (off the critical path); nothing is dispatched before the
    route is ``plan``, and on any other route the plan is cancelled and its tokens are charged to the planner.
    False: the planner starts after the router (saves the cancelled plan's tokens on direct/clarify/refuse)."""
    stream_plan: bool = True
    max_replans: int = Field(DEFAULT_LIMITS.max_replans, ge=0)
    max_step_retries: int = Field(DEFAULT_LIMITS.max_step_retries, ge=0)
    accept_min_score: int = Field(DEFAULT_LIMITS.accept_min_score, ge=1, le=5)
    accept_min_correctness: int = Field(DEFAULT_LIMITS.accept_min_correctness, ge=1, le=5)
    """Correctness must be at least this (the default 3: "correctness > 2")."""
    confirm_replanned_writes: bool = True
    """Tool output is untrusted: a write/admin tool call planned after the planner has seen tool output (any
    replan) escalates for a human's confirmation, as ``requires_confirmation`` tools always do. The first plan
    is made from the task alone. False: only what each tool declares (for fully trusted tools and data)."""
    builtin_checks: tuple[BuiltinCheckSet, ...] = ("sound",)
    """Which built-in check sets run (docs/checks.md). ("sound",), the default: code vetoes a reviewer's accept
    only where the rule is sound for any task, and shows other findings as notes the reviewer may reject; it
    never rewrites a plan. Add "numeric" for look-up-and-compute question answering over passages: its rules
    read English wordings and pick figures out of passages, veto on them and may rewrite a computing step. ()
    turns the built-in checks off (the user's own ``checks=[...]`` still run)."""

    # --- per-run limits --------------------------------------------------------------------------
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
    context_token_budget: int = Field(6000, ge=256)
    """Token budget of one assembled prompt; the context layer is trimmed first."""
    prices: PriceTable | None = None
    """USD per million input and output tokens by model name, in the format ``tetrarch ui --prices FILE``
    reads: a mapping (``{"gpt-4.1-mini": [0.40, 1.60], "*": [0, 0]}``; ``"*"``: any other model) or that JSON
    file's path. tetrarch ships no prices. With a table, ``result.usage.cost_usd`` is what a task cost."""
    max_cost_usd: float | None = Field(None, gt=0)
    """USD a task may spend; needs ``prices``. Before every model call of every role, the call's prompt at its
    model's input price beside what the task has spent must fit, or the call is not made and the task stops
    (``stopped_reason="max_cost_usd"``, docs/reliability.md "Budgets in money"). None: no cap."""

    # --- memory (docs/memory.md) -------------------------------------------------------------------
    session_history_tokens: int = Field(1500, ge=0)
    """Token budget of a session's earlier turns in the router's and planner's prompts (recent turns verbatim,
    older ones summarised, the rest counted); 0: turns do not see each other."""
    plan_cache: bool = False
    """Reuse the plan templates of accepted tasks: a new task of the same shape whose values fill the template
    unambiguously gets its plan by code, without a planner call (``tetrarch cache list|clear``)."""

    # --- groups (agents/config/groups.py; their fields' old flat spellings still construct, with a warning) ---
    deployment: Deployment = Field(default_factory=Deployment)
    observability: Observability = Field(default_factory=Observability)
    tools: ToolPolicy = Field(default_factory=ToolPolicy)

    @field_validator("prices", mode="before")
    @classmethod
    def _price_table(cls, value: object) -> PriceTable | None:
        if value is None:
            return None
        return load_prices(value) if isinstance(value, str | Path) else price_table(value)

    @field_serializer("prices")
    def _prices_as_the_file(self, table: PriceTable | None) -> dict[str, tuple[float, float]] | None:
        # The dump is the file's own format, so a recorded config validates back into the same table.
        return None if table is None else dict(table.prices)

    @field_serializer("store_url", when_used="json")
    def _store_url_shown(self, url: str | None) -> str | None:
        return None if url is None else masked_url(url)

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, (masked_url(value) if name == "store_url" and isinstance(value, str) else value)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> RuntimeConfig:
        # pydantic's copy does not validate: an old flat name (tool_max_attempts) would be set beside its group
        # and read by nobody.
        unknown = [str(name) for name in update or {} if name not in type(self).model_fields]
        if unknown:
            hint = ""
            if moved := [n for n in unknown if n in FLAT_SPELLINGS]:
                group, new = FLAT_SPELLINGS[moved[0]]
                hint = (f"; {moved[0]} is now {group}.{new}: "
                        f"update={{{group!r}: config.{group}.model_copy(update={{{new!r}: ...}})}}")
            raise ConfigError(f"RuntimeConfig has no field {', '.join(map(repr, unknown))}{hint}")
        return super().model_copy(update=update, deep=deep)

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

    def tool_options(self) -> ToolOptions:
        t = self.tools
        return ToolOptions(t.max_attempts, t.backoff_s, t.backoff_max_s, t.max_output_tokens)

    def executor_options(self) -> ExecutorOptions:
        return ExecutorOptions(self.prompt_options(), self.tool_options(), str(self.store_path))

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
    def _flat_spellings(cls, data: object) -> object:
        # The fields that moved into a group keep their flat spelling for a while, with a warning naming the new;
        # stacklevel 3: past this validator and pydantic's __init__ (or model_validate), to the caller's line.
        return moved_to_groups(data, stacklevel=3)

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

    @model_validator(mode="after")
    def _check(self) -> RuntimeConfig:
        if not self.store_path.name or self.store_path.is_dir():
            raise ValueError(f"store_path={str(self.store_path)!r} is a directory; give the SQLite file's path, "
                             f"e.g. {str(self.store_path / 'tetrarch.db')!r}")
        if self.store_url is not None and not self.store_url.startswith(("postgresql://", "postgres://")):
            raise ValueError(f"store_url={masked_url(self.store_url)!r} is not a PostgreSQL URL; give "
                             "'postgresql://user@host:5432/db', or leave store_url None and set store_path")
        if self.max_cost_usd is not None and self.prices is None:
            raise ValueError(f"max_cost_usd={self.max_cost_usd:g} needs prices to turn tokens into dollars: "
                             'give RuntimeConfig(prices={"MODEL": [USD per 1M input, per 1M output tokens]}, '
                             "...) or prices='prices.json' (tetrarch ships no prices)")
        return self
