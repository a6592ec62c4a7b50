"""A multi-raylet Ray cluster on this machine (``ray.cluster_utils.Cluster``) that keeps to itself.

``Cluster`` writes its address to /tmp/ray/ray_current_cluster "for convenience in unit testing", and
``ray.init()`` without an address connects to whatever that file names: any other Ray program started on
this machine while the cluster runs would join it. On a shared machine that corrupts other people's runs,
so this wrapper does not publish the address (tetrarch's ``Orchestrator(address=None)`` starts a private
Ray with ``address="local"`` anyway). Nodes get a small object store: raylets here share one /dev/shm.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["add_worker", "local_cluster"]

OBJECT_STORE_BYTES = 150 * 1024 * 1024


@contextlib.contextmanager
def _unpublished() -> Iterator[None]:
    """Neither write nor (at shutdown) delete /tmp/ray/ray_current_cluster: it may belong to someone else."""
    import ray._common.utils as common_utils
    import ray._private.utils as private_utils

    write, reset = private_utils.write_ray_address, common_utils.reset_ray_address
    private_utils.write_ray_address = lambda *args, **kwargs: None
    common_utils.reset_ray_address = lambda *args, **kwargs: None
    try:
        yield
    finally:
        private_utils.write_ray_address, common_utils.reset_ray_address = write, reset


def add_worker(cluster: Any, resources: Mapping[str, float], num_cpus: int = 1) -> Any:
    return cluster.add_node(num_cpus=num_cpus, resources=dict(resources), object_store_memory=OBJECT_STORE_BYTES)


@contextlib.contextmanager
def local_cluster(workers: list[Mapping[str, float]], head_resources: Mapping[str, float] | None = None,
                  head_cpus: int = 1) -> Iterator[tuple[Any, list[Any]]]:
    """A head (no executors: it hosts the driver, the Supervisor and the store) and one raylet per entry of
    ``workers`` with those custom resources. Yields ``(cluster, worker_nodes)``; shuts everything down."""
    from ray.cluster_utils import Cluster

    with _unpublished():
        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": head_cpus, "resources": dict(head_resources or {"head": 1}), "include_dashboard": False,
            "object_store_memory": OBJECT_STORE_BYTES})
    try:
        nodes = [add_worker(cluster, r) for r in workers]
        cluster.wait_for_nodes()
        yield cluster, nodes
    finally:
        with _unpublished():
            cluster.shutdown()
