"""Runs plan-then-execute (tetrarch on local Ray), ReAct and ReAct+parallel calls on one suite, side by side.

All systems share the LLM (simulated or real), the tools (same seeded latencies) and the prompt machinery.
Runs are interleaved task by task, rotating the order, so drift on a noisy machine hits every system alike.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter

from agents.llm.profile import profile_of
from agents.config import NUMERIC_QA_CHECKS, Deployment, RuntimeConfig
from agents.llm.base import LLM
from agents.llm.simulated import LatencyModel, SimulatedLLM
from agents.react import ReActAgent
from agents.results import TaskResult
from benchmarks.makespan import TimedStep, emission_bound
from benchmarks.suite import (
    MEASURED_BEFORE_MODES,
    SYSTEMS,
    TOOL_CALLING,
    BenchTask,
    load_suite,
    output_correct,
    output_type_for,
    suite_tools_kind,
    task_correct,
)
from benchmarks.world import World, make_tools
from dag.graph import critical_path

__all__ = ["SYSTEMS", "RunRecord", "SuiteRun", "bench_config", "bench_llm", "bench_tools", "plan_times", "react_agent",
           "record_run", "run_suite", "run_tetrarch"]

Answers = Literal["text", "typed"]


@dataclass
class RunRecord:
    suite: str
    task_id: str
    system: str
    rep: int
    status: str
    wall_s: float
    first_dispatch_s: float | None
    llm_calls: int
    input_tokens: int
    output_tokens: int
    correct: bool | None
    steps: int
    makespan_s: float | None
    critical_path_s: float | None
    timeline: list[dict[str, Any]] = field(default_factory=list)
    emission_span_s: float | None = None
    """First plan step emitted → last step finished (tetrarch only)."""
    emission_bound_s: float | None = None
    """The best that span could be given when each step was emitted (``benchmarks.makespan``)."""
    by_role: dict[str, dict[str, int]] = field(default_factory=dict)
    """Role → ``llm_calls``, ``input_tokens``, ``output_tokens`` of this run (tetrarch: router, planner, executor,
    reflector; the ReAct baselines: react). Where the tokens go, per role (empty in results measured before)."""
    phase: str = ""
    """The plan-cache benchmark's half the task belongs to (warmup, heldout); "" elsewhere."""
    plan_cache: str | None = None
    """How the plan cache served the task (the ``routed`` event's ``plan_cache.mode``: filled, adapt), or None."""
    plan_emitted_s: float | None = None
    """Submit → the last step of the final plan emitted (tetrarch only)."""
    output: Any = None
    """A typed run's ``result.output`` as JSON data (what was graded); None in a text run."""
    answer_lead_s: float | None = None
    """The streamed answer's first text (of the stream that counted) → the task's end (tetrarch only)."""
    answer_writing_s: float | None = None
    """That stream's first text → its last piece: how long the reviewer spent writing the answer."""

    def role_tokens(self, role: str) -> int:
        """Input + output tokens of one role in this run (0 when it made no call)."""
        usage = self.by_role.get(role, {})
        return usage.get("input_tokens", 0) + usage.get("output_tokens", 0)


@dataclass
class SuiteRun:
    suite: str
    latency_model: str
    llm: str
    quick: bool
    time_scale: float
    records: list[RunRecord]
    generated_at: str | None = None
    """When the records were measured (kept when a report is re-rendered from its JSON)."""
    split: str = "all"
    """Which half of a split suite ran (dev, heldout) or all of it."""
    tool_calling: dict[str, str] = field(default_factory=lambda: dict(TOOL_CALLING))
    """System → how its model called tools (``suite.TOOL_CALLING``); what an older results file was measured with
    when it does not say (``suite.MEASURED_BEFORE_MODES``)."""
    answers: Answers = "text"
    """``typed``: each task ran with ``output_type`` of its answer's kind and ``result.output`` was graded
    (``suite.output_correct``); ``text``: ``result.answer`` was (``suite.task_correct``)."""

    def summary(self) -> dict[str, Any]:
        systems: dict[str, Any] = {}
        for system in SYSTEMS:
            rs = [r for r in self.records if r.system == system]
            if not rs:
                continue
            checked = [r.correct for r in rs if r.correct is not None]
            systems[system] = {
                "tool_calling": self.tool_calling.get(system, TOOL_CALLING.get(system, "")),
                "tasks": len(rs),
                "median_wall_s": round(statistics.median(r.wall_s for r in rs), 4),
                "median_input_tokens": statistics.median(r.input_tokens for r in rs),
                "median_output_tokens": statistics.median(r.output_tokens for r in rs),
                "median_llm_calls": statistics.median(r.llm_calls for r in rs),
                "accuracy": None if not checked or self.llm == "sim" else round(sum(checked) / len(checked), 4),
                "completed": sum(r.status == "accepted" for r in rs),
                "median_first_dispatch_s": _median([r.first_dispatch_s for r in rs]),
                "median_makespan_over_critical_path": _median(
                    [r.makespan_s / r.critical_path_s for r in rs if r.makespan_s and r.critical_path_s]),
                "median_span_over_emission_bound": _median(
                    [r.emission_span_s / r.emission_bound_s for r in rs if r.emission_span_s and r.emission_bound_s]),
                "by_role": _by_role(rs),
                **_answer_lead(rs),
            }
        return {"suite": self.suite, "latency_model": self.latency_model, "llm": self.llm, "quick": self.quick,
                "time_scale": self.time_scale, "split": self.split, "answers": self.answers, "systems": systems}


def _answer_lead(records: list[RunRecord]) -> dict[str, float | None]:
    """The streamed answer's median lead and writing time, where measured (absent from runs recorded before)."""
    leads = [r.answer_lead_s for r in records if r.answer_lead_s is not None]
    if not leads:
        return {}
    return {"median_answer_lead_s": _median(leads),
            "median_answer_writing_s": _median([r.answer_writing_s for r in records])}


def _by_role(records: list[RunRecord]) -> dict[str, dict[str, float]]:
    """Per role, the median calls and tokens over the runs (a run where the role made no call counts as 0)."""
    roles = sorted({role for r in records for role in r.by_role})
    return {role: {key: statistics.median(r.by_role.get(role, {}).get(key, 0) for r in records)
                   for key in ("llm_calls", "input_tokens", "output_tokens")} for role in roles}


def _median(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(statistics.median(vals), 4) if vals else None


def _timeline(result: TaskResult) -> list[dict[str, Any]]:
    t0 = result.timings.submitted_at
    return [{"step_id": s.step_id, "tool": s.tool_name or "reasoning", "status": s.status,
             "start": round(s.started_at - t0, 4), "end": round(s.finished_at - t0, 4)}
            for s in result.steps if s.started_at is not None and s.finished_at is not None]


def _emission(result: TaskResult, emitted: dict[int, float]) -> tuple[float | None, float | None]:
    """(measured span, emission-aware bound) from the first emitted step of the final plan to its last finish."""
    steps = {s.step_id: s for s in result.steps if s.started_at is not None and s.finished_at is not None}
    if not steps or result.plan is None or not emitted:
        return None, None
    start = min(emitted.values())
    deps = {s.step_id: tuple(s.depends_on) for s in result.plan.steps}
    timed = {sid: TimedStep(emitted.get(sid, start), s.finished_at - s.started_at, deps.get(sid, ()))  # type: ignore[operator]
             for sid, s in steps.items()}
    span = max(s.finished_at for s in steps.values()) - start  # type: ignore[type-var]
    return span, emission_bound(timed, start=start)


def record_run(suite: str, task: BenchTask, system: str, rep: int, result: TaskResult, llm_kind: str,
               emitted: dict[int, float] | None = None, typed: bool = False,
               lead: tuple[float, float] | None = None) -> RunRecord:
    """One run's measurements (accuracy only on a real model: the simulated one writes the gold answer); ``typed``:
    the task ran with an output type, and ``result.output`` is graded instead of the answer's text."""
    timed = [s for s in result.steps if s.started_at is not None and s.finished_at is not None]
    makespan = cp = None
    if timed and result.plan is not None:
        makespan = max(s.finished_at for s in timed) - min(s.started_at for s in timed)
        durations = {s.step_id: s.finished_at - s.started_at for s in timed}
        deps = {s.step_id: [d for d in s.depends_on if d in durations] for s in result.plan.steps
                if s.step_id in durations}
        cp = critical_path(deps, durations)[0] if deps else None
    u = result.usage.total
    by_role = {role: {"llm_calls": x.llm_calls, "input_tokens": x.input_tokens, "output_tokens": x.output_tokens}
               for role, x in result.usage.by_role.items()}
    plan_emitted = max(emitted.values()) - result.timings.submitted_at if emitted else None
    correct = output_correct(task, result.output) if typed else task_correct(task, result.answer)
    return RunRecord(suite, task.id, system, rep, result.status, result.timings.wall_s, result.timings.first_dispatch_s,
                     u.llm_calls, u.input_tokens, u.output_tokens, correct if llm_kind != "sim" else None,
                     len(result.steps), makespan, cp, _timeline(result), *_emission(result, emitted or {}),
                     by_role=by_role, plan_emitted_s=plan_emitted,
                     output=TypeAdapter(Any).dump_python(result.output, mode="json") if typed else None,
                     answer_lead_s=lead[0] if lead else None, answer_writing_s=lead[1] if lead else None)


def bench_llm(tasks: list[BenchTask], llm: LLM | None, latency: LatencyModel,
              time_scale: float, typed: bool = False) -> tuple[LLM, str, str]:
    """(the LLM, its kind for the report, the latency description): ``llm=None`` → SimulatedLLM playing the
    tasks' gold behaviour with ``latency`` scaled by ``time_scale`` (``typed``: its reviewer writes the gold value
    under the output's schema, ``benchmarks.typed_sim``)."""
    if llm is not None:
        kind = getattr(llm, "model", "real")
        return llm, kind, f"real model ({kind})"
    scaled = LatencyModel(latency.ttft_s * time_scale, latency.decode_tokens_per_s / time_scale,
                          latency.prefill_tokens_per_s / time_scale)
    if typed:
        from benchmarks.typed_sim import TypedSimulatedLLM

        return TypedSimulatedLLM(tasks, scaled), "sim", scaled.describe()
    return SimulatedLLM([t.gold for t in tasks], scaled), "sim", scaled.describe()


def bench_tools(suite: str, *, seed: int, scale: float) -> list:
    """The suite's tools: the world's (seeded latencies, scaled) or the shipped corpus's built-ins."""
    if suite_tools_kind(suite) == "builtin":  # the shipped corpus: doc_search and calculator, at their real speed
        from agents.tools.builtins import calculator, doc_search

        return [calculator, doc_search]
    return make_tools(World.load(), seed=seed, time_scale=scale)


def bench_config(store: Path, **overrides: Any) -> RuntimeConfig:
    """The benchmark's runtime configuration (generous caps: a benchmark measures, it does not stop). What differs
    for the embedded model is its LLM's profile, not the config."""
    return RuntimeConfig(store_path=store, max_steps=64, deployment=Deployment(num_executors=2), step_timeout_s=120,
                         task_timeout_s=600, token_budget=None, max_llm_calls=200, **overrides)


def run_suite(suite: str, *, llm: LLM | None = None, latency: LatencyModel = LatencyModel(), quick: bool = False,
              limit: int | None = None, reps: int = 1, seed: int = 0, time_scale: float = 1.0,
              tool_scale: float = 1.0, systems: tuple[str, ...] = SYSTEMS, embedded: bool = False,
              split: str = "all", typed: bool = False, progress=print) -> SuiteRun:
    """``llm=None`` → SimulatedLLM with ``latency`` scaled by ``time_scale``; ``tool_scale`` scales the tools'
    latencies on top (the sensitivity row: plan-then-execute gains more the slower the tools). ``typed``: tetrarch
    alone, each task with ``output_type`` of its answer's kind (``suite.output_type_for``)."""
    import ray

    from agents import Orchestrator

    if typed and tuple(systems) != ("tetrarch",):
        raise ValueError("a typed run is tetrarch's alone (the ReAct baselines have no output type): run it with "
                         "--system tetrarch")
    tasks = load_suite(suite, limit, split)
    llm, llm_kind, latency_desc = bench_llm(tasks, llm, latency, time_scale, typed)
    tools = bench_tools(suite, seed=seed, scale=time_scale * tool_scale)
    store = Path(tempfile.mkdtemp(prefix=f"tetrarch-bench-{suite}-")) / "bench.db"
    # The bundled corpus asks look-up-and-compute questions over passages: it runs as make demo does, with the
    # numeric check set (docs/checks.md); every other suite with the default.
    corpus = suite_tools_kind(suite) == "builtin"
    config = bench_config(store, **({"builtin_checks": NUMERIC_QA_CHECKS} if corpus else {}))
    owns_ray = not ray.is_initialized()
    orch = Orchestrator(llm=llm, tools=tools, config=config)
    if embedded:
        took = warm_every_system(llm, config, orch.tools, tools, systems)
        progress(f"  prefilled every system's static prompts in {took:.1f}s" if took is not None else
                 "  the warm-up failed: each system's first task reads its whole prompt")
    records: list[RunRecord] = []
    try:
        for rep in range(reps):
            for i, task in enumerate(tasks):
                order = systems[i % len(systems):] + systems[:i % len(systems)]
                for system in order:
                    result, emitted, lead = _run_one(system, orch, llm, tools, config, task, typed)
                    records.append(record_run(suite, task, system, rep, result, llm_kind, emitted, typed, lead))
                    r = records[-1]
                    progress(f"  {suite} {task.id} {system:19} {r.status:9} wall {r.wall_s:6.2f}s  "
                             f"calls {r.llm_calls:2}  in {r.input_tokens:6}  out {r.output_tokens:5}")
    finally:
        orch.shutdown()
        if owns_ray:
            ray.shutdown()
    return SuiteRun(suite, latency_desc, llm_kind, quick, time_scale, records, split=split,
                    answers="typed" if typed else "text")


def warm_every_system(llm: LLM, config: RuntimeConfig, tetrarch_tools: list, react_tools: list,
                      systems: tuple[str, ...]) -> float | None:
    """Prefill each system's static prompt once, before any timed run, as ``Orchestrator(llm=None)`` does for its
    own roles at start-up: tetrarch's roles and each ReAct prompt. The benchmark passes its own model client, so
    without this tetrarch's first task would read its roles' instructions in its timed run, and ReAct's system
    prompt would be read again whenever the server's cache had dropped it. Prefilled states are kept over
    conversation steps (``agents/llm/local/_prompt_cache.py``), so each system starts every task from its own."""
    from agents.llm.local.warm import role_prefixes, template_prefix, warm_prefixes
    from agents.tools import ToolRegistry
    from prompts import load_prompt

    prefixes = role_prefixes(profile_of(llm), ToolRegistry(tetrarch_tools).catalog_text(),
                             config.max_steps) if "tetrarch" in systems else []
    for system in SYSTEMS[1:]:
        if system in systems:
            agent = react_agent(system, llm, react_tools, config)
            name = agent.prompt_name()
            template = load_prompt(name)
            prefix = template_prefix("react", template, {"tools": ToolRegistry(react_tools).catalog_text()})
            prefixes.append(replace(prefix, tools=agent.tool_specs() if agent.mode == "native" else None))
    return warm_prefixes(llm, prefixes)


def react_agent(system: str, llm: LLM, tools: list, config: RuntimeConfig) -> ReActAgent:
    """The ReAct baseline a system name stands for: parallel calls or not, native function calling or JSON text."""
    if system not in SYSTEMS[1:]:
        raise ValueError(f"{system!r} is not a ReAct baseline; use one of {SYSTEMS[1:]}")
    return ReActAgent(llm, tools, config, parallel=system.startswith("react_parallel"),
                      tool_calling="json" if TOOL_CALLING[system] == "json" else "native")


def run_tetrarch(orch: Any, task: BenchTask, typed: bool = False
                 ) -> tuple[TaskResult, dict[int, float], str | None, tuple[float, float] | None]:
    """One task on an Orchestrator: the result, when each step of its final plan was emitted (from the event
    log), how the plan cache served it (the ``routed`` event's ``plan_cache.mode``, None: not at all) and the
    streamed answer's ``answer_times``. ``typed``: submitted with ``output_type`` of the task's answer kind."""
    handle = orch.submit(task.text, output_type=output_type_for(task) if typed else None)
    result = handle.result(timeout=900)
    events = list(handle.events())
    return result, *plan_times(events), answer_times(events)


def plan_times(events: list[Any]) -> tuple[dict[int, float], str | None]:
    """When each step of the run's final plan was emitted, and how the plan cache served it (the ``routed`` event's
    ``plan_cache.mode``, None: not at all)."""
    emitted: dict[int, float] = {}
    cache_mode = None
    for event in events:
        if event.type == "routed" and event.payload.plan_cache:
            cache_mode = event.payload.plan_cache.get("mode")
        elif event.type == "replanned":
            emitted = {}
        elif event.type == "plan_step":
            emitted[event.payload.step.step_id] = event.ts
    return emitted, cache_mode


def answer_times(events: list[Any]) -> tuple[float, float] | None:
    """(lead, writing) of the answer stream that counted: its first piece → the task's end, and its first piece →
    its last. None when no answer streamed (or the task ended without accepting)."""
    first = last = end = None
    for event in events:
        if event.type == "answer_reset":
            first = last = None
        elif event.type == "answer_delta":
            first = event.ts if first is None else first
            last = event.ts
        elif event.type == "task_finished":
            end = event.ts if event.payload.status == "accepted" else None
    if first is None or last is None or end is None:
        return None
    return end - first, last - first


def _run_one(system: str, orch: Any, llm: LLM, tools: list, config: RuntimeConfig, task: BenchTask,
             typed: bool = False) -> tuple[TaskResult, dict[int, float], tuple[float, float] | None]:
    """The result, and for tetrarch when each step of its final plan was emitted (from the event log) and the
    streamed answer's ``answer_times``."""
    if system == "tetrarch":
        result, emitted, _, lead = run_tetrarch(orch, task, typed)
        return result, emitted, lead
    return asyncio.run(_react(react_agent(system, llm, tools, config), llm, task.text)), {}, None


async def _react(agent: ReActAgent, llm: LLM, text: str) -> TaskResult:
    try:
        return await agent.run(text)
    finally:
        # Each task gets its own event loop; a client left open would try to close its sockets on a closed loop
        # when collected ("Event loop is closed" tracebacks in the bench log).
        aclose = getattr(llm, "aclose", None)
        if aclose is not None:
            await aclose()


def to_jsonable(run: SuiteRun) -> dict[str, Any]:
    doc = run.summary()
    # Measures a run may not have (a text run's output, the answer's lead where nothing streamed) are left out when
    # absent, so a JSON written before them reads and re-renders as it did.
    optional = {"output", "answer_lead_s", "answer_writing_s"}
    doc["runs"] = [{k: v for k, v in asdict(r).items() if k not in optional or v is not None} for r in run.records]
    doc["generated_at"] = run.generated_at or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return doc


def from_jsonable(doc: dict[str, Any]) -> SuiteRun:
    """The SuiteRun a results JSON was written from (to re-render its report without re-measuring)."""
    modes = {name: x["tool_calling"] for name, x in doc.get("systems", {}).items() if "tool_calling" in x}
    return SuiteRun(doc["suite"], doc["latency_model"], doc["llm"], doc["quick"], doc["time_scale"],
                    [RunRecord(**r) for r in doc["runs"]], doc.get("generated_at"), doc.get("split", "all"),
                    modes or dict(MEASURED_BEFORE_MODES), doc.get("answers", "text"))
