"""The error tree users see. Misuse errors (the developer's mistake) are separate from run-time errors.

A task that fails never raises out of ``handle.result()``: its ``TaskResult.error`` explains it. The
exceptions here are for the Orchestrator itself (bad configuration, Ray unreachable, unknown task).
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = [
    "TetrarchError",
    "UsageError",
    "InvalidOutputError",
    "ConfigError",
    "UnknownTaskError",
    "TaskNotWaitingError",
    "TaskLeaseHeldError",
    "ClusterUnavailableError",
    "ClusterVersionMismatchError",
    "CodeShippingError",
    "ActorStartError",
    "OrchestratorClosedError",
    "PackageClashError",
    "TaskTimeoutError",
    "InProcessRuntimeDiedError",
    "InvalidTimeoutError",
    "TextTooLongError",
    "InvalidLLMOutputError",
    "BudgetExceeded",
    "CostBudgetExceeded",
    "UnpricedModelError",
    "RoleUnavailableError",
    "InvalidResponseError",
    "short_repr",
]


def _rebuild(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> BaseException:
    # BaseException.__new__ sets ``args`` without running the subclass's __init__, whose signature
    # (task_id, status, …) differs from the pickled ``args`` (the finished message).
    error = cls.__new__(cls, *args)
    error.__dict__.update(state)
    return error


class TetrarchError(Exception):
    """Base of every error tetrarch raises.

    Every subclass crosses a process boundary intact (Ray pickles errors raised in actors): the same type,
    the same message, the same attributes, whatever its constructor's signature.

    Example:
        >>> import pickle
        >>> e = pickle.loads(pickle.dumps(TaskNotWaitingError("t1", "accepted")))
        >>> type(e).__name__, e.status, str(e) == str(TaskNotWaitingError("t1", "accepted"))
        ('TaskNotWaitingError', 'accepted', True)
    """

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (type(self), self.args, dict(self.__dict__))


class UsageError(TetrarchError):
    """The API was used in a way it does not support; the message says how to use it."""


class ConfigError(UsageError):
    """A configuration value is invalid or inconsistent."""


class UnknownTaskError(UsageError):
    def __init__(self, task_id: str) -> None:
        super().__init__(
            f"no task {task_id!r} in this store; list tasks with `tetrarch tasks` or check RuntimeConfig.store_path"
        )
        self.task_id = task_id


class TaskNotWaitingError(UsageError):
    def __init__(self, task_id: str, status: str) -> None:
        super().__init__(
            f"task {task_id!r} is {status!r}, not waiting for a human; respond() only answers escalated tasks"
        )
        self.task_id = task_id
        self.status = status


class TaskLeaseHeldError(UsageError):
    """``resume`` found the task running in another live runner (its lease was renewed lately): taking it over
    would run its step in flight twice at once."""

    def __init__(self, task_id: str, owner: str, until: float) -> None:
        import datetime as _dt  # only for the message

        when = _dt.datetime.fromtimestamp(until, _dt.timezone.utc).strftime("%H:%M:%S UTC")
        super().__init__(
            f"task {task_id!r} is running in another live runner ({owner}); its lease is live until {when} unless "
            "that runner renews it. Follow it with orch.handle(task_id).result(), or, if that runner is gone for "
            "good, take the task over with orch.resume(task_id, force=True) (its step in flight may run again)")
        self.task_id = task_id
        self.owner = owner
        self.until = until


class ClusterUnavailableError(TetrarchError):
    """Ray could not be started or reached."""


class ActorStartError(ClusterUnavailableError):
    """Ray could not place or start the role actors (missing resources, no free CPUs, dead nodes)."""


class ClusterVersionMismatchError(ClusterUnavailableError):
    """The cluster runs a different Ray or Python version than this driver."""


class CodeShippingError(ClusterUnavailableError):
    """The project or tool code could not be packaged or uploaded to the cluster (runtime_env)."""


class OrchestratorClosedError(UsageError):
    def __init__(self) -> None:
        super().__init__("this Orchestrator was shut down; create a new one")


class PackageClashError(TetrarchError, ImportError):
    """Another installed distribution also provides a top-level ``agents`` package (the OpenAI Agents SDK does):
    the two overwrite or shadow each other, so they cannot share one environment."""


class TaskTimeoutError(TetrarchError, TimeoutError):
    """``handle.result(timeout=...)`` elapsed before the task finished (the task keeps running)."""


class InProcessRuntimeDiedError(TaskTimeoutError):
    """The in-process runtime's event loop stopped (a ``BaseException`` escaped from code it ran): nothing will
    answer this Orchestrator's calls. A timeout error, so code that waits with a timeout handles it too."""

    def __init__(self, cause: str) -> None:
        super().__init__(f"the in-process runtime stopped ({cause}), so no task of this Orchestrator will finish; "
                         "its tasks are checkpointed: create a new Orchestrator on the same store and call "
                         "orch.resume(task_id)")
        self.cause = cause

    def __reduce__(self) -> tuple[Any, ...]:
        # OSError (TimeoutError's base) sets ``args`` in __init__ when a subclass overrides it, so the generic
        # rebuild, which skips __init__, would lose the message.
        return type(self), (self.cause,)


class InvalidTimeoutError(UsageError, TypeError, ValueError):
    """A ``timeout`` that is not a number of seconds (a string, a bool, a negative number, NaN)."""

    def __init__(self, value: str) -> None:
        super().__init__(f"timeout={value} is not a number of seconds; give an int or float >= 0, e.g. "
                         "timeout=5, or None to wait as long as it takes")
        self.value = value


class TextTooLongError(ConfigError):
    """A text the caller sent in (a task, a response) is longer than tetrarch's one limit for any text
    (``planning.text_limits.MAX_TEXT_CHARS``, docs/reliability.md "Text limits")."""

    def __init__(self, what: str, length: int, limit: int) -> None:
        super().__init__(f"the {what} is {length} characters, over the limit of {limit} characters for any one text "
                         "(MAX_TEXT_CHARS, docs/reliability.md); shorten it, or put long material in documents "
                         "(orch.add_documents) and refer to it")
        self.what = what
        self.length = length
        self.limit = limit


class InvalidLLMOutputError(TetrarchError):
    """A role's LLM output stayed invalid after its one repair round (internal; becomes a failed task)."""

    def __init__(self, role: str, error: str, raw: str = "") -> None:
        super().__init__(f"the {role} returned invalid output twice (after one repair round): {error}")
        self.role = role
        self.error = error
        self.raw = raw
        # An ``agents.llm.base.Spend``; not imported: this module is the root every other one may import.
        self.spend: Any = None

    def with_spend(self, spend: Any) -> InvalidLLMOutputError:
        """Attach what the failed calls cost, so budgets stay exact even for failures."""
        self.spend = spend
        return self


class InvalidOutputError(InvalidLLMOutputError):
    """The reviewer's answer did not validate as the task's ``output_type``, also after its one repair round (the
    task escalates; ``error`` names the field)."""


BudgetCap = Literal["token_budget", "max_llm_calls", "max_cost_usd"]


class BudgetExceeded(TetrarchError):
    """A task (or a ReAct run) reached its ``token_budget``, ``max_llm_calls`` or ``max_cost_usd``; ``cap``
    names which (and is the task's ``stopped_reason``)."""

    def __init__(self, cap: BudgetCap, used: int, limit: int) -> None:
        what = "tokens" if cap == "token_budget" else "LLM calls"
        super().__init__(f"the task used {used} {what}, over its {cap} of {limit}; raise RuntimeConfig.{cap} "
                         "or split the task")
        self.cap: BudgetCap = cap
        self.used = used
        self.limit = limit


def _usd(amount: float) -> str:
    # As agents.config.prices.usd: this module imports nothing of the project.
    return "$" + f"{amount:.6f}".rstrip("0").rstrip(".")


class CostBudgetExceeded(BudgetExceeded):
    """A model call was not made: its prompt's cost (``prompt_tokens`` at the model's input price) beside
    what the task had spent would pass ``RuntimeConfig.max_cost_usd``. ``next_call_usd`` is None when no call
    can fit (the task had spent more than the cap: a call's output is known only after it). ``spend``: what
    the role call's earlier model calls cost (an ``agents.llm.base.Spend``), booked by the engine."""

    def __init__(self, role: str, model: str, prompt_tokens: int, next_call_usd: float | None,
                 spent_usd: float, max_cost_usd: float) -> None:
        if next_call_usd is None:
            what = (f"the task has spent {_usd(spent_usd)}, over its max_cost_usd of {_usd(max_cost_usd)}, "
                    "so no further model call was made (any call would add to it)")
        else:
            what = (f"the {role}'s next model call ({model}, {prompt_tokens} prompt tokens) would cost about "
                    f"{_usd(next_call_usd)} beside the {_usd(spent_usd)} the task has spent, passing its "
                    f"max_cost_usd of {_usd(max_cost_usd)}, so it was not made")
        TetrarchError.__init__(self, f"{what}; raise RuntimeConfig.max_cost_usd and submit the task again, "
                                     "or split it into smaller tasks")
        self.cap: BudgetCap = "max_cost_usd"
        self.used, self.limit = spent_usd, max_cost_usd
        self.role, self.model, self.prompt_tokens = role, model, prompt_tokens
        self.next_call_usd, self.spent_usd, self.max_cost_usd = next_call_usd, spent_usd, max_cost_usd
        self.spend: Any = None

    def with_spend(self, spend: Any) -> CostBudgetExceeded:
        """Attach what the role call's earlier model calls cost, so the task's usage stays exact."""
        self.spend = spend
        return self


class UnpricedModelError(CostBudgetExceeded):
    """``max_cost_usd`` is set, and a model call went to (or was answered by) a model the price table does not
    price: the cap cannot be checked, so the call is not made (an unpriced call is not counted as free)."""

    def __init__(self, model: str, role: str = "") -> None:
        shown = f"model {model!r}" if model else ("a model without a name to price (the LLM has no .model, "
                                                  "or the task's earlier calls ran without a price table)")
        who = f"the {role}'s" if role else "a"
        entry = f'"{model}": [input, output]' if model else '"*": [input, output]'
        TetrarchError.__init__(self, (
            f"{who} model call goes to {shown}, which RuntimeConfig.prices does not price, while "
            "max_cost_usd is set: the call was not made, since an unpriced call cannot be checked against "
            f"the cap. Add {entry} (USD per million tokens; \"*\" prices any model) to the price table and "
            "submit the task again"))
        self.cap: BudgetCap = "max_cost_usd"
        self.used, self.limit = 0, 0
        self.role, self.model, self.prompt_tokens = role, model, 0
        self.next_call_usd, self.spent_usd, self.max_cost_usd = None, 0.0, 0.0
        self.spend = None


class RoleUnavailableError(TetrarchError):
    """A role actor (router, planner, reflector) stayed unreachable through every restart the runtime waited
    for: the cluster lost it. The task is checkpointed; ``orch.resume(task_id)`` continues it once Ray has the
    actor back (check ``ray status`` for dead nodes or missing resources)."""

    def __init__(self, role: str, cause: str) -> None:
        super().__init__(f"the {role} actor is unavailable: {cause}; the task is checkpointed — check `ray status` "
                         "and continue it with orch.resume(task_id)")
        self.role = role
        self.cause = cause


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` for a message about the user's value: at most ``limit`` characters, cut with "...".

    >>> short_repr("x" * 100, limit=10)
    "'xxxxxx..."
    """
    shown = repr(value)
    return shown if len(shown) <= limit else shown[:limit - 3] + "..."


class InvalidResponseError(UsageError, TypeError):
    """``respond(task_id, text)`` got an answer that is not text (over the API, MCP or HTTP)."""

    def __init__(self, what: str, value: object) -> None:
        shown = short_repr(value, limit=80)
        super().__init__(f"respond() takes {what} as text (a str), got {type(value).__name__} {shown}; send e.g. "
                         "'approve', or in words what the task should do")
        self.what = what
