"""Which small-model strategy code a run executes: every function call into it is recorded.

The strategy code (``agents.llm.profile.Strategy``, docs/architecture.md "Model profiles") is whole modules whose only
use is a strategy, and named functions of modules that hold general code too. A profile hook (``sys.setprofile`` and
``threading.setprofile``) sees every Python call; a call whose code object is strategy code is recorded — in this
process (``StrategyTrace``), or, on Ray, in every worker process through ``worker_hook`` (a ``runtime_env``
``worker_process_setup_hook``), appended to a file per process as it happens.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

STRATEGY_MODULES = (
    "planning.blind_calls",        # Strategy.BLIND_CALLS
    "planning.rejected",           # Strategy.REJECTED_CALLS
    "planning.loops",              # Strategy.LOOP_CUT
    "planning.settled_route",      # ModelProfile.stop_at_plan
    "planning.grounded_question",  # Strategy.CLARIFY_CHECK
    "planning.written_answer",     # Strategy.ANSWER_AGAIN
    "agents.roles.figure_fit",     # Strategy.FIGURE_FIT
    "agents.roles.repair_scope",   # Strategy.REPAIR_SCOPE
    "agents.engine.hops",          # Strategy.READ_THROUGH, and the numeric set's name hops
)
"""Modules that exist only for a strategy."""

STRATEGY_FUNCTIONS = (
    "agents.roles.plan_repair:BlindCheck",          # Strategy.BLIND_CALLS
    "agents.roles.router:Router._confirmed",        # Strategy.CLARIFY_CHECK
    "agents.roles.router:Router._settled_plan",     # ModelProfile.stop_at_plan
    "agents.roles.reflector:Reflector.answer_again",  # Strategy.ANSWER_AGAIN
    "agents.roles.executor:Executor._fit_numbers",  # Strategy.FIGURE_FIT
    "agents.roles.executor:Executor._through_names",
    "agents.roles.executor:Executor._read_figures",
    "agents.checks.sound:result_notes",             # Strategy.REVIEW_NOTES: the sound set's notes
    "agents.checks.sound:omitted_final",            # Strategy.FINAL_FIGURE_LOOK
    "agents.checks.sound:final_figure",
)
"""Strategy code inside modules that also hold general code (``module:qualname``; a class means all its methods)."""


def _codes_of(obj: Any) -> Iterator[types.CodeType]:
    if isinstance(obj, type):
        for value in vars(obj).values():
            yield from _codes_of(getattr(value, "__func__", value))
    elif inspect.isfunction(obj):
        yield from _nested(obj.__code__)


def _nested(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _nested(const)


def _resolve(spec: str) -> Any:
    module, _, qualname = spec.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def strategy_code() -> tuple[frozenset[str], frozenset[types.CodeType]]:
    """The strategy modules' files and the strategy functions' code objects (nested functions included)."""
    files = frozenset(os.path.realpath(inspect.getfile(importlib.import_module(m))) for m in STRATEGY_MODULES)
    codes = frozenset(c for spec in STRATEGY_FUNCTIONS for c in _codes_of(_resolve(spec)))
    return files, codes


def _profiler(record: Callable[[str], None]) -> Callable[..., None]:
    files, codes = strategy_code()
    seen_files: dict[str, bool] = {}

    def profile(frame: types.FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code.co_name == "<module>":  # importing a module runs its body, not its strategy
            return
        inside = seen_files.get(code.co_filename)
        if inside is None:
            inside = seen_files[code.co_filename] = os.path.realpath(code.co_filename) in files
        if inside or code in codes:
            record(f"{os.path.relpath(code.co_filename)}:{code.co_firstlineno} {code.co_qualname}")

    return profile


class StrategyTrace:
    """``with StrategyTrace() as trace: ...`` records every call into strategy code in this process, every thread
    started inside the block included; ``trace.calls`` lists them (``file:line qualname``)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def _record(self, call: str) -> None:
        with self._lock:
            self.calls.append(call)

    def __enter__(self) -> StrategyTrace:
        profile = _profiler(self._record)
        threading.setprofile(profile)
        sys.setprofile(profile)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


def worker_hook(out_dir: Path) -> Callable[[], None]:
    """A Ray ``worker_process_setup_hook``: each worker records its calls into ``out_dir/<pid>.txt``."""
    from ray import cloudpickle

    # By value: a Ray worker need not have the tests' directory on its path.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    target = str(out_dir)

    def install() -> None:
        path = os.path.join(target, f"{os.getpid()}.txt")
        Path(target, f"{os.getpid()}.started").touch()  # proof the hook ran: an empty trace is no proof alone

        def record(call: str) -> None:
            with open(path, "a", encoding="utf-8") as f:
                f.write(call + "\n")

        profile = _profiler(record)
        threading.setprofile(profile)
        sys.setprofile(profile)

    return install


def recorded(out_dir: Path) -> list[str]:
    return [line for f in sorted(Path(out_dir).glob("*.txt")) for line in f.read_text().splitlines()]
