"""Task throughput: tasks/s and CPU per task with a zero-latency scripted model and one-step plans of an instant
tool, for 1, 2 and 4 Supervisor shards, on the SQLite store and on a PostgreSQL server (started here, on this
machine, with its default durability settings).

``python -m benchmarks.system.run --only throughput`` merges the result into ``benchmarks/results/system.json``
and writes ``benchmarks/results/throughput.md``. CPU is read from ``/proc`` for the processes the run uses —
the driver, the Supervisor shards, the role actors and executors, the journal, and the PostgreSQL server with
its backends — so a busy machine slows the run but does not add to the per-task figures.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agents import Deployment, Orchestrator, RuntimeConfig
from agents.llm import FunctionLLM
from benchmarks.cluster.workload import noop

__all__ = ["measure", "run_all", "markdown"]

_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int, children: bool = False) -> float:
    """User + system CPU seconds of ``pid`` (with its reaped children's when ``children``); 0 if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if children else 0)
    return ticks / _TICK


def _children(parent: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if int(Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _script() -> FunctionLLM:
    plan = json.dumps({"steps": [{"step_id": 1, "description": "", "tool_name": "noop", "tool_input": {"i": 1},
                                  "depends_on": []}]})
    accept = json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                         "action": "accept", "retry_details": None, "feedback": "", "answer": "ok"})
    route = json.dumps({"route": "plan", "confidence": 1.0, "reason": "", "answer": None})
    return FunctionLLM(lambda r: {"router": route, "planner": plan, "reflector": accept}[r.role])


class _Cpu:
    """CPU seconds of every process one run uses, by group (in-process: the driver is every group)."""

    def __init__(self, orch: Orchestrator, pg_postmaster: int | None) -> None:
        self.groups: dict[str, list[int]] = {"supervisors": [], "roles_and_executors": []}
        if orch.runtime == "ray":
            import ray

            actors = orch._actors
            self.groups = {
                "supervisors": ray.get([s.pid.remote() for s in actors.supervisors]),
                "roles_and_executors": ray.get([a.pid.remote() for a in [*actors.routers, *actors.planners,
                                                                         *actors.reflectors, *actors.executors]]),
            }
        self._postmaster = pg_postmaster

    def read(self) -> dict[str, float]:
        out = {name: sum(_cpu_s(p) for p in pids) for name, pids in self.groups.items()}
        out["driver"] = time.process_time()
        if self._postmaster is not None:
            out["postgres"] = _cpu_s(self._postmaster, children=True) + sum(
                _cpu_s(p) for p in _children(self._postmaster))
        return out


ROLES = ("actors", "in_supervisors", "inprocess")
"""Where the roles run in the tuned rows: their own actors, inside each Supervisor shard
(``roles_in_supervisors``), or everything in the driver's process (``runtime="inprocess"``, no Ray)."""

DEFAULT_RUNTIMES = ("ray", "inprocess")
"""The default rows: ``RuntimeConfig()`` as a user gets it (only its store in a temporary directory) on each
runtime, budgets on, every task submitted from one thread through ``Orchestrator.submit``."""


def measure_default(store_path: Path, runtime: str, tasks: int = 1000) -> dict[str, Any]:
    """One default row: ``tasks`` submitted one after another from this thread, then every result read."""
    with Orchestrator(llm=_script(), tools=[noop], config=RuntimeConfig(store_path=store_path),
                      runtime=runtime) as orch:  # type: ignore[arg-type]
        for h in [orch.submit(f"warm-up {i}") for i in range(10)]:
            h.result(timeout=120)
        cpu = _Cpu(orch, None)
        before, load = cpu.read(), os.getloadavg()[0]
        t0 = time.perf_counter()
        handles = [orch.submit(f"task {i}") for i in range(tasks)]
        submitted = time.perf_counter() - t0
        results = [h.result(timeout=600) for h in handles]
        wall = time.perf_counter() - t0
        after = cpu.read()
    spent = {k: (after[k] - before[k]) * 1000 / tasks for k in after}
    return {"runtime": runtime, "tasks": tasks, "accepted": sum(r.status == "accepted" for r in results),
            "submit_s": round(submitted, 3), "wall_s": round(wall, 3), "tasks_per_s": round(tasks / wall, 1),
            "cpu_ms_per_task": {k: round(v, 3) for k, v in spent.items()},
            "cpu_ms_per_task_total": round(sum(spent.values()), 3), "load_1min_at_start": round(load, 2)}


def run_default(tasks: int = 1000, repeats: int = 3) -> list[dict[str, Any]]:
    """The default rows, runtimes alternating, ``repeats`` runs each."""
    root = Path(tempfile.mkdtemp(prefix="tetrarch-throughput-default-"))
    return [measure_default(root / f"{runtime}-{r}.db", runtime, tasks)
            for r in range(repeats) for runtime in DEFAULT_RUNTIMES]


def measure(store: dict[str, Any], shards: int, tasks: int, pg_postmaster: int | None = None,
            submitters: int = 8, roles: str = "actors", **deployment: Any) -> dict[str, Any]:
    """One run: ``tasks`` submitted at once (``submitters`` threads), timed until the last result is read;
    ``deployment``: ``Deployment`` fields over this run's defaults."""
    where = Deployment(**{"num_executors": 2, "roles_in_supervisors": roles == "in_supervisors", **deployment})
    config = RuntimeConfig(**store, supervisors=shards, token_budget=None, max_llm_calls=None, deployment=where)
    runtime = "inprocess" if roles == "inprocess" else "ray"
    with Orchestrator(llm=_script(), tools=[noop], config=config, runtime=runtime) as orch:
        for h in [orch.submit(f"warm-up {i}") for i in range(10 * shards)]:
            h.result(timeout=120)
        cpu = _Cpu(orch, pg_postmaster)
        before, load = cpu.read(), os.getloadavg()[0]
        t0 = time.perf_counter()
        with ThreadPoolExecutor(submitters) as pool:
            handles = list(pool.map(lambda i: orch.submit(f"task {i}"), range(tasks)))
            results = list(pool.map(lambda h: h.result(timeout=600), handles))
        wall = time.perf_counter() - t0
        after = cpu.read()
    spent = {k: (after[k] - before[k]) * 1000 / tasks for k in after}
    return {"backend": "postgresql" if "store_url" in store else "sqlite", "roles": roles, "shards": shards,
            "tasks": tasks,
            "accepted": sum(r.status == "accepted" for r in results), "wall_s": round(wall, 3),
            "tasks_per_s": round(tasks / wall, 1), "cpu_ms_per_task": {k: round(v, 3) for k, v in spent.items()},
            "cpu_ms_per_task_total": round(sum(spent.values()), 3), "load_1min_at_start": round(load, 2)}


def on_local_cluster(workers: int, shards: int, tasks: int) -> dict[str, Any]:
    """``measure`` on a ``ray.cluster_utils.Cluster``: a head (driver, shard 0, roles) and ``workers`` raylets with
    one executor each; the store on a local PostgreSQL, so shards 1… go to the workers."""
    import ray

    from benchmarks.cluster.local_cluster import local_cluster
    from benchmarks.pg_local import start_postgres

    server = start_postgres(fast=False)
    try:
        with local_cluster([{"exec": 1} for _ in range(workers)], head_cpus=2) as (cluster, _nodes):
            ray.init(address=cluster.address, namespace="throughput", log_to_driver=False, configure_logging=False)
            try:
                postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
                result = measure({"store_url": server.new_database()}, shards, tasks, postmaster,
                                 num_executors=workers, role_resources={"executor": {"exec": 1}})
            finally:
                ray.shutdown()
    finally:
        server.stop()
    return {**result, "nodes": workers + 1}


def run_all(shard_counts: Sequence[int] = (1, 2, 4), tasks: int = 500, repeats: int = 1,
            roles: Sequence[str] = ROLES, default_tasks: int = 1000) -> dict[str, Any]:
    from benchmarks.pg_local import PostgresUnavailable, start_postgres

    default = run_default(default_tasks)
    runs = []
    root = Path(tempfile.mkdtemp(prefix="tetrarch-throughput-"))
    try:
        server = start_postgres(fast=False)
    except PostgresUnavailable as exc:
        server, skipped = None, str(exc)
    else:
        skipped = None
    try:
        for where in roles:
            for shards in (1,) if where == "inprocess" else shard_counts:
                for r in range(repeats):
                    runs.append(measure({"store_path": root / f"{where}-s{shards}-{r}.db"}, shards, tasks,
                                        roles=where))
                    if server is not None:
                        postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
                        runs.append(measure({"store_url": server.new_database()}, shards, tasks, postmaster,
                                            roles=where))
    finally:
        if server is not None:
            server.stop()
    best = max(runs, key=lambda r: r["tasks_per_s"])
    return {"default": default, "runs": runs, "postgres_skipped": skipped, "best": {k: best[k] for k in ("backend", "roles", "shards",
                                                                                     "tasks_per_s")},
            "median_cpu_ms_per_task": statistics.median(r["cpu_ms_per_task_total"] for r in runs),
            "cores": os.cpu_count(), "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def markdown(result: dict[str, Any]) -> list[str]:
    md = ["# Task throughput (one-step plans, zero-latency scripted model, instant tool)", "",
          f"Generated {result['generated_at']} by `python -m benchmarks.system.run --only throughput` on "
          f"{result['cores']} cores shared with other work (the 1-minute load average at each run's start is "
          "in the table: the machine was not quiet)"
          + (f"; the default rows re-measured {result['default_generated_at']} (`--only default`)."
             if "default_generated_at" in result else "."), "",
          "Roles: `actors` = router, planner and reviewer as actors of their own "
          "(`Deployment(roles_in_supervisors=False)`); `in_supervisors` = `Deployment(roles_in_supervisors=True)` "
          "(what the default does when no role replicas or role resources are asked for); `inprocess` = "
          "`Orchestrator(runtime=\"inprocess\")`, no Ray (all CPU is the driver's).", "",
          *_default_table(result),
          "## Tuned configurations", "",
          "500 tasks submitted from 8 threads, `token_budget=None, max_llm_calls=None`, two executors.", "",
          "| store | roles | shards | tasks | tasks/s | CPU ms/task: total | driver | Supervisors | roles + "
          "executors | PostgreSQL | load at start |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["runs"]:
        c = r["cpu_ms_per_task"]
        md.append(f"| {r['backend']} | {r.get('roles', 'actors')} | {r['shards']} | {r['tasks']} ({r['accepted']} accepted) | {r['tasks_per_s']}"
                  f" | {r['cpu_ms_per_task_total']:.2f} | {c['driver']:.2f} | {c['supervisors']:.2f} | "
                  f"{c['roles_and_executors']:.2f} | {c.get('postgres', 0):.2f} | {r['load_1min_at_start']} |")
    if result.get("postgres_skipped"):
        md += ["", f"PostgreSQL runs skipped: {result['postgres_skipped']}"]
    return md


def _default_table(result: dict[str, Any]) -> list[str]:
    """The default rows: this code's, and the code before (``default_before``) when it was measured beside it."""
    rows = [("before " + r.get("code", ""), r) for r in result.get("default_before", [])]
    rows += [("this code", r) for r in result.get("default", [])]
    if not rows:
        return []
    md = ["## Default configuration", "",
          "`RuntimeConfig()` as a user gets it (budgets on, two executors, one SQLite shard; only the store in a "
          "temporary directory), 1,000 tasks submitted one after another from one thread through "
          "`Orchestrator.submit`, then every result read. Targets: ≥ 150 tasks/s on Ray, ≥ 400 in-process. "
          "CPU ms per task by process: in-process every figure is the driver's (one process).", "",
          "| code | runtime | tasks | submits took (s) | tasks/s | CPU ms/task: total | driver | Supervisor | "
          "role actors + executors | load at start |", "|---|---|---|---|---|---|---|---|---|---|"]
    for code, r in rows:
        c = r["cpu_ms_per_task"]
        md.append(f"| {code} | {r['runtime']} | {r['tasks']} ({r['accepted']} accepted) | {r['submit_s']} | "
                  f"{r['tasks_per_s']} | {r['cpu_ms_per_task_total']:.2f} | {c['driver']:.2f} | "
                  f"{c['supervisors']:.2f} | {c['roles_and_executors']:.2f} | {r['load_1min_at_start']} |")
    return md + [""]
