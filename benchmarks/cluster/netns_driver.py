"""The driver of the multi-host run (benchmarks/cluster/netns_cluster.sh): connects to the cluster by address,
runs a few tasks through the public API with a SimulatedLLM, and prints which node ran each step.

    python -m benchmarks.cluster.netns_driver --address 10.77.0.1:6379
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

from agents import Deployment, Orchestrator, RuntimeConfig
from agents.llm import SimulatedLLM
from agents.llm.simulated import LatencyModel
from benchmarks.cluster.workload import TOOLS, gold_tasks


def _imported_from(module: str) -> str:
    import importlib

    return importlib.import_module(module).__file__ or "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True, help="HEAD_IP:6379 of the cluster")
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    logging.getLogger("tetrarch.cluster").setLevel(logging.INFO)

    import ray

    golds = gold_tasks(args.tasks, args.steps, "where", prefix="netns")
    llm = SimulatedLLM(golds, LatencyModel(ttft_s=0.05, decode_tokens_per_s=2000, prefill_tokens_per_s=50_000))
    config = RuntimeConfig(store_path=Path(tempfile.mkdtemp(prefix="tetrarch-netns-")) / "tasks.db",
                           deployment=Deployment(executors_per_node=2, role_resources={"executor": {"exec": 1}}))
    started = time.monotonic()
    orch = Orchestrator(llm=llm, tools=TOOLS, config=config, address=args.address)  # ships the code (runtime_env)
    print(f"connected and started the actors in {time.monotonic() - started:.1f}s")
    try:
        ip_of = {n["NodeID"]: n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]}
        print("nodes:", ", ".join(f"{ip} ({nid[:8]})" for nid, ip in sorted(ip_of.items(), key=lambda kv: kv[1])))
        home = ray.get(orch._supervisor.ping.remote())
        print(f"supervisor + store on {ip_of[home]}")
        for role, handles in (("router", orch._actors.routers), ("planner", orch._actors.planners),
                              ("reflector", orch._actors.reflectors), ("executor", orch._actors.executors)):
            nodes = ray.get([h.ping.remote() for h in handles])
            print(f"{role:9} on {', '.join(ip_of.get(n, n[:8]) for n in nodes)}")
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        worker = ray.get(orch._actors.executors[0].ping.remote())
        on_worker = ray.remote(num_cpus=0)(_imported_from).options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(worker, soft=False))
        for module in ("agents", "benchmarks.cluster.workload"):
            print(f"{ip_of[worker]} imports {module} from {ray.get(on_worker.remote(module), timeout=120)}")
        # The first task alone (its steps spread over every executor), then the rest at once (the
        # executors are shared: dispatch balances steps over them across tasks).
        first = orch.submit(golds[0].task)
        first.result(timeout=300)
        handles = [first] + [orch.submit(g.task) for g in golds[1:]]
        ok = True
        for h in handles:
            result = h.result(timeout=300)
            ok &= result.status == "accepted"
            print(f"\ntask {h.task_id} {result.status} in {result.timings.wall_s:.2f}s: {result.answer}")
            for e in h.events():
                if e.type == "step_finished":
                    p = e.payload
                    print(f"  step {p.step_id}  {p.executor:11} node {ip_of.get(p.node_id, p.node_id[:8]):10} "
                          f"output {p.output_preview}")
            nodes = {e.payload.node_id for e in h.events() if e.type == "step_finished"}
            print(f"  → steps ran on {len(nodes)} node(s): {', '.join(sorted(ip_of.get(n, n[:8]) for n in nodes))}")
    finally:
        orch.shutdown()
    print("\nall tasks accepted" if ok else "\nSOME TASKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
